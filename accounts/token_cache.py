"""A short-lived in-process memory of personal tokens looked up: hash of the token -> its user
and token rows, for ``CHAN_TOKEN_CACHE_SECONDS`` (5 s by default; 0: off, as in the test suite).

Every API request authenticates (``accounts.authentication``); without this each one reads the
token and its user (one query) before doing anything else. With it a bot's requests read them
once every few seconds.

What may change under a remembered token, and when the change is seen:

* revoked (``token_revoke``), its player banned or unbanned (``user_ban``, ``user_unban``): this
  process forgets it at once (``token_cache_forget``, after the commit); another process after
  at most ``CHAN_TOKEN_CACHE_SECONDS``;
* expired: checked on every hit against the remembered ``expires_at``;
* anything else about the player (its name, its flags): after at most the same seconds.

Each hit hands out copies of the rows, so that a request's changes to its ``request.user`` stay
its own.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from django.conf import settings
from django.utils import timezone

_KEPT = 10_000
_entries: OrderedDict[str, tuple[float, Any, Any]] = OrderedDict()  # hash -> (until, user, token)
_lock = threading.Lock()


def _seconds() -> float:
    return float(getattr(settings, "CHAN_TOKEN_CACHE_SECONDS", 0) or 0)


def token_cache_get(key_hash: str) -> tuple[Any, Any] | None:
    """Copies of the (user, token) remembered for this token's hash, or None."""
    if _seconds() <= 0:
        return None
    with _lock:
        entry = _entries.get(key_hash)
    if entry is None:
        return None
    until, user, token = entry
    expires = token.expires_at
    if time.monotonic() >= until or (expires is not None and expires <= timezone.now()):
        with _lock:
            if _entries.get(key_hash) is entry:
                del _entries[key_hash]
        return None
    token = _copied(token)
    token.user = _copied(user)
    return token.user, token


def token_cache_entry(key_hash: str) -> tuple[float, Any, Any] | None:
    """The entry remembered for this token's hash as it is kept, ``(until, user, token)``, or
    None: for :mod:`games.live.rearm`, which only reads it and checks by identity that the entry
    a re-arm was made under is still the one remembered. No copies, no expiry check."""
    if _seconds() <= 0:
        return None
    with _lock:
        return _entries.get(key_hash)


def _copied(row: Any) -> Any:
    """``copy.copy(row)`` as ``Model.__getstate__`` makes it (its own ``_state`` and fields
    cache), without pickling's round trip through the app registry and the version check: that
    was 4 % of an authenticated request's CPU (docs/decisions/lean-move.md)."""
    new = object.__new__(type(row))
    state = row.__dict__.copy()
    model_state = object.__new__(type(row._state))
    model_state.__dict__.update(row._state.__dict__)
    model_state.fields_cache = dict(row._state.fields_cache)
    state["_state"] = model_state
    new.__dict__.update(state)
    return new


def token_cache_put(key_hash: str, user: Any, token: Any) -> None:
    seconds = _seconds()
    if seconds <= 0:
        return
    entry = (time.monotonic() + seconds, _copied(user), _copied(token))
    with _lock:
        _entries[key_hash] = entry
        _entries.move_to_end(key_hash)
        while len(_entries) > _KEPT:
            _entries.popitem(last=False)


def token_cache_touched(key_hash: str, last_used_at: Any) -> None:
    """The token's use was just recorded: remember when, so that hits do not record it again."""
    with _lock:
        entry = _entries.get(key_hash)
        if entry is not None:
            entry[2].last_used_at = last_used_at


def token_cache_forget(*, token_id: int | None = None, user_id: int | None = None) -> None:
    """Forget a token (by id) or every token of a player (by id) in this process."""
    with _lock:
        gone = [
            k
            for k, (_, user, token) in _entries.items()
            if token.pk == token_id or (user_id is not None and user.pk == user_id)
        ]
        for k in gone:
            del _entries[k]


def token_cache_clear() -> None:
    with _lock:
        _entries.clear()
