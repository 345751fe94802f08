"""The suite runs in several pytest-xdist workers (``make test``), each on its own test database;
on one Redis server they keep their cache keys and their Celery queues apart (chan_api/settings.py:
``TEST_WORKER``), since hands in two workers' databases have the same ids."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kombu import Connection

from chan_api.redis_cache import SharedPoolRedisCache
from tests.chan_api.test_chan_api_settings import loaded

REDIS_SETTINGS = (
    "import json, chan_api.settings as s; print(json.dumps({'prefix': "
    "s.CACHES['default'].get('KEY_PREFIX'), 'broker': s.CELERY_BROKER_TRANSPORT_OPTIONS}))"
)


@pytest.fixture
def redis_url(tmp_path) -> Iterator[str]:
    """The suite's Redis (CACHE_URL), else a private redis-server."""
    from tests.faults.harness import suite_redis

    with suite_redis(tmp_path) as url:
        yield url


def test_an_xdist_worker_names_its_cache_keys_and_broker_queues(tmp_path) -> None:
    redis = {
        "CACHE_URL": "redis://127.0.0.1:6379/1",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/2",
        "PYTEST_VERSION": "9",
    }
    worker = loaded(tmp_path, REDIS_SETTINGS, **redis, PYTEST_XDIST_WORKER="gw3")
    assert worker["prefix"] == "gw3"
    assert worker["broker"]["global_keyprefix"] == "gw3:"
    # A run without xdist is named too (else clearing its cache would flush every run's keys),
    alone = loaded(tmp_path, REDIS_SETTINGS, **redis)
    assert alone["prefix"] == "solo"
    assert alone["broker"]["global_keyprefix"] == "solo:"
    # and outside pytest (production) nothing is named: the variable is ignored.
    prod = loaded(
        tmp_path,
        REDIS_SETTINGS,
        CACHE_URL=redis["CACHE_URL"],
        CELERY_BROKER_URL=redis["CELERY_BROKER_URL"],
        SECRET_KEY="s",
        PYTEST_XDIST_WORKER="gw3",
    )
    assert prod["prefix"] == ""
    assert "global_keyprefix" not in prod["broker"]


def test_clearing_a_prefixed_cache_keeps_the_keys_of_other_prefixes(redis_url) -> None:
    mine = SharedPoolRedisCache(redis_url, {"KEY_PREFIX": "isolation-test-a"})
    theirs = SharedPoolRedisCache(redis_url, {"KEY_PREFIX": "isolation-test-b"})
    keys = [f"k{i}" for i in range(1200)]  # more than one batch of deletions
    mine.set_many(dict.fromkeys(keys, 1), 60)
    theirs.set("k1", "kept", 60)
    try:
        mine.clear()
        assert mine.get_many(keys) == {}
        assert theirs.get("k1") == "kept"  # Django's clear() is FLUSHDB: it was gone
    finally:
        theirs.clear()


def test_a_celery_worker_of_another_xdist_worker_does_not_receive_the_tasks(
    redis_url, tmp_path
) -> None:
    # (kombu names a Redis on a unix socket, the embedded default's, redis+socket://)
    broker_url = redis_url.replace("unix://", "redis+socket://", 1)

    def connection(worker: str) -> Connection:
        """The broker connection of the settings of xdist worker ``worker``."""
        options = loaded(
            tmp_path,
            REDIS_SETTINGS,
            CACHE_URL=redis_url,
            CELERY_BROKER_URL=broker_url,
            PYTEST_VERSION="9",
            PYTEST_XDIST_WORKER=worker,
        )["broker"]
        return Connection(broker_url, transport_options=options)

    # Names no real xdist worker of this run has: the real gw0 clears its cache keys ("gw0:*")
    # between tests, which would take a broker list under "gw0:" with them (seen in CI).
    with connection("gw990") as gw0, connection("gw991") as gw1:
        sent = gw0.SimpleQueue("isolation-test")
        other = gw1.SimpleQueue("isolation-test")
        try:
            sent.put({"task": "clock_tick", "hand": 1})
            # The other worker's queue of the same name stays empty,
            with pytest.raises(other.Empty):
                other.get(timeout=0.5)
            # and the sender's has the task.
            message = sent.get(timeout=5)
            message.ack()
            assert message.payload == {"task": "clock_tick", "hand": 1}
        finally:
            sent.clear()
            other.clear()
            sent.close()
            other.close()
