"""Django's Redis cache with one connection pool per process and location, and one redis-py
client per pool.

* Django's cache handler keeps a backend instance per thread (and per async context), and its
  RedisCache opens a connection pool per instance: these instances share the client, and so the
  pool, of their location and options. redis-py's pool is thread-safe and starts afresh in a
  forked child.
* ``clear()`` with a ``KEY_PREFIX`` deletes the keys of that prefix only, not the whole database
  (Django's ``FLUSHDB``): processes that share a Redis database under different prefixes (the
  test suite's xdist workers, ``chan_api/settings.py``) keep each other's keys.
* ``RedisCacheClient.get_client`` builds a new ``redis.Redis`` for every cache operation; its
  constructor fills a table of some 170 response callbacks each time, which profiled at about a
  millisecond per API request (the throttle's two operations). A client is safe to share between
  threads, so each pool gets one, made on first use.
"""

from __future__ import annotations

import re
import threading
from typing import Any, ClassVar

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.utils.functional import cached_property


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


# KEYS[1]: the key; ARGV: the value, the timeout in seconds. A value that is not an integer
# (or none) is replaced.
_SET_IF_HIGHER = """
local current = tonumber(redis.call('GET', KEYS[1]))
if current and current >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""


class SharedPoolRedisCache(RedisCache):
    _clients: ClassVar[dict[str, RedisCacheClient]] = {}
    _scripts: ClassVar[dict[int, Any]] = {}  # id of a shared client → its registered script
    _clients_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedClientRedisCacheClient

    def incr_expiring(self, key: str, timeout: int) -> int:
        """Add one to ``key`` (0 when absent) and keep it ``timeout`` more seconds: one round
        trip (``INCR`` and ``EXPIRE`` pipelined), where ``add``, ``incr`` and ``touch`` take
        three."""
        full_key = self.make_and_validate_key(key)
        client = self._cache.get_client(full_key, write=True)
        with client.pipeline(transaction=False) as pipe:
            pipe.incr(full_key)
            pipe.expire(full_key, timeout)
            value, _ = pipe.execute()
        return int(value)

    def set_if_higher(self, key: str, value: int, timeout: int) -> bool:
        """Store ``value`` under ``key`` for ``timeout`` seconds unless it already holds a
        greater or equal integer: one round trip, atomic (a script), where ``get`` then ``set``
        take two and let a late writer lower the value between them. Stored as ``set`` stores
        an int (its digits), so ``get`` reads it back. True when it was stored."""
        full_key = self.make_and_validate_key(key)
        client = self._cache.get_client(full_key, write=True)
        script = self._scripts.get(id(client))
        if script is None:
            script = self._scripts[id(client)] = client.register_script(_SET_IF_HIGHER)
        return bool(script(keys=[full_key], args=[int(value), int(timeout)], client=client))

    def set_if_higher_publishing(
        self, raises: list[tuple[str, int, int]], channel: str, messages: list[str]
    ) -> None:
        """:meth:`set_if_higher` for each (key, value, timeout) of ``raises``, then ``PUBLISH``
        each of ``messages`` on ``channel`` (a channel belongs to the whole server, whatever
        the database): one round trip, in that order, so a subscriber woken by a message reads
        the values raised before it (``games.live.announce``). The script goes as ``EVAL``: a
        pipeline's ``EVALSHA`` asks first whether the server knows it, a round trip more."""
        client = self._cache.get_client(None, write=True)
        with client.pipeline(transaction=False) as pipe:
            for key, value, timeout in raises:
                full_key = self.make_and_validate_key(key)
                pipe.eval(_SET_IF_HIGHER, 1, full_key, int(value), int(timeout))
            for message in messages:
                pipe.publish(channel, message)
            pipe.execute()

    def decr_many(self, keys: list[str]) -> None:
        """Subtract one from each of ``keys``: one round trip (``DECR`` pipelined)."""
        if not keys:
            return
        full_keys = [self.make_and_validate_key(key) for key in keys]
        client = self._cache.get_client(full_keys[0], write=True)
        with client.pipeline(transaction=False) as pipe:
            for full_key in full_keys:
                pipe.decr(full_key)
            pipe.execute()

    def clear(self) -> bool:
        """Delete every key of this cache: ``FLUSHDB`` without a key prefix, else the keys of the
        prefix (``SCAN`` by pattern, ``UNLINK`` in batches)."""
        if not self.key_prefix:
            return super().clear()
        pattern = re.sub(r"([\\*?\[\]])", r"\\\1", self.key_prefix) + ":*"
        client = self._cache.get_client(None, write=True)
        batch: list[bytes] = []
        for key in client.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) == 500:
                client.unlink(*batch)
                batch.clear()
        if batch:
            client.unlink(*batch)
        return True

    @cached_property
    def _cache(self) -> RedisCacheClient:
        key = repr((self._servers, sorted(self._options.items())))
        with self._clients_lock:
            if key not in self._clients:
                self._clients[key] = self._class(self._servers, **self._options)
            return self._clients[key]
