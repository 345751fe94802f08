"""The clients, by the names they have always been imported by.

``ChanClient`` (synchronous) and ``AsyncChanClient`` are one source (``_async_client.py``; the
sync one is written from it by ``clients/python/unasync.py``); errors, retries and streams live
in their own modules.
"""

from chan_client._async_client import AsyncChanClient
from chan_client._sync_client import ChanClient
from chan_client.errors import ApiError, RetryLater
from chan_client.retry import RETRIED_STATUSES, RetryPolicy, Stats, parse_retry_after
from chan_client.streams import SseDecoder, StreamEvent

__all__ = [
    "RETRIED_STATUSES",
    "ApiError",
    "AsyncChanClient",
    "ChanClient",
    "RetryLater",
    "RetryPolicy",
    "SseDecoder",
    "Stats",
    "StreamEvent",
    "parse_retry_after",
]
