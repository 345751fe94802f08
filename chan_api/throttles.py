"""DRF's rate throttles with an honest ``wait()`` and a cache that may be down.

DRF answers None (so no Retry-After) when a client is more than one request over its limit;
these answer when the oldest counted request leaves the window. The counts live in the cache
(Redis in production): while it does not answer, the throttles let requests through rather than
turn every request into a 500 — the API keeps working on the database alone — and each such
request is logged and counted (``throttle_cache_failures``).
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from typing import Any

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


class _WaitMixin(SimpleRateThrottle):
    def get_ident(self, request: Any) -> str:
        return client_address(request)

    def allow_request(self, request: Any, view: Any) -> bool:
        try:
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


def _record_quota(request: Any, throttle: SimpleRateThrottle) -> None:
    """Keep the tightest quota (fewest remaining) of the request's throttles on the request."""
    history = throttle.history
    reset = throttle.duration - (throttle.now - history[-1]) if history else 0
    quota = Quota(
        limit=throttle.num_requests,
        remaining=max(0, throttle.num_requests - len(history)),
        reset=max(0, math.ceil(reset)),
        window=throttle.duration,
    )
    django_request = getattr(request, "_request", request)
    kept = getattr(django_request, RATE_LIMIT_ATTR, None)
    if kept is None or quota.remaining < kept.remaining:
        setattr(django_request, RATE_LIMIT_ATTR, quota)
