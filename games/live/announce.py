"""Announcing on commit: a topic moved to a new seq (``PUBLISH`` on the feed's channel).

Topics: a hand is its id (an ``int``: the message ``"<hand id>:<seq>"`` of before the feed),
a player's feed ``"f<user id>"`` (seq: its last entry), a table ``"t<table id>"``, an arena
``"a<tournament id>"`` and the lobby ``"lobby"`` (seq: the time of the announcement in µs — a table's waiters re-read it,
the number only has to rise). Best effort: a committed fact stays committed whatever Redis
does; the subscription's reads of PostgreSQL catch up (``subscription``).

Sent off the committing thread: one announcer thread per process (:class:`_Announcer`) takes
what each commit announces and sends it, so a move's answer does not wait for Redis (the
round trip was 13 % of a move's time under bench/api_bench.py). What piles up while it sends
goes in its next round trip, each topic once at its highest seq and each cache key raised once
to its highest: under load, one round trip for several commits. The order that matters is
kept: a topic's seq and a key's value only rise, and a round trip raises its keys before it
publishes.

A move also announces itself whole (:func:`announce_record`, ``hand_store``: the event and what
it changed on the hand's row), in a message of its own, ``"m<hand id>:<seq> <JSON>"``, sent
before the round trip's seq entries and never merged: a web worker that keeps the hand
carries its copy on by it and makes the hand's next move in one flight, where it had to read
the row and the events it missed first (``hand_store.hand_move_heard``). Its text is made in
the announcer's thread. A round trip's announcements go as one message, ``"<topic>:<seq>"`` entries
separated by spaces (:data:`ENTRIES_PER_MESSAGE` at most): every subscriber — each web worker —
hears every message, and redis-py's subscriber spends about the same on a message of one entry
as on one of twenty (a move's five messages, its hand's and its players' feeds', were 6 % of a
web worker's CPU under load: docs/decisions/lean-move.md).
:func:`announcements_sent` waits until it has sent all that was handed to it (a process's exit
waits for it too, two seconds at most).

A move answered on the event loop (``games.api.move_direct``) holds its commit's
announcements (:func:`announcements_held`) and hands them to the announcer once its answer is
written: waking the announcer's thread as the move's thread ends had it take the interpreter
as the event loop would go on with the answer (0.1 ms of a move's hop back under
bench/api_bench.py). The others hear of the move that much later; the mover has its answer.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import redis
from django.conf import settings
from django.core.cache import caches
from django.db import connection, transaction

from core import metrics

logger = logging.getLogger(__name__)

Topic = int | str

_REDIS_TIMEOUTS = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}
ENTRIES_PER_MESSAGE = 64  # (a message stays under 2 kB whatever piled up)
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


def _publisher_client(url: str) -> redis.Redis | None:
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


class Record:
    """A message sent as it is, whole and in its order, not merged with the seq entries:
    ``make()`` gives its text, in the announcer's thread (:func:`announce_record`)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], str]) -> None:
        self.make = make


Message = str | Record  # a seq entry "<topic>:<seq>", or a record


@dataclass
class _Batch:
    """What the block of :func:`announcements_batched` running in this context will send."""

    messages: list[Message] = field(default_factory=list)
    # cache keys to raise to a seq (key, seq, timeout), in the messages' round trip
    raises: list[tuple[str, int, int]] = field(default_factory=list)


_batched: ContextVar[_Batch | None] = ContextVar("chan_announcements", default=None)


class HeldAnnouncements:
    """What :func:`announcements_held`'s block would have handed to the announcer, until
    :meth:`release`; what it announces after that goes at once. Thread-safe: a request's
    event loop may release it while the request's thread still announces (a cancelled
    request)."""

    __slots__ = ("_lock", "_queued", "_released")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queued: list[Queued] = []
        self._released = False

    def hold(
        self, route: _Route, messages: list[Message], raises: list[tuple[str, int, int]]
    ) -> None:
        with self._lock:
            if not self._released:
                self._queued.append((route, messages, raises))
                return
        _announcer.submit(route, messages, raises)

    def release(self) -> None:
        """Hand what was held to the announcer, and from now on each announcement at once
        (releasing again does nothing more)."""
        with self._lock:
            queued, self._queued = self._queued, []
            self._released = True
        for route, messages, raises in queued:
            _announcer.submit(route, messages, raises)


_held: ContextVar[HeldAnnouncements | None] = ContextVar("chan_announcements_held", default=None)


@contextmanager
def announcements_held(held: HeldAnnouncements | None = None) -> Iterator[HeldAnnouncements]:
    """Hold what is announced inside the block (the commits' announcements, batched or not) in
    ``held`` (a new one if None) until the caller releases it
    (:meth:`HeldAnnouncements.release`), which it must do whatever happens — the block raised,
    the request was cancelled: what a committed transaction announces is never dropped."""
    held = held if held is not None else HeldAnnouncements()
    token = _held.set(held)
    try:
        yield held
    finally:
        _held.reset(token)


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
        _send(batch.messages, batch.raises)


def _publishes_on_cache() -> bool:
    """Whether the announcements go to the cache's own Redis (HAND_FEED_URL is CACHE_URL, the
    default), whose client can raise a cache key and publish in one round trip."""
    location = settings.CACHES["default"].get("LOCATION")
    return (
        bool(settings.HAND_FEED_URL)
        and location == settings.HAND_FEED_URL
        and hasattr(caches["default"], "set_if_higher_publishing")
    )


@dataclass(frozen=True)
class _Route:
    """Where announcements go, resolved in the thread that made them (its settings, its
    database's name, its cache), so that the announcer's thread sends them there."""

    url: str
    channel: str
    cache: Any  # the default cache (it raises the keys: ``set_if_higher_publishing``)


def _route() -> _Route:
    url = settings.HAND_FEED_URL
    return _Route(url, feed_channel() if url else "", caches["default"])


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
    _message_add(f"{topic}:{seq}")


def announce_record(make: Callable[[], str]) -> None:
    """Publish the message ``make()`` gives (made in the announcer's thread), whole, before
    the seq entries sent in the same round trip (the module docstring); as :func:`announce`."""
    _message_add(Record(make))


def _message_add(message: Message) -> None:
    batch = _batched.get()
    if batch is not None:
        batch.messages.append(message)
    else:
        _send([message], [])


def _send(messages: list[Message], raises: list[tuple[str, int, int]]) -> None:
    """Hand ``messages`` and ``raises`` to this process's announcer (nothing to send, or no
    Redis to send it to: nothing; the keys are raised only on the feed's Redis)."""
    if settings.HAND_FEED_URL and (messages or raises):
        held = _held.get()
        if held is not None:
            held.hold(_route(), messages, raises)
        else:
            _announcer.submit(_route(), messages, raises)


def _publish(
    messages: list[Message],
    raises: list[tuple[str, int, int]] | None = None,
    route: _Route | None = None,
) -> None:
    """Send: the keys raised and the messages published in one round trip when the feed is
    on the cache's Redis, else the messages alone; the records first, each in a message of its
    own. Runs in the announcer's thread."""
    route = route or _route()
    records = _records_made([m for m in messages if isinstance(m, Record)])
    entries = [m for m in messages if isinstance(m, str)]
    sent = records + _joined(entries)
    if raises:
        try:
            route.cache.set_if_higher_publishing(raises, route.channel, sent)
            return
        except Exception:
            keys = [key for key, _, _ in raises]
            logger.warning("could not raise %s", ", ".join(keys), exc_info=True)
            metrics.cache_failed(use="publish")
            # Without the keys the long polls read the rows instead of outdated seqs.
            with suppress(Exception):
                route.cache.delete_many(keys)
    client = _publisher_client(route.url) if sent else None
    if client is None:
        return
    channel = route.channel
    try:
        if len(sent) == 1:
            client.publish(channel, sent[0])
        else:
            with client.pipeline(transaction=False) as pipe:
                for message in sent:
                    pipe.publish(channel, message)
                pipe.execute()
    except redis.RedisError:
        said = [record.partition(" ")[0] for record in records] + entries
        logger.warning("could not announce %s", ", ".join(said), exc_info=True)
        metrics.cache_failed(use="hand_feed")


def _records_made(records: list[Record]) -> list[str]:
    """The records' texts, in their order (one that fails to be made is logged and left out)."""
    made = []
    for record in records:
        try:
            made.append(record.make())
        except Exception:
            logger.exception("could not make a record to announce")
    return made


def _joined(entries: list[str]) -> list[str]:
    """``entries`` (``"<topic>:<seq>"`` each) as the messages that carry them: up to
    :data:`ENTRIES_PER_MESSAGE` a message, separated by spaces, in their order."""
    step = ENTRIES_PER_MESSAGE
    return [" ".join(entries[i : i + step]) for i in range(0, len(entries), step)]


