"""Django's Redis cache, with one redis-py client per connection pool instead of one per call.

``django.core.cache.backends.redis.RedisCacheClient.get_client`` builds a new ``redis.Redis``
for every cache operation; redis-py's constructor fills a table of some 170 response callbacks
each time, which profiled at about a millisecond per API request (two cache operations: the
throttle's). A client is safe to share between threads (it takes connections from its pool),
so each pool gets one, made on first use.
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class SharedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}
        self._clients_lock = threading.Lock()

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            with self._clients_lock:
                client = self._clients.get(index)
                if client is None:
                    pool = self._get_connection_pool(write)
                    client = self._clients[index] = self._client(connection_pool=pool)
        return client


class SharedClientRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedClientRedisCacheClient
