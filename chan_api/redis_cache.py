"""Django's Redis cache with one connection pool per process and location.

Django's cache handler keeps a backend instance per thread and per async context, and its
RedisCache opens a connection pool per instance. Under ASGI every request is a context of its own,
so every request connected to Redis anew (5 ms of CPU on ``/readyz``); these instances share the
client, and so the pool, of their location and options. redis-py's pool is thread-safe and starts
afresh in a forked child.
"""

from __future__ import annotations

import threading
from typing import ClassVar

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.utils.functional import cached_property


class SharedPoolRedisCache(RedisCache):
    _clients: ClassVar[dict[str, RedisCacheClient]] = {}
    _clients_lock: ClassVar[threading.Lock] = threading.Lock()

    @cached_property
    def _cache(self) -> RedisCacheClient:
        key = repr((self._servers, sorted(self._options.items())))
        with self._clients_lock:
            if key not in self._clients:
                self._clients[key] = self._class(self._servers, **self._options)
            return self._clients[key]