Queued = tuple[_Route, list[Message], list[tuple[str, int, int]]]


def _merged(queued: list[Queued]) -> list[Queued]:
    """What was queued, one entry per route (in the order the routes came): its records, all
    of them in their order, then each topic once, at its highest seq, in the order topics
    first came; each key once, at its highest value (and longest timeout)."""
    merged: dict[_Route, tuple[list[Message], dict[str, int], dict[str, tuple[int, int]]]] = {}
    for route, messages, raises in queued:
        records, topics, keys = merged.setdefault(route, ([], {}, {}))
        for message in messages:
            if isinstance(message, Record):
                records.append(message)
                continue
            topic, _, seq = message.rpartition(":")
            topics[topic] = max(topics.get(topic, -1), int(seq))
        for key, value, timeout in raises:
            old_value, old_timeout = keys.get(key, (value, timeout))
            keys[key] = (max(old_value, value), max(old_timeout, timeout))
    return [
        (
            route,
            [*records, *(f"{topic}:{seq}" for topic, seq in topics.items())],
            [(key, value, timeout) for key, (value, timeout) in keys.items()],
        )
        for route, (records, topics, keys) in merged.items()
    ]


class _Announcer:
    """This process's announcer: a daemon thread that sends what :meth:`submit` hands it, all
    that piled up in one go (:func:`_merged`). Started by the first submit of a process (a
    forked child starts its own: what its parent had queued is the parent's to send)."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        self._idle = threading.Condition(self._lock)
        self._queue: list[Queued] = []
        self._sending = False
        self._pid = 0

    def submit(
        self, route: _Route, messages: list[Message], raises: list[tuple[str, int, int]]
    ) -> None:
        with self._lock:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                threading.Thread(target=self._run, name="chan-announcer", daemon=True).start()
            self._queue.append((route, messages, raises))
            self._work.notify()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._queue:
                    self._work.wait()
                queued, self._queue = self._queue, []
                self._sending = True
            try:
                for route, messages, raises in _merged(queued):
                    _publish(messages, raises, route)
            except Exception:  # _publish logs Redis's failures; this is anything else
                logger.exception("the announcer could not send %d batches", len(queued))
            finally:
                with self._lock:
                    self._sending = False
                    if not self._queue:
                        self._idle.notify_all()

    def drained(self, timeout: float) -> bool:
        with self._lock:
            return self._idle.wait_for(lambda: not self._queue and not self._sending, timeout)


_announcer = _Announcer()
os.register_at_fork(after_in_child=_announcer._reset)
atexit.register(_announcer.drained, 2.0)


def announcements_sent(timeout: float = 5.0) -> bool:
    """Wait until this process's announcer has sent (or failed to send) all it was handed;
    False if ``timeout`` seconds passed first."""
    return _announcer.drained(timeout)


def hand_feed_publish(hand_id: int, seq: int) -> None:
    """Announce that ``hand_id`` is at ``seq`` (called on commit by ``hand_store``)."""
    announce(hand_id, seq)


def announce_on_commit(topic: Topic, seq: int | None) -> None:
    """Announce ``topic`` at ``seq`` once the transaction commits (``None``: the time in µs)."""

    def publish() -> None:
        announce(topic, time.time_ns() // 1000 if seq is None else seq)

    transaction.on_commit(publish, robust=True)


def parse_announcements(message: bytes | str) -> list[tuple[Topic, int]]:
    """A message's entries (``"<topic>:<seq>"`` separated by spaces: :func:`_joined`; one
    entry is a message of before) as (topic, seq), in their order; a garbled entry is left
    out."""
    if isinstance(message, bytes):
        message = message.decode("ascii", "replace")
    found = []
    for entry in message.split(" ", ENTRIES_PER_MESSAGE)[:ENTRIES_PER_MESSAGE]:
        parsed = parse_announcement(entry)
        if parsed is not None:
            found.append(parsed)
    return found


def parse_announcement(message: bytes | str) -> tuple[Topic, int] | None:
    """``"<topic>:<seq>"`` → (topic, seq); a hand's topic is its id as an int. None if garbled."""
    if isinstance(message, bytes):
        message = message.decode("ascii", "replace")
    topic, _, seq = message.rpartition(":")
    if not (_TOPIC_RE.match(topic) and seq.isdigit() and len(seq) <= 20):
        return None
    return (int(topic) if topic.isdigit() else topic), int(seq)
