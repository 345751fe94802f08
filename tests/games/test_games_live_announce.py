"""games.live.announce: a transaction's announcements sent together after its commit (one round
trip to Redis), in the order they were made, by the process's announcer thread (the committing
thread does not wait for Redis); what piles up meanwhile goes in one round trip; none for a
transaction that rolled back; a Redis that fails is logged and counted, never raised. On a real
Redis (CACHE_URL, or a private redis-server), as the long polls hear them."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.db import transaction

from games.live import announce
from games.live.announce import (
    ENTRIES_PER_MESSAGE,
    announce_on_commit,
    announcements_batched,
    announcements_held,
    announcements_sent,
    feed_channel,
    parse_announcements,
)
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
            if message is not None:  # (one message carries several: split here)
                found.extend(message["data"].decode().split(" "))
        return found

    yield messages
    pubsub.close()


@pytest.fixture
def whole_messages(redis_url: str) -> Iterator[Any]:
    """What a subscriber of the feed's channel hears, each message whole: call it once the
    announcements are sent."""
    pubsub = redis.Redis.from_url(redis_url).pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(feed_channel())
    pubsub.get_message(timeout=1)

    def messages() -> list[str]:
        found = []
        while (message := pubsub.get_message(timeout=0.3)) is not None:
            found.append(message["data"].decode())
        return found

    yield messages
    pubsub.close()


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Each call that sent announcements to Redis, with what it sent."""
    sent: list[list[str]] = []
    real = announce._publish

    def counted(messages: list[str], raises: Any = None, route: Any = None) -> None:
        if messages:
            sent.append(list(messages))
        real(messages, raises, route)

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
        assert announcements_sent()
        assert heard(0.2) == [] and round_trips == []
    # and all of them in one round trip when it ends, in their order
    assert announcements_sent()
    assert round_trips == [["7:3", "f12:40", "t5:9"]]
    assert heard() == ["7:3", "f12:40", "t5:9"]


def test_a_rolled_back_transaction_announces_nothing(
    heard: Any, round_trips: list[list[str]]
) -> None:
    with pytest.raises(ZeroDivisionError), announcements_batched(), transaction.atomic():
        announce_on_commit(7, 4)
        1 / 0  # noqa: B018
    assert announcements_sent()
    assert round_trips == [] and heard(0.2) == []


def test_without_a_batch_each_announcement_is_handed_over_at_once(
    heard: Any, round_trips: list[list[str]]
) -> None:
    with transaction.atomic():
        announce_on_commit(8, 1)
    assert announcements_sent()
    with transaction.atomic():
        announce_on_commit(9, 1)
    assert announcements_sent()
    assert round_trips == [["8:1"], ["9:1"]]
    assert heard() == ["8:1", "9:1"]


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[threading.Event, threading.Event]]:
    """The announcer's sends wait for ``release`` (``started`` is set once one is waiting)."""
    started, release = threading.Event(), threading.Event()
    real = announce._publish

    def waiting(messages: list[str], raises: Any = None, route: Any = None) -> None:
        started.set()
        assert release.wait(10)
        real(messages, raises, route)

    waiting.__wrapped__ = real  # type: ignore[attr-defined]

    monkeypatch.setattr(announce, "_publish", waiting)
    yield started, release
    release.set()
    assert announcements_sent()


