"""A thin typed client for the Chắn server API (``docs/api.md``) and ``chan-bot``.

:class:`ChanClient` speaks the API over one ``httpx.Client``: bearer tokens, problem+json errors
as :class:`ApiError`, long polls with ``ETag``/``If-None-Match``, ``expected_seq`` and an
``Idempotency-Key`` on every move, and retries with backoff on 429, 5xx and dropped connections
(:class:`RetryPolicy`). :mod:`chan_client.bot` plays a seat with the rules core's heuristic.
"""

from chan_client.client import ApiError, ChanClient, RetryPolicy, Stats
from chan_client.types import HandView, MoveResult, ReadyResult, Table

__all__ = [
    "ApiError",
    "ChanClient",
    "HandView",
    "MoveResult",
    "ReadyResult",
    "RetryPolicy",
    "Stats",
    "Table",
]
