"""The process's one subscription: every committed change announces ``(topic, seq)``
(``games.live.announce``: a hand's seq, a player's feed, a table, the lobby), and each web
process watches the announcements once for all of its waiting long polls and streams.

* **Watching** (:class:`Subscription`, one per process and event loop): one Redis subscription for
  the whole process, not one per request, and a table of waiters by hand. An announcement wakes
  every waiter of that hand whose ``after_seq`` it passes, at once, after awaiting
  :attr:`HandFeed.prepare` (at most ``PREPARE_SECONDS``) with their tags.
* **Without Redis** (the embedded default, ``make run``) or while the subscription is down, the
  feed reads the seqs of the hands and feeds that have waiters from PostgreSQL every
  ``HAND_FEED_POLL_SECONDS`` (one query per process, whatever the number of waiters); after a
  reconnection it reads them once more, so an announcement lost meanwhile delays a waiter by one
  poll at most, never until its timeout. (A table's waiters have no seq to read: without
  Redis they are answered at their timeout, with the table as it is then.)

No database connection is held while waiting: the reads run in a worker thread that gives its
connection back after each query.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any

import redis.asyncio as aioredis
from django.conf import settings
from django.db import close_old_connections
from django.db.models import Max

from core import metrics
from core.threads import in_thread
from games.hand_store import hand_move_heard
from games.live.announce import Topic, feed_channel, parse_announcements
from games.models import FeedEntry, Hand

logger = logging.getLogger(__name__)

PREPARE_SECONDS = 1.0  # the longest an announcement's waiters wait for HandFeed.prepare
_LATEST_SIZE = 10_000  # hands whose latest seq a process remembers (for waiters that register late)


# ----------------------------------------------------------------------------------- watching


def _topic_seqs(topics: list[Topic]) -> dict[Topic, int]:
    """The seqs of these topics as PostgreSQL has them: a hand's seq (-1 for a hand that no
    longer exists: wake its waiters), a player's last feed entry. Tables and the lobby have
    none (left out)."""
    hands = [t for t in topics if isinstance(t, int)]
    users = [int(t[1:]) for t in topics if isinstance(t, str) and t.startswith("f")]
    seqs: dict[Topic, int] = {}
    try:
        if hands:
            found = dict(Hand.objects.filter(pk__in=hands).values_list("pk", "seq"))
            seqs.update({hand_id: found.get(hand_id, -1) for hand_id in hands})
        if users:
            heads = (
                FeedEntry.objects.filter(user_id__in=users)
                .values("user_id")
                .annotate(head=Max("seq"))
                .values_list("user_id", "head")
            )
            found = dict(heads)
            seqs.update({f"f{u}": found.get(u, 0) for u in users})
    finally:
        close_old_connections()  # kept for CONN_MAX_AGE, or given back to the pool
    return seqs


_hand_seqs = _topic_seqs  # (its name before the topics)


def _wake(due: list[tuple[asyncio.Future[int], Any]], seq: int) -> None:
    for future, _ in due:
        if not future.done():
            future.set_result(seq)


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.warning("preparing the answers failed", exc_info=task.exception())


class Subscription:
    """The per-process table of waiting long polls and streams by topic (a hand's id, a
    player's feed, a table), fed by one Redis subscription (or by reads of PostgreSQL, see the
    module docstring). Runs in one event loop."""

    def __init__(self, *, url: str, poll_seconds: float) -> None:
        self.url = url
        self.poll_seconds = poll_seconds
        # hand -> {future: (after_seq, tag)}: the waiters, removed in O(1) when they go.
        self._waiters: dict[int, dict[asyncio.Future[int], tuple[int, Any]]] = {}
        # Awaited with the tags of the waiters an announcement is about to wake, before they
        # wake (at most PREPARE_SECONDS): LongPollApp renders their answers there.
        self.prepare: Callable[[int, int, list[Any]], Awaitable[None]] | None = None
        self._preparing: set[asyncio.Task[None]] = set()
        self._latest: OrderedDict[int, int] = OrderedDict()
        self._subscribed = asyncio.Event()
        # Raised whenever the feed may have missed an announcement (a lost subscription, a
        # failed read): a waiter that saw the same epoch at its start and at its end knows the
        # hand's seq without asking PostgreSQL (:meth:`seq_if_known`).
        self.epoch = 0
        self._opened = 0  # how many times the subscription opened (a read from before is stale)
        self._started: asyncio.Task[None] | None = None
        self._poller: asyncio.Task[None] | None = None

    # -- the waiters' side

    async def start(self) -> None:
        """Start watching (once) and return when announcements are being received, or when
        the feed has fallen back to reading PostgreSQL."""
        self.start_soon()
        if self.url and not self._subscribed.is_set():
            with suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._subscribed.wait()), timeout=1.0)

    def start_soon(self) -> None:
        """Start watching (once), without waiting for the subscription: a process that makes
        moves hears the moves of the others (their records: ``hand_store.hand_move_heard``)
        whether or not it has waiters."""
        if self._started is None:
            self._started = asyncio.create_task(self._run(), name="hand-feed")
            self._poller = asyncio.create_task(self._poll_while_unsubscribed(), name="hand-poll")

    def wait_future(self, hand_id: int, after_seq: int, tag: Any = None) -> asyncio.Future[int]:
        """A future that resolves with the hand's seq once it is above ``after_seq`` (``tag``
        goes to :attr:`prepare`). Give it to :meth:`forget` when done with it, resolved or not;
        its owner may resolve it itself (a timeout), the feed then leaves it alone."""
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        latest = self._latest.get(hand_id)
        if latest is not None and latest > after_seq:
            future.set_result(latest)
        else:
            self._waiters.setdefault(hand_id, {})[future] = (after_seq, tag)
        return future

    def forget(self, hand_id: int, future: asyncio.Future[int]) -> None:
        waiters = self._waiters.get(hand_id)
        if waiters is not None and waiters.pop(future, None) is not None and not waiters:
            del self._waiters[hand_id]

    def seq_if_known(self, hand_id: int, seq: int, epoch: int) -> int | None:
        """The hand's seq, known to be ``seq`` or the latest announced since the waiter's start
        at ``epoch``, if the feed has missed nothing since; else None (ask PostgreSQL)."""
        if epoch != self.epoch or (self.url and not self._subscribed.is_set()):
            return None
        return max(seq, self._latest.get(hand_id, -1))

    def seq_known(self, hand_id: int) -> int | None:
        """The hand's seq as the last announcement heard on the open subscription said it, or
        None: no subscription (no Redis, or down), or nothing heard of the hand since it opened
        (what was heard before is forgotten when it opens or drops). An announcement made
        before a request came may still be on its way (it wakes a waiter when it arrives); one
        the announcer failed to send is never heard: a caller that trusts this without a read
        must read once in a while (games.live.rearm: at the wait's timeout)."""
        if not self.url or not self._subscribed.is_set():
            return None
        return self._latest.get(hand_id)

    @property
    def waiting(self) -> int:
        return sum(len(w) for w in self._waiters.values())

    # -- the announcements' side

    def announce(self, hand_id: int, seq: int) -> None:
        """The hand is at ``seq``: wake its waiters that ``seq`` passes."""
        if self._latest.get(hand_id, -1) < seq or seq == -1:
            self._latest[hand_id] = seq
            self._latest.move_to_end(hand_id)
            while len(self._latest) > _LATEST_SIZE:
                self._latest.popitem(last=False)
        waiters = self._waiters.get(hand_id)
        if not waiters:
            return
        due = [
            (future, tag)
            for future, (after_seq, tag) in waiters.items()
            if seq > after_seq or seq == -1 or future.done()
        ]
        for future, _ in due:
            del waiters[future]
        if not waiters:
            del self._waiters[hand_id]
        due = [(future, tag) for future, tag in due if not future.done()]
        if not due:
            return
        if self.prepare is None or seq == -1:
            _wake(due, seq)
            return
        task = asyncio.ensure_future(self._prepare_then_wake(hand_id, seq, due))
        self._preparing.add(task)  # (a task nobody references may be collected mid-way)
        task.add_done_callback(self._preparing.discard)

    async def _prepare_then_wake(
        self, hand_id: int, seq: int, due: list[tuple[asyncio.Future[int], Any]]
    ) -> None:
        """Wake ``due`` at ``seq`` once :attr:`prepare` is done (or after PREPARE_SECONDS, or
        when it failed: each waiter then does what is left). Preparing first lets the answers
        render while the event loop is idle, not fighting thousands of wake-ups for the GIL."""
        assert self.prepare is not None
        try:
            prepared = asyncio.ensure_future(self.prepare(hand_id, seq, [t for _, t in due]))
            prepared.add_done_callback(_log_failure)
            await asyncio.wait((prepared,), timeout=PREPARE_SECONDS)
        finally:
            _wake(due, seq)

    async def read_waited_hands(self) -> None:
        """Read the seqs of every hand with waiters from PostgreSQL and announce them."""
        hand_ids = list(self._waiters)
        if not hand_ids:
            return
        opened = self._opened
        seqs = await in_thread(_topic_seqs, hand_ids)
        if self._opened != opened:
            return  # read before the subscription opened again: the opening's own read counts
        for hand_id, seq in seqs.items():
            self.announce(hand_id, seq)

    async def _run(self) -> None:
        """Keep one subscription open, reconnecting after a failure (backing off to 2 s)."""
        if not self.url:
            return
        pause = 0.25
        while True:
            client = aioredis.Redis.from_url(self.url, socket_connect_timeout=0.5)
            try:
                async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    channel = feed_channel()
                    await pubsub.subscribe(channel)
                    self._latest.clear()  # (heard before: maybe missed something since)
                    self._opened += 1
                    self._subscribed.set()
                    logger.info("the hand feed listens on %s", channel)
                    pause = 0.25
                    await self.read_waited_hands()  # what was announced while we were away
                    async for message in pubsub.listen():
                        data = message.get("data", b"")
                        if isinstance(data, bytes) and data[:1] == b"m":
                            hand_move_heard(data)  # a move's record (announce_record)
                            continue
                        for topic, seq in parse_announcements(data):
                            self.announce(topic, seq)
            except asyncio.CancelledError:
                raise
            except Exception:
                if self._subscribed.is_set():
                    logger.warning("the hand feed's subscription failed", exc_info=True)
                    metrics.cache_failed(use="hand_feed")
            finally:
                if self._subscribed.is_set():
                    self.epoch += 1
                self._subscribed.clear()
                self._latest.clear()
                with suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(pause)
            pause = min(2 * pause, 2.0)

    async def _poll_while_unsubscribed(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            if self._subscribed.is_set():
                continue
            try:
                await self.read_waited_hands()
            except Exception:
                self.epoch += 1
                logger.warning("the hand feed could not read the hands' seqs", exc_info=True)


HandFeed = Subscription  # (its name when it watched hands only)

_feeds: dict[asyncio.AbstractEventLoop, Subscription] = {}


def hand_feed() -> Subscription:
    """This process's feed for the running event loop (one per loop: a test may run several)."""
    loop = asyncio.get_running_loop()
    feed = _feeds.get(loop)
    if feed is None:
        for old in [old for old in _feeds if old.is_closed()]:
            del _feeds[old]
        feed = _feeds[loop] = Subscription(
            url=settings.HAND_FEED_URL, poll_seconds=settings.HAND_FEED_POLL_SECONDS
        )
    return feed
