"""games.live.announce: a transaction's announcements sent together after its commit (one round
trip to Redis), in the order they were made; none for a transaction that rolled back; a Redis
that fails is logged and counted, never raised. On a real Redis (CACHE_URL, or a private
redis-server), as the long polls hear them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.db import transaction

from games.live import announce
from games.live.announce import announce_on_commit, announcements_batched, feed_channel
from tests.games.conftest import start_table

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def redis_url(settings: Any, tmp_path: Any) -> Iterator[str]:
    from tests.faults.harness import suite_redis

    with suite_redis(tmp_path) as url:
        settings.HAND_FEED_URL = url
        yield url


@pytest.fixture
def heard(redis_url: str) -> Iterator[Any]:
    """What a subscriber of the feed's channel hears: call it for the messages so far."""
    pubsub = redis.Redis.from_url(redis_url).pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(feed_channel())
    pubsub.get_message(timeout=1)  # the subscription's confirmation

    def messages(wait: float = 0.3) -> list[str]:
        found = []
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            message = pubsub.get_message(timeout=0.05)
            if message is not None:
                found.append(message["data"].decode())
        return found

    yield messages
    pubsub.close()


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Each call that sent announcements to Redis, with what it sent."""
    sent: list[list[str]] = []
    real = announce._publish

    def counted(messages: list[str], raises: Any = None) -> None:
        if messages:
            sent.append(list(messages))
        real(messages, raises)

    monkeypatch.setattr(announce, "_publish", counted)
    return sent


def test_a_transactions_announcements_go_together_after_its_commit(
    heard: Any, round_trips: list[list[str]]
) -> None:
    # given: a transaction inside a batch, announcing three topics
    with announcements_batched():
        with transaction.atomic():
            announce_on_commit(7, 3)
            announce_on_commit("f12", 40)
            announce_on_commit("t5", 9)
        # then: nothing is sent while the batch is open, even once committed
        assert heard(0.2) == [] and round_trips == []
    # and all of them in one round trip when it ends, in their order
    assert round_trips == [["7:3", "f12:40", "t5:9"]]
    assert heard() == ["7:3", "f12:40", "t5:9"]


def test_a_rolled_back_transaction_announces_nothing(
    heard: Any, round_trips: list[list[str]]
) -> None:
    with pytest.raises(ZeroDivisionError), announcements_batched(), transaction.atomic():
        announce_on_commit(7, 4)
        1 / 0  # noqa: B018
    assert round_trips == [] and heard(0.2) == []


def test_without_a_batch_each_announcement_is_sent_at_once(
    heard: Any, round_trips: list[list[str]]
) -> None:
    with transaction.atomic():
        announce_on_commit(8, 1)
        announce_on_commit(8, 2)
    assert round_trips == [["8:1"], ["8:2"]]
    assert heard() == ["8:1", "8:2"]


def test_batches_nest_and_the_outermost_sends(round_trips: list[list[str]]) -> None:
    with announcements_batched():
        with announcements_batched(), transaction.atomic():
            announce_on_commit(9, 1)
        assert round_trips == []
        with transaction.atomic():
            announce_on_commit(9, 2)
    assert round_trips == [["9:1", "9:2"]]


def test_a_failing_redis_is_logged_and_counted_never_raised(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from prometheus_client import REGISTRY

    def failures() -> float:
        return REGISTRY.get_sample_value("chan_cache_failures_total", {"use": "hand_feed"}) or 0.0

    settings.HAND_FEED_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    before = failures()
    with announcements_batched(), transaction.atomic():
        announce_on_commit(10, 1)
        announce_on_commit("f1", 1)
    assert failures() - before == 1
    assert "could not announce 10:1, f1:1" in caplog.text


def test_a_deal_and_a_move_each_announce_in_one_round_trip(
    players: Any, round_trips: list[list[str]], redis_url: str
) -> None:
    # a deal: the hand, its four players' feeds, the table and the lobby
    hand_id = start_table(players)["hand"]
    deal = round_trips[-1]
    assert deal[0] == f"{hand_id}:0"
    assert {m.split(":")[0] for m in deal} >= {f"f{p.user.pk}" for p in players} | {"lobby"}
    # a move: the hand and the feeds of the players it concerns, together
    view = next(
        v
        for v in (p.client.get(f"/api/v1/hands/{hand_id}").json() for p in players)
        if v["legal_moves"]
    )
    mover = players[view["my_seat"]]
    from tests.games.decks import scripted_move

    before = len(round_trips)
    r = mover.client.post(
        f"/api/v1/hands/{hand_id}/moves", scripted_move(view["legal_moves"]), format="json"
    )
    assert r.status_code == 201, r.content
    assert len(round_trips) == before + 1
    assert round_trips[-1][0] == f"{hand_id}:{view['seq'] + 1}"
    assert all(m.startswith("f") for m in round_trips[-1][1:])


def test_on_the_caches_own_redis_a_move_raises_its_seq_and_announces_in_one_round_trip(
    players: Any, settings: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.cache import cache
    from redis.connection import AbstractConnection

    from games.hand_store import hand_version_key
    from tests.faults.harness import suite_redis
    from tests.games.decks import scripted_move

    with suite_redis(tmp_path) as url:
        # Given the feed on the cache's Redis (HAND_FEED_URL unset: CACHE_URL's)
        settings.CACHES = {
            "default": {
                "BACKEND": "chan_api.redis_cache.SharedPoolRedisCache",
                "LOCATION": url,
                "KEY_PREFIX": "one-trip",
            }
        }
        settings.HAND_FEED_URL = url
        hand_id = start_table(players)["hand"]
        view = next(
            v
            for v in (p.client.get(f"/api/v1/hands/{hand_id}").json() for p in players)
            if v["legal_moves"]
        )
        sent: list[bytes] = []
        real = AbstractConnection.send_packed_command

        def recorded(self: Any, command: Any, check_health: bool = True) -> None:
            packed = command if isinstance(command, bytes) else b"".join(command)
            if b"PUBLISH" in packed or b"EVAL" in packed:
                sent.append(packed)
            real(self, command, check_health)

        monkeypatch.setattr(AbstractConnection, "send_packed_command", recorded)
        # when a player moves
        r = players[view["my_seat"]].client.post(
            f"/api/v1/hands/{hand_id}/moves", scripted_move(view["legal_moves"]), format="json"
        )
        assert r.status_code == 201, r.content
        # then the hand's published seq is raised and the move announced in one round trip,
        # the raise first
        seq = view["seq"] + 1
        (trip,) = sent
        key = cache.make_and_validate_key(hand_version_key(hand_id)).encode()
        assert trip.index(b"EVAL") < trip.index(key) < trip.index(b"PUBLISH")
        assert f"{hand_id}:{seq}".encode() in trip
        assert cache.get(hand_version_key(hand_id)) == seq


def test_a_failing_redis_under_both_the_raise_and_the_announcements_is_logged_never_raised(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from prometheus_client import REGISTRY

    from games.live.announce import cache_raise_batched

    def failures(use: str) -> float:
        return REGISTRY.get_sample_value("chan_cache_failures_total", {"use": use}) or 0.0

    dead = "redis://127.0.0.1:1/0"  # nothing listens there
    settings.CACHES = {
        "default": {"BACKEND": "chan_api.redis_cache.SharedPoolRedisCache", "LOCATION": dead}
    }
    settings.HAND_FEED_URL = dead
    before = failures("publish"), failures("hand_feed")
    with announcements_batched(), transaction.atomic():
        transaction.on_commit(lambda: cache_raise_batched("hand:10:seq", 1, 60))
        announce_on_commit(10, 1)
    assert (failures("publish") - before[0], failures("hand_feed") - before[1]) == (1, 1)
    assert "could not raise hand:10:seq" in caplog.text
    assert "could not announce 10:1" in caplog.text
