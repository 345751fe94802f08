"""Throttles for the endpoints that anyone may call."""

from __future__ import annotations

import os

from chan_api.throttles import AnonThrottle


class AuthRateThrottle(AnonThrottle):
    """Per-IP limit on register and login; ``THROTTLE_AUTH`` (default 120/min) sets the rate."""

    scope = "auth"

    def get_rate(self) -> str:
        return os.environ.get("THROTTLE_AUTH", "120/min")
