"""DRF's rate throttles with an honest ``wait()`` and a cache that may be down.

DRF answers None (so no Retry-After) when a client is more than one request over its limit;
these answer when the oldest counted request leaves the window. The counts live in the cache
(Redis in production): while it does not answer, the throttles let requests through rather than
turn every request into a 500 — the API keeps working on the database alone — and each such
request is logged and counted (``throttle_cache_failures``).

DRF reads and writes a client's whole history in the cache on every request (two round trips
and a list of up to the limit's timestamps each way). Here each process keeps its clients'
budgets (:class:`_Budgets`): a request is counted locally, against what the cache said at the
last exchange plus what this process counted since; every ``THROTTLE_FLUSH_SECONDS`` (or
``THROTTLE_FLUSH_REQUESTS`` requests) of a client the process exchanges with the cache: it
reads the shared history, adds its own requests and writes it back. The budget is still one
for all processes, seen by each up to that late (a client spread over N processes may pass its
limit by at most what they count between two exchanges). ``THROTTLE_FLUSH_SECONDS=0`` (the test
suite): DRF's exchange on every request.
"""

from __future__ import annotations

import bisect
import logging
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from core import metrics

logger = logging.getLogger(__name__)


def client_address(request: Any) -> str:
    """The client's address, the one rule for the throttles, ``/metrics`` and per-address
    limits (the login lockout, the sign-up limit): the socket's peer (``REMOTE_ADDR``) with ``NUM_PROXIES`` = 0, whatever
    ``X-Forwarded-For`` the client sends; behind ``NUM_PROXIES`` proxies the address the
    nearest of them saw (the ``NUM_PROXIES``-th entry from the right of ``X-Forwarded-For``)."""
    meta = getattr(request, "META", None) or getattr(request, "_request", request).META
    remote = meta.get("REMOTE_ADDR", "") or ""
    num_proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    forwarded = meta.get("HTTP_X_FORWARDED_FOR")
    if not num_proxies or not forwarded:
        return remote
    hops = [hop.strip() for hop in forwarded.split(",")]
    return hops[-min(num_proxies, len(hops))]


class _FailureCount:
    """Requests let through because the throttle's cache did not answer (this process)."""

    def __init__(self) -> None:
        self.value = 0
        self._lock = threading.Lock()

    def add(self) -> int:
        with self._lock:
            self.value += 1
            return self.value


throttle_cache_failures = _FailureCount()


# Where a throttle leaves the request's quota for chan_api.middleware.RateLimitHeadersMiddleware.
RATE_LIMIT_ATTR = "chan_rate_limit"


@dataclass(frozen=True, slots=True)
class Quota:
    """One throttle's state after this request: for the ``RateLimit-*`` headers."""

    limit: int
    remaining: int
    reset: int  # seconds until a counted request leaves the window
    window: int


@dataclass
class _Budget:
    """One client's budget in this process: the shared history as last read (ascending
    timestamps), this process's requests since (ascending), when it last exchanged."""

    shared: list[float] = field(default_factory=list)
    pending: list[float] = field(default_factory=list)
    synced_at: float = float("-inf")
    syncing: threading.Lock = field(default_factory=threading.Lock)


class _History:
    """A budget's requests in the window, newest first, as DRF's ``history`` list is read."""

    def __init__(self, shared: list[float], pending: list[float]) -> None:
        self._shared, self._pending = shared, pending

    def __len__(self) -> int:
        return len(self._shared) + len(self._pending)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __getitem__(self, i: int) -> float:
        if i == -1:  # the oldest: what RateLimit-Reset reads on every request
            return min(x[0] for x in (self._shared, self._pending) if x)
        return sorted(self._shared + self._pending, reverse=True)[i]


def _flush_seconds() -> float:
    return float(getattr(settings, "THROTTLE_FLUSH_SECONDS", 0) or 0)


class _Budgets:
    """This process's budgets, by throttle key (bounded: a forgotten one starts again from the
    cache's history)."""

    KEPT = 20_000

    def __init__(self) -> None:
        self._budgets: OrderedDict[str, _Budget] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._budgets.clear()

    def take(
        self, throttle: SimpleRateThrottle, now: float, *, exchange: bool = True
    ) -> tuple[bool, _History] | None:
        """Count a request of ``throttle.key`` at ``now`` if its budget allows it (exchanging
        the budget with the cache first when that is due): (allowed, history). Without
        ``exchange`` (the event loop, which must not wait on the cache): None, with nothing
        counted, when an exchange is due."""
        key, duration, limit = throttle.key, throttle.duration, throttle.num_requests
        with self._lock:
            budget = self._budgets.get(key)
            if budget is None:
                budget = self._budgets[key] = _Budget()
                while len(self._budgets) > self.KEPT:
                    self._budgets.popitem(last=False)
            else:
                self._budgets.move_to_end(key)
            due = now - budget.synced_at >= _flush_seconds() or len(budget.pending) >= getattr(
                settings, "THROTTLE_FLUSH_REQUESTS", 50
            )
        if due and not exchange:
            return None
        if due and budget.syncing.acquire(blocking=False):  # one thread exchanges, others go on
            try:
                self._exchange(throttle, budget, now)
            finally:
                budget.syncing.release()
        with self._lock:
            start = now - duration
            del budget.shared[: bisect.bisect_right(budget.shared, start)]
            del budget.pending[: bisect.bisect_right(budget.pending, start)]
            history = _History(list(budget.shared), list(budget.pending))
            if len(history) >= limit:
                return False, history
            budget.pending.append(now)
            return True, _History(history._shared, [*history._pending, now])

    def give_back(self, key: str, at: float) -> None:
        """Uncount a request :meth:`take` counted at ``at`` (one that another path will count
        again), if it is not exchanged yet."""
        with self._lock:
            budget = self._budgets.get(key)
            if budget is not None and at in budget.pending:
                budget.pending.remove(at)

    def _exchange(self, throttle: SimpleRateThrottle, budget: _Budget, now: float) -> None:
        """Read the shared history, add this process's requests, write it back (newest first,
        as DRF keeps it, at most the limit's number)."""
        with self._lock:
            mine = budget.pending
            budget.pending = []
        try:
            shared = throttle.cache.get(throttle.key, [])
            merged = sorted([*shared, *mine], reverse=True)[: throttle.num_requests]
            merged = [t for t in merged if t > now - throttle.duration]
            if mine:
                throttle.cache.set(throttle.key, merged, throttle.duration)
        except Exception:
            with self._lock:  # counted again at the next exchange
                budget.pending = sorted([*mine, *budget.pending])
                budget.synced_at = now
            raise
        with self._lock:
            budget.shared = merged[::-1]
            budget.synced_at = now