def test_what_piles_up_while_the_announcer_sends_goes_in_one_round_trip(
    heard: Any, held: tuple[threading.Event, threading.Event], monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.cache import cache

    started, release = held
    trips: list[tuple[list[str], Any]] = []
    waiting = announce._publish

    def counted(messages: list[str], raises: Any = None, route: Any = None) -> None:
        trips.append((list(messages), raises))
        waiting(messages, raises, route)

    monkeypatch.setattr(announce, "_publish", counted)
    # Given the announcer busy sending a first commit's announcement
    with transaction.atomic():
        announce_on_commit(7, 1)
    assert started.wait(10)
    # when three more commits announce meanwhile (a topic twice, a cache key raised twice)
    for topic, seq in ((7, 3), ("f12", 40), (7, 2)):
        with announcements_batched(), transaction.atomic():
            announce_on_commit(topic, seq)
            if topic == 7:
                transaction.on_commit(
                    lambda seq=seq: announce.cache_raise_batched("piled:seq", seq, 60)
                )
    release.set()
    assert announcements_sent()
    # then they went in one more round trip: each topic once at its highest seq, in the order
    # the topics came, and the key raised once to its highest.
    assert [messages for messages, _ in trips] == [["7:1"], ["7:3", "f12:40"]]
    if trips[1][1]:  # the feed is on the cache's own Redis: the raise went with them
        assert trips[1][1] == [("piled:seq", 3, 60)]
        assert cache.get("piled:seq") == 3
    assert heard() == ["7:1", "7:3", "f12:40"]


def test_a_moves_answer_does_not_wait_for_its_announcements(
    players: Any, heard: Any, held: tuple[threading.Event, threading.Event]
) -> None:
    from tests.games.decks import scripted_move

    started, release = held
    hand_id = start_table(players)["hand"]
    release.set()  # the deal's announcements go
    assert announcements_sent()
    release.clear()
    started.clear()
    view = next(
        v
        for v in (p.client.get(f"/api/v1/hands/{hand_id}").json() for p in players)
        if v["legal_moves"]
    )
    heard()  # what the deal announced
    # a move is answered while its announcements are still waiting to be sent,
    r = players[view["my_seat"]].client.post(
        f"/api/v1/hands/{hand_id}/moves", scripted_move(view["legal_moves"]), format="json"
    )
    assert r.status_code == 201, r.content
    assert started.wait(10) and heard(0.2) == []
    # and they are heard once they are.
    release.set()
    assert announcements_sent()
    assert f"{hand_id}:{view['seq'] + 1}" in heard()


def test_batches_nest_and_the_outermost_sends(round_trips: list[list[str]]) -> None:
    with announcements_batched():
        with announcements_batched(), transaction.atomic():
            announce_on_commit(9, 1)
        assert announcements_sent() and round_trips == []
        with transaction.atomic():
            announce_on_commit("f9", 2)
    assert announcements_sent()
    assert round_trips == [["9:1", "f9:2"]]


def test_a_forked_child_announces_through_its_own_announcer(
    heard: Any, held: tuple[threading.Event, threading.Event]
) -> None:
    import multiprocessing

    started, release = held
    # Given the parent's announcer in the middle of a send, with more queued behind it
    announce.announce("f1", 1)
    assert started.wait(10)
    announce.announce("f3", 1)

    def child() -> None:
        announce._publish = announce._publish.__wrapped__  # type: ignore[attr-defined]
        announce.announce("f2", 7)
        raise SystemExit(0 if announcements_sent(5) else 1)

    # when a process forked now announces,
    process = multiprocessing.get_context("fork").Process(target=child)
    process.start()
    process.join(20)
    # then its own announcer sent it (the parent's queue is not the child's to send);
    assert process.exitcode == 0
    assert heard() == ["f2:7"]
    # and the parent's is sent by the parent once its send goes on.
    release.set()
    assert announcements_sent()
    assert heard() == ["f1:1", "f3:1"]


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
    assert announcements_sent()
    assert failures() - before == 1
    assert "could not announce 10:1, f1:1" in caplog.text


def test_a_deal_and_a_move_each_announce_in_one_round_trip(
    players: Any, round_trips: list[list[str]], redis_url: str
) -> None:
    # a deal: the hand, its four players' feeds, the table and the lobby
    hand_id = start_table(players)["hand"]
    assert announcements_sent()
    deal = round_trips[-1]  # (with what the announcer had not sent yet before it, if anything)
    assert f"{hand_id}:0" in deal
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
    assert announcements_sent()
    assert len(round_trips) == before + 1
    record, *entries = round_trips[-1]
    # its record first, whole (the other web workers carry their copy of the hand on by it:
    # hand_store.hand_move_heard), then the hand's seq and the feeds
    assert isinstance(record, announce.Record)
    assert record.make().startswith(f"m{hand_id}:{view['seq'] + 1} {{")
    assert entries[0] == f"{hand_id}:{view['seq'] + 1}"
    assert all(m.startswith("f") for m in entries[1:])


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
        assert announcements_sent()
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
    assert announcements_sent()
    assert (failures("publish") - before[0], failures("hand_feed") - before[1]) == (1, 1)
    assert "could not raise hand:10:seq" in caplog.text
    assert "could not announce 10:1" in caplog.text


def test_a_round_trips_announcements_are_one_message(
    whole_messages: Any, round_trips: list[list[str]]
) -> None:
    # Given a subscriber that keeps each message whole (whole_messages)
    # when a transaction announces a hand and three feeds, and another more than a message
    # holds
    with announcements_batched(), transaction.atomic():
        for topic, seq in ((7, 3), ("f1", 5), ("f2", 6), ("f3", 7)):
            announce_on_commit(topic, seq)
    assert announcements_sent()
    many = [(f"f{i}", i) for i in range(1, ENTRIES_PER_MESSAGE + 3)]
    with announcements_batched(), transaction.atomic():
        for topic, seq in many:
            announce_on_commit(topic, seq)
    assert announcements_sent()
    messages = whole_messages()
    # then the first is one message, the second two (the first of them full), in their order
    assert messages[0] == "7:3 f1:5 f2:6 f3:7"
    assert [len(m.split(" ")) for m in messages[1:]] == [ENTRIES_PER_MESSAGE, 2]
    assert [p for m in messages[1:] for p in parse_announcements(m)] == many


def test_a_message_parses_to_its_entries_and_skips_what_is_garbled() -> None:
    assert parse_announcements(b"7:3") == [(7, 3)]  # a message of before: one entry
    assert parse_announcements("7:3 f12:40 lobby:9") == [(7, 3), ("f12", 40), ("lobby", 9)]
    assert parse_announcements("7:3 nonsense f2:x t5:9  ") == [(7, 3), ("t5", 9)]
    assert (
        parse_announcements(" ".join(["f1:1"] * (ENTRIES_PER_MESSAGE + 5)))
        == [("f1", 1)] * ENTRIES_PER_MESSAGE
    )  # (a message never carries more)
    assert parse_announcements(b"\xff\xfe") == []


def test_held_announcements_go_to_the_announcer_only_when_released(
    heard: Any, round_trips: list[list[str]]
) -> None:
    # given: a batch (a move's commit) and an announcement without one, inside a held block
    with announcements_held() as kept:
        with announcements_batched(), transaction.atomic():
            announce_on_commit(7, 5)
            announce_on_commit("f12", 41)
        with transaction.atomic():
            announce_on_commit(8, 2)
    # then: nothing is handed over, even after the block (the answer is not written yet)
    assert announcements_sent()
    assert round_trips == [] and heard(0.2) == []
    # and all of it once released, as it would have gone (the batch in one round trip), once
    kept.release()
    kept.release()
    assert announcements_sent()
    # (the two hand-overs in one round trip or two: what piles up goes together)
    assert sorted(entry for trip in round_trips for entry in trip) == ["7:5", "8:2", "f12:41"]
    assert sorted(heard()) == ["7:5", "8:2", "f12:41"]
    # and what is announced into it once released (a request's thread still committing after
    # its event loop gave up on it) goes at once
    with announcements_held(kept), transaction.atomic():
        announce_on_commit(9, 1)
    assert announcements_sent()
    assert round_trips[-1] == ["9:1"] and heard() == ["9:1"]


def test_a_record_goes_whole_before_the_seq_entries_and_is_never_merged(
    whole_messages: Any, caplog: pytest.LogCaptureFixture
) -> None:
    made_in: list[str] = []

    def record(text: str) -> Any:
        def make() -> str:
            made_in.append(threading.current_thread().name)
            return text

        return make

    def failing() -> str:
        raise ValueError("no record")

    # when two transactions of one round trip announce seqs and records (one that fails to
    # be made)
    with announcements_batched():
        with transaction.atomic():
            announce_on_commit(7, 3)
            transaction.on_commit(lambda: announce.announce_record(record("m7:3 {}")))
            announce_on_commit("f1", 5)
        with transaction.atomic():
            transaction.on_commit(lambda: announce.announce_record(failing))
            transaction.on_commit(lambda: announce.announce_record(record('m7:4 {"a": 1}')))
            announce_on_commit(7, 4)
    assert announcements_sent()
    messages = whole_messages()
    # then the records go first, each whole in a message of its own and in their order, then
    # the seq entries merged (the hand once, at its highest seq); the failing one is logged
    assert messages == ["m7:3 {}", 'm7:4 {"a": 1}', "7:4 f1:5"]
    assert made_in == ["chan-announcer", "chan-announcer"]  # (made in the announcer's thread)
    assert "could not make a record to announce" in caplog.text
    # and the entries' parser skips a record (an older process hears nothing wrong)
    assert parse_announcements('m7:3 {"seat":1,"card":"x"}') == []
