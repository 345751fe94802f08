"""DRF's rate throttles with an honest ``wait()``: DRF answers None (so no Retry-After) when a
client is more than one request over its limit; these answer when the oldest counted request
leaves the window."""

from __future__ import annotations

from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle


class _WaitMixin(SimpleRateThrottle):
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
