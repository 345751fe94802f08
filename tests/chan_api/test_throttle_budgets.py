"""The throttles' budgets kept in the process (chan_api/throttles.py, ``_Budgets``): the cache is
read and written once per exchange, not per request, and the budget stays one for all processes."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from chan_api import throttles


class CountingCache:
    """A cache shared by "processes" (throttle instances over separate budgets)."""

    def __init__(self) -> None:
        self.data: dict[str, list[float]] = {}
        self.gets = self.sets = 0

    def get(self, key, default=None):
        self.gets += 1
        return list(self.data.get(key, default))

    def set(self, key, value, timeout=None):
        self.sets += 1
        self.data[key] = list(value)


class BrokenCache:
    def get(self, key, default=None):
        raise ConnectionError("redis is away")

    set = get


@pytest.fixture(autouse=True)
def batched(settings) -> Iterator[None]:
    settings.THROTTLE_FLUSH_SECONDS = 1
    settings.THROTTLE_FLUSH_REQUESTS = 50
    throttles._budgets.clear()
    yield
    throttles._budgets.clear()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def request_of(user_id: int):
    user = SimpleNamespace(pk=user_id, is_authenticated=True)
    return SimpleNamespace(user=user, META={"REMOTE_ADDR": "10.0.0.1"})


def throttle(cache, clock: Clock, rate: str = "5/min") -> throttles.UserThrottle:
    t = throttles.UserThrottle()
    t.cache, t.timer, t.rate = cache, clock, rate
    t.num_requests, t.duration = t.parse_rate(rate)
    return t


def test_requests_between_exchanges_touch_no_cache_and_the_limit_holds() -> None:
    cache, clock = CountingCache(), Clock()
    allowed = []
    for _ in range(7):
        allowed.append(throttle(cache, clock).allow_request(request_of(1), None))
        clock.now += 0.01
    assert allowed == [True] * 5 + [False] * 2
    assert cache.gets == 1 and cache.sets == 0  # one read at the first request, no write yet
    # A second later the process exchanges: its five requests are in the shared history.
    clock.now += 1
    assert throttle(cache, clock).allow_request(request_of(1), None) is False
    assert len(cache.data["throttle_user_1"]) == 5


def test_the_budget_is_shared_with_the_other_processes() -> None:
    cache, clock = CountingCache(), Clock()
    # Another process's four requests, flushed to the cache,
    cache.data["throttle_user_1"] = [clock.now - 1.0 - i for i in range(4)]
    # leave this process one.
    assert throttle(cache, clock).allow_request(request_of(1), None) is True
    assert throttle(cache, clock).allow_request(request_of(1), None) is False


def test_the_window_slides_and_wait_names_when_a_request_is_allowed_again() -> None:
    cache, clock = CountingCache(), Clock()
    for _ in range(5):
        assert throttle(cache, clock).allow_request(request_of(1), None)
        clock.now += 1
    refused = throttle(cache, clock)
    assert refused.allow_request(request_of(1), None) is False
    assert refused.wait() == pytest.approx(55.0)
    clock.now += 56
    assert throttle(cache, clock).allow_request(request_of(1), None) is True


def test_a_cache_that_does_not_answer_lets_requests_through() -> None:
    clock = Clock()
    before = throttles.throttle_cache_failures.value
    assert all(throttle(BrokenCache(), clock).allow_request(request_of(1), None) for _ in range(3))
    assert throttles.throttle_cache_failures.value > before


def test_off_it_is_drfs_exchange_on_every_request(settings) -> None:
    settings.THROTTLE_FLUSH_SECONDS = 0
    cache, clock = CountingCache(), Clock()
    for _ in range(3):
        throttle(cache, clock).allow_request(request_of(1), None)
    assert cache.gets == 3 and cache.sets == 3
