"""DRF's rate throttles with an honest ``wait()``: DRF answers None (so no Retry-After) when a
client is more than one request over its limit; these answer when the oldest counted request
leaves the window."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

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
    def allow_request(self, request: Any, view: Any) -> bool:
        allowed = super().allow_request(request, view)
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
