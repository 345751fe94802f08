"""Waiting in a thread, where there is no ASGI layer to wait without one (WSGI: Django's test
client, ``runserver``): the feed's and the tables' counterparts of
``hand_store.hand_wait_for_seq``. No database connection is held between two looks."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.db import connection

from games.selectors.feed import feed_head

POLL_SECONDS = 0.1


def _release_connection() -> None:
    if not connection.in_atomic_block:
        connection.close()


def feed_wait(*, user_id: int, after: int, timeout: float, poll: float = POLL_SECONDS) -> None:
    """Block until the player's feed has an entry after ``after`` or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        head = feed_head(user_id=user_id)
        _release_connection()
        now = time.monotonic()
        if head > after or now >= deadline:
            return
        time.sleep(min(poll, deadline - now))


def change_wait(*, etag: Callable[[], str], seen: str, timeout: float, poll: float = 0.25) -> None:
    """Block until ``etag()`` is no longer ``seen`` or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        now = time.monotonic()
        if now >= deadline:
            return
        time.sleep(min(poll, deadline - now))
        changed = etag() != seen
        _release_connection()
        if changed:
            return
