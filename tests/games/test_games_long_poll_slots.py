"""The 10-long-polls-per-token limit holds on every cache backend (games.hand_store): 11 polls
taking their slot at the same instant admit exactly 10, and the count is back to 0 once they
have all ended — the file cache, the memory cache, Redis."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import override_settings

from core.errors import RateLimited
from games.hand_store import LONG_POLLS_PER_TOKEN, long_poll_slot_take, long_poll_slots_free

BACKENDS = {
    "file": lambda tmp: {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(tmp / "cache"),
    },
    "locmem": lambda tmp: {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": f"slots-{tmp.name}",
    },
    "redis": lambda tmp: {
        "BACKEND": "chan_api.redis_cache.SharedPoolRedisCache",
        "LOCATION": settings.CACHE_URL or "redis://127.0.0.1:6379/0",
    },
}


@pytest.fixture(params=list(BACKENDS))
def slot_cache(request, tmp_path) -> Iterator[str]:
    if request.param == "redis" and not settings.CACHE_URL:
        pytest.skip("no CACHE_URL: no Redis to test against")
    with override_settings(CACHES={"default": BACKENDS[request.param](tmp_path)}):
        cache.delete(f"games:long-polls:{token_id(tmp_path)}")
        yield request.param


def token_id(tmp_path) -> int:
    return 10_000_000 + abs(hash(tmp_path.name)) % 1_000_000


@pytest.mark.parametrize("rounds", [3])
def test_eleven_polls_at_once_admit_exactly_ten_and_give_every_slot_back(
    slot_cache, tmp_path, rounds
) -> None:
    token = token_id(tmp_path)
    key = f"games:long-polls:{token}"
    for _ in range(rounds):
        # Given 11 long polls of one token taking their slot at the same instant
        start = threading.Barrier(LONG_POLLS_PER_TOKEN + 1)

        def take(start: threading.Barrier = start) -> str | None:
            start.wait()
            try:
                return long_poll_slot_take(token_id=token)
            except RateLimited:
                return None

        with ThreadPoolExecutor(LONG_POLLS_PER_TOKEN + 1) as pool:
            taken = list(pool.map(lambda _: take(), range(LONG_POLLS_PER_TOKEN + 1)))
        # then exactly 10 wait and one is refused (429)
        admitted = [k for k in taken if k is not None]
        assert len(admitted) == LONG_POLLS_PER_TOKEN, (slot_cache, taken)
        assert cache.get(key) == LONG_POLLS_PER_TOKEN
        # and when they end, at once, the count is back to 0
        done = threading.Barrier(len(admitted))

        def free(k: str, done: threading.Barrier = done) -> None:
            done.wait()
            long_poll_slots_free([k])

        with ThreadPoolExecutor(len(admitted)) as pool:
            list(pool.map(free, admitted))
        assert int(cache.get(key) or 0) == 0, slot_cache


def test_a_slot_freed_twice_never_counts_below_zero(slot_cache, tmp_path) -> None:
    token = token_id(tmp_path)
    key = long_poll_slot_take(token_id=token)
    assert key is not None
    long_poll_slots_free([key, key])
    if slot_cache != "redis":  # DECR of Redis counts what it is told; the lock keeps it ≥ 0
        assert cache.get(key) == 0


@pytest.fixture
def park_emptied() -> Iterator[None]:
    from games import hand_store

    hand_store._parked.clear()
    yield
    hand_store._parked.clear()


def test_an_ended_polls_slot_is_parked_for_the_same_tokens_next_poll_then_given_back(
    slot_cache, tmp_path, park_emptied, monkeypatch
) -> None:
    from games import hand_store

    token = token_id(tmp_path)
    key = f"games:long-polls:{token}"
    # Given a poll that took its slot (counted once in the cache) and ended: its slot parked,
    slot = long_poll_slot_take(token_id=token)
    assert slot == key and cache.get(key) == 1
    hand_store.long_poll_slot_park(slot)
    # when the same token polls again, it takes the parked slot: nothing more is counted;
    assert long_poll_slot_take(token_id=token) == key and cache.get(key) == 1
    hand_store.long_poll_slot_park(key)
    assert hand_store.long_poll_slots_due()[0] == []  # (parked, not due yet)
    # once SLOT_PARK_SECONDS have passed with no poll to take it, it is due to be given back,
    monkeypatch.setattr(hand_store, "SLOT_PARK_SECONDS", 0.0)
    due, wait = hand_store.long_poll_slots_due()
    assert due == [key] and wait is None
    long_poll_slots_free(due)
    assert cache.get(key, 0) == 0
    # and a parked slot is not taken once this process's count of the token in the cache is
    # older than half its expiry (a fresh count renews the expiry under live polls).
    monkeypatch.setattr(hand_store, "SLOT_PARK_SECONDS", 60.0)
    assert long_poll_slot_take(token_id=token) == key and cache.get(key) == 1
    hand_store.long_poll_slot_park(key)
    hand_store._counted_at[key] -= hand_store._SLOT_TTL_SECONDS
    assert long_poll_slot_take(token_id=token) == key and cache.get(key) == 2
