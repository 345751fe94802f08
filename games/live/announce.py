"""Announcing on commit: a topic moved to a new seq (``PUBLISH`` on the feed's channel).

Topics: a hand is its id (an ``int``: the message ``"<hand id>:<seq>"`` of before the feed),
a player's feed ``"f<user id>"`` (seq: its last entry), a table ``"t<table id>"``, an arena
``"a<tournament id>"`` and the lobby ``"lobby"`` (seq: the time of the announcement in µs — a table's waiters re-read it,
the number only has to rise). Best effort: a committed fact stays committed whatever Redis
does; the subscription's reads of PostgreSQL catch up (``subscription``).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction

from core import metrics

logger = logging.getLogger(__name__)

Topic = int | str

_REDIS_TIMEOUTS = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}
_TOPIC_RE = re.compile(r"^(?:\d{1,18}|f\d{1,18}|t\d{1,18}|a\d{1,18}|lobby)$")

_publishers: dict[str, redis.Redis] = {}
_publishers_lock = threading.Lock()


def feed_topic(user_id: int) -> str:
    return f"f{user_id}"


def table_topic(table_id: int) -> str:
    return f"t{table_id}"


def arena_topic(tournament_id: int) -> str:
    """An arena's standings and state (``GET /tournaments/{id}/standings?wait=N``)."""
    return f"a{tournament_id}"


def lobby_topic() -> str:
    return "lobby"


def _publisher_client() -> redis.Redis | None:
    url = settings.HAND_FEED_URL
    if not url:
        return None
    with _publishers_lock:
        if url not in _publishers:
            _publishers[url] = redis.Redis.from_url(url, **_REDIS_TIMEOUTS)
        return _publishers[url]


def feed_channel() -> str:
    """The channel: ``chan:hand-seq:<database name>``, or ``HAND_FEED_CHANNEL``. A Redis
    channel belongs to the whole server, whatever the database number in the URL: two
    deployments (or two test runs) sharing a Redis server but not a database have hands with
    the same ids, and one's announcements would wake the other's polls with a seq from another
    world. The database's name keeps them apart; every process of one deployment reads it
    from the same ``DATABASE_URL``."""
    return settings.HAND_FEED_CHANNEL or f"chan:hand-seq:{connection.settings_dict['NAME']}"


@dataclass
class _Batch:
    """What the block of :func:`announcements_batched` running in this context will send."""

    messages: list[str] = field(default_factory=list)
    # cache keys to raise to a seq (key, seq, timeout), in the messages' round trip
    raises: list[tuple[str, int, int]] = field(default_factory=list)


_batched: ContextVar[_Batch | None] = ContextVar("chan_announcements", default=None)


@contextmanager
def announcements_batched() -> Iterator[None]:
    """Hold the announcements made inside the block (by the commit hooks of a transaction it
    wraps) and send them together when it ends: one round trip to Redis for all of them,
    where a move's commit made one for its hand and one for each player's feed. Wrap the
    ``transaction.atomic()`` block, so that its commit hooks run inside; a transaction that
    rolls back runs no hook and announces nothing. Nested: the outermost block sends."""
    if _batched.get() is not None:
        yield
        return
    token = _batched.set(_Batch())
    try:
        yield
    finally:
        batch = _batched.get() or _Batch()
        _batched.reset(token)
        _publish(batch.messages, batch.raises)


def _publishes_on_cache() -> bool:
    """Whether the announcements go to the cache's own Redis (HAND_FEED_URL is CACHE_URL, the
    default), whose client can raise a cache key and publish in one round trip."""
    location = settings.CACHES["default"].get("LOCATION")
    return (
        bool(settings.HAND_FEED_URL)
        and location == settings.HAND_FEED_URL
        and hasattr(cache, "set_if_higher_publishing")
    )


def cache_raise_batched(key: str, seq: int, timeout: int) -> bool:
    """Inside :func:`announcements_batched`, when the announcements go to the cache's own
    Redis: raise cache key ``key`` to ``seq`` (``cache.set_if_higher``, for ``timeout``
    seconds) in the round trip of the block's announcements, before them, and return True.
    Else False: the caller raises it itself. (A move's commit raised its hand's published seq
    in a round trip of its own: 9 % of the move's time under bench/api_bench.py.)"""
    batch = _batched.get()
    if batch is None or not _publishes_on_cache():
        return False
    batch.raises.append((key, seq, timeout))
    return True


def announce(topic: Topic, seq: int) -> None:
    """Publish that ``topic`` is at ``seq`` (after the commit; inside
    :func:`announcements_batched`, when its block ends). Without Redis there is nothing to do:
    the subscriptions read PostgreSQL. A failure is logged and counted, never raised."""
    message = f"{topic}:{seq}"
    batch = _batched.get()
    if batch is not None:
        batch.messages.append(message)
    else:
        _publish([message])


def _publish(messages: list[str], raises: list[tuple[str, int, int]] | None = None) -> None:
    if raises:
        try:
            cache.set_if_higher_publishing(raises, feed_channel(), messages)  # type: ignore[attr-defined]
            return
        except Exception:
            keys = [key for key, _, _ in raises]
            logger.warning("could not raise %s", ", ".join(keys), exc_info=True)
            metrics.cache_failed(use="publish")
            # Without the keys the long polls read the rows instead of outdated seqs.
            with suppress(Exception):
                cache.delete_many(keys)
    client = _publisher_client() if messages else None
    if client is None:
        return
    channel = feed_channel()
    try:
        if len(messages) == 1:
            client.publish(channel, messages[0])
        else:
            with client.pipeline(transaction=False) as pipe:
                for message in messages:
                    pipe.publish(channel, message)
                pipe.execute()
    except redis.RedisError:
        logger.warning("could not announce %s", ", ".join(messages), exc_info=True)
        metrics.cache_failed(use="hand_feed")


def hand_feed_publish(hand_id: int, seq: int) -> None:
    """Announce that ``hand_id`` is at ``seq`` (called on commit by ``hand_store``)."""
    announce(hand_id, seq)


def announce_on_commit(topic: Topic, seq: int | None) -> None:
    """Announce ``topic`` at ``seq`` once the transaction commits (``None``: the time in µs)."""

    def publish() -> None:
        announce(topic, time.time_ns() // 1000 if seq is None else seq)

    transaction.on_commit(publish, robust=True)


def parse_announcement(message: bytes | str) -> tuple[Topic, int] | None:
    """``"<topic>:<seq>"`` → (topic, seq); a hand's topic is its id as an int. None if garbled."""
    if isinstance(message, bytes):
        message = message.decode("ascii", "replace")
    topic, _, seq = message.rpartition(":")
    if not (_TOPIC_RE.match(topic) and seq.isdigit() and len(seq) <= 20):
        return None
    return (int(topic) if topic.isdigit() else topic), int(seq)
