"""DRF's rate throttles with an honest ``wait()``: DRF answers None (so no Retry-After) when a
client is more than one request over its limit; these answer when the oldest counted request
leaves the window."""

from __future__ import annotations

from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle


class _WaitMixin(SimpleRateThrottle):
    def wait(self) -> float | None:
        wait = super().wait()
        if wait is None and self.history:
            wait = max(0.0, self.duration - (self.now - self.history[-1]))
        return wait


class AnonThrottle(_WaitMixin, AnonRateThrottle):
    pass


class UserThrottle(_WaitMixin, UserRateThrottle):
    pass
