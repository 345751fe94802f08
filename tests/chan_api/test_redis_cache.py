"""The Redis cache shares one connection pool per process: under ASGI each request has a cache
instance of its own, and each used to connect anew."""

from __future__ import annotations

import threading

import pytest
from django.conf import settings

from chan_api.redis_cache import SharedPoolRedisCache

# The environment's Redis, or the embedded default's (chan_api/embedded_redis.py)
CACHE_URL = settings.CACHE_URL


def instance(location: str) -> SharedPoolRedisCache:
    return SharedPoolRedisCache(location, {})


def test_instances_of_one_location_share_one_client_across_threads() -> None:
    # Given a cache instance in this thread and one made in another (as for another request),
    here = instance("redis://127.0.0.1:6379/9")
    there: list[SharedPoolRedisCache] = []
    thread = threading.Thread(target=lambda: there.append(instance("redis://127.0.0.1:6379/9")))
    thread.start()
    thread.join()

    # then both use the same client (its pool), and another location has its own.
    assert here._cache is there[0]._cache
    assert instance("redis://127.0.0.1:6379/8")._cache is not here._cache


@pytest.mark.skipif(
    not CACHE_URL.startswith(("redis://", "unix://")), reason="needs CACHE_URL (Redis)"
)
def test_the_shared_client_reuses_its_connections() -> None:
    pool = instance(CACHE_URL)._cache._get_connection_pool(write=True)
    before = len(pool._available_connections) + len(pool._in_use_connections)

    # When two more instances (two requests) write and read in turn,
    first, second = instance(CACHE_URL), instance(CACHE_URL)
    first.set("chan-shared-pool-test", 1, 10)
    assert second.get("chan-shared-pool-test") == 1
    second.delete("chan-shared-pool-test")

    # then they took an idle connection of the process's pool (or opened its first).
    assert len(pool._available_connections) + len(pool._in_use_connections) == max(before, 1)


@pytest.mark.skipif(
    not CACHE_URL.startswith(("redis://", "unix://")), reason="needs CACHE_URL (Redis)"
)
def test_set_if_higher_only_raises_and_reads_back_as_set_stores_it() -> None:
    cache = SharedPoolRedisCache(CACHE_URL, {"KEY_PREFIX": "chan-set-if-higher-test"})
    cache.delete("seq")

    # An absent key is stored, and reads back as an int as cache.set would store it;
    assert cache.set_if_higher("seq", 5, 60) is True
    assert cache.get("seq") == 5
    # a lower or equal value (a late publish of an older move) changes nothing;
    assert cache.set_if_higher("seq", 3, 60) is False
    assert cache.set_if_higher("seq", 5, 60) is False
    assert cache.get("seq") == 5
    # a higher one replaces it, with the timeout given;
    assert cache.set_if_higher("seq", 9, 60) is True
    assert cache.get("seq") == 9
    client = cache._cache.get_client(None, write=True)
    assert 0 < client.ttl(cache.make_and_validate_key("seq")) <= 60
    # and a value that is not an integer is replaced.
    cache.set("seq", "garbled", 60)
    assert cache.set_if_higher("seq", 2, 60) is True
    assert cache.get("seq") == 2
    cache.delete("seq")