_budgets = _Budgets()


class _WaitMixin(SimpleRateThrottle):
    def get_ident(self, request: Any) -> str:
        return client_address(request)

    def _allow_batched(self, request: Any, view: Any) -> bool:
        """DRF's ``allow_request`` on this process's budget (:class:`_Budgets`)."""
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        taken = _budgets.take(self, self.now)
        assert taken is not None  # (it exchanges when due)
        allowed, self.history = taken
        return allowed or self.throttle_failure()

    def allow_request(self, request: Any, view: Any) -> bool:
        try:
            if _flush_seconds() > 0:
                allowed = self._allow_batched(request, view)
            else:
                allowed = super().allow_request(request, view)
        except Exception:  # the cache is down: fail open, the database still serves
            failures = throttle_cache_failures.add()
            metrics.cache_failed(use="throttle")
            logger.warning(
                "throttle %s: the cache did not answer; request let through (%s so far)",
                self.scope,
                failures,
                exc_info=failures == 1,
            )
            self.history = []
            return True
        if self.rate is not None and getattr(self, "key", None) is not None:  # it counted
            _record_quota(request, self)
        return allowed

    def wait(self) -> float | None:
        wait = super().wait()
        if wait is None and self.history:
            # History is newest first: a request is allowed again once the num_requests-th
            # newest leaves the window.
            oldest_counted = self.history[min(self.num_requests, len(self.history)) - 1]
            wait = max(0.0, self.duration - (self.now - oldest_counted))
        return wait


class AnonThrottle(_WaitMixin, AnonRateThrottle):
    pass


class UserThrottle(_WaitMixin, UserRateThrottle):
    pass


def _quota(throttle: SimpleRateThrottle) -> Quota:
    history = throttle.history
    reset = throttle.duration - (throttle.now - history[-1]) if history else 0
    return Quota(
        limit=throttle.num_requests,
        remaining=max(0, throttle.num_requests - len(history)),
        reset=max(0, math.ceil(reset)),
        window=throttle.duration,
    )


def _record_quota(request: Any, throttle: SimpleRateThrottle) -> None:
    """Keep the tightest quota (fewest remaining) of the request's throttles on the request."""
    quota = _quota(throttle)
    django_request = getattr(request, "_request", request)
    kept = getattr(django_request, RATE_LIMIT_ATTR, None)
    if kept is None or quota.remaining < kept.remaining:
        setattr(django_request, RATE_LIMIT_ATTR, quota)


class LocalCount(NamedTuple):
    """A request counted by :func:`user_request_counted`: its quota (None when the
    throttle has no rate) and how to uncount it."""

    quota: Quota | None
    key: str | None
    at: float

    def give_back(self) -> None:
        if self.key is not None:
            _budgets.give_back(self.key, self.at)


def user_request_counted(user_id: int, *, exchange: bool = True) -> LocalCount | None:
    """Count an authenticated request of ``user_id`` as the API's throttles would
    (``UserThrottle``; ``AnonThrottle`` does not count a player) in this process's budget,
    exchanging it with the cache when due: for a request answered without Django
    (games.live.rearm; in a worker thread). None, with nothing counted, where Django must
    answer: batching off (``THROTTLE_FLUSH_SECONDS=0``), the request over the limit (its 429),
    the cache not answering (Django lets it through and says so). Without ``exchange`` (in
    the event loop): None too when the budget's exchange is due (count it in a thread)."""
    if _flush_seconds() <= 0:
        return None
    throttle = UserThrottle()
    if throttle.rate is None:
        return LocalCount(None, None, 0.0)
    throttle.key = throttle.cache_format % {"scope": throttle.scope, "ident": user_id}
    throttle.now = throttle.timer()
    try:
        taken = _budgets.take(throttle, throttle.now, exchange=exchange)
    except Exception:  # as allow_request: Django's pass will say what it does about it
        return None
    if taken is None:
        return None
    allowed, throttle.history = taken
    if not allowed:
        return None
    return LocalCount(_quota(throttle), throttle.key, throttle.now)
