"""The Redis cache shares one connection pool per process: under ASGI each request has a cache
instance of its own, and each used to connect anew."""

from __future__ import annotations

import os
import threading

import pytest

from chan_api.redis_cache import SharedPoolRedisCache

CACHE_URL = os.environ.get("CACHE_URL", "")


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


@pytest.mark.skipif(not CACHE_URL.startswith("redis://"), reason="needs CACHE_URL (Redis)")
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
