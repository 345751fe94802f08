"""A typed client for the Chắn server API (``docs/api.md``) and ``chan-bot``.

:class:`ChanClient` (synchronous, one ``httpx.Client``) and :class:`AsyncChanClient` (``await``
each call, one ``httpx.AsyncClient``) have a method for every operation of the server's schema
(a test fails on one they lack): bearer tokens, problem+json errors as :class:`ApiError`, long
polls with ``ETag``/``If-None-Match``, ``expected_seq`` and an ``Idempotency-Key`` on every move,
retries with backoff on 429, 5xx and dropped connections (:class:`RetryPolicy`), iterators over
pages, the player's feed and push streams that resume where they stopped.
:mod:`chan_client.bot` plays seats with the rules core's heuristic.
"""

from chan_client.client import (
    ApiError,
    AsyncChanClient,
    ChanClient,
    RetryLater,
    RetryPolicy,
    Stats,
)
from chan_client.streams import StreamEvent
from chan_client.types import HandView, Me, MoveResult, Page, ReadyResult, Table

__all__ = [
    "ApiError",
    "AsyncChanClient",
    "ChanClient",
    "HandView",
    "Me",
    "MoveResult",
    "Page",
    "ReadyResult",
    "RetryLater",
    "RetryPolicy",
    "Stats",
    "StreamEvent",
    "Table",
]
