"""When to send a request again and how long to wait first; what a client sent (:class:`Stats`).

A request answered 429 or 5xx, or whose connection failed, is sent again after a delay: the
server's ``Retry-After`` when it gives one (429 ``throttled``, 503 ``service_unavailable``), else
an exponential backoff with full jitter; at most ``RetryPolicy.attempts`` times in all.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections import Counter
from dataclasses import dataclass, field

RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait. ``max_delay`` caps every wait, a ``Retry-After`` too."""

    attempts: int = 8
    base_delay: float = 0.2
    max_delay: float = 30.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
        if retry_after is not None:
            # the server's figure, plus a little jitter so a crowd does not come back at once
            return min(self.max_delay, retry_after + rng.uniform(0, self.base_delay))
        return rng.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


@dataclass
class Stats:
    """What this client sent: requests (each attempt counts), retries, answers by status."""

    requests: int = 0
    retries: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    waited: float = 0.0  # seconds slept before retries


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
