"""A move another process committed, heard from its announced record (the twentieth
round): a process that keeps the hand as it was before that move carries its copy and its state
on by the record, so the hand's next move sent to it is made in one flight; a record that does
not follow the copy (the row written in between, another seats' version or table, a content
that is not the hash's, a gap) carries nothing on and the move is made the two-flight way on the
row as it is. The records of a hand this process keeps no copy of are not even parsed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from prometheus_client import REGISTRY

from games import hand_store
from games.hand_store import hand_move_heard, hand_replay, hand_state, state_lru
from games.models import Hand
from tests.games.test_games_move_one_flight import _counted, _log_is_whole
from tests.games.test_games_move_round_trips import _turn_move
from tests.games.test_games_services import deal, submit

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def records(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The records the moves committed here announce, as another process hears them."""
    made: list[bytes] = []
    monkeypatch.setattr(hand_store, "announce_record", lambda make: made.append(make().encode()))
    return made


def _heard(folded: str) -> float:
    return REGISTRY.get_sample_value("chan_moves_heard_total", {"folded": folded}) or 0.0


def _moved_elsewhere(
    make_user: Any, records: list[bytes], *, seed: int, moves: int = 1
) -> tuple[list, Hand]:
    """A hand this process committed at seq 1, then moved ``moves`` more times by "another
    process": those moves are made here, their records kept (``records``, in seq order), and
    this process's copy and states put back as they were at seq 1 (the later ones forgotten)."""
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=seed)
    user, move = _turn_move(hand, users)
    submit(hand, user, move)
    stale = hand_store.hand_committed_last(hand.pk)
    assert stale is not None and stale.seq == 1
    records.clear()
    for seq in range(2, 2 + moves):
        user, move = _turn_move(hand, users)
        submit(hand, user, move)
        assert records[-1].startswith(f"m{hand.pk}:{seq} ".encode())
    assert len(records) == moves
    hand_store.hand_committed_keep(stale)
    state_lru.clear()
    state_lru.put((hand.pk, 1, hand.seed_hash), hand_replay(stale, upto=1), hand.created_at)
    return users, hand


def test_a_move_heard_from_another_process_makes_the_next_move_one_flight(
    make_user, records: list[bytes]
) -> None:
    # Given a hand this process keeps at seq 1, moved to seq 2 elsewhere, whose record it hears
    users, hand = _moved_elsewhere(make_user, records, seed=71)
    folded = _heard("yes")
    assert hand_move_heard(records[0])
    # when the seat to act moves
    user, move = _turn_move(hand, users)
    result, counted = _counted(lambda: submit(hand, user, move))
    # then it was made in one flight on the copy carried on to seq 2, once, and the log is whole
    assert result.status == 201 and result.body["seq"] == 3
    assert counted == {"one": 1, "refused": 0, "two": 0}
    assert _heard("yes") - folded == 1
    _log_is_whole(hand)


def test_the_copy_carried_on_is_the_row_and_its_state_the_replay(
    make_user, records: list[bytes]
) -> None:
    users, hand = _moved_elsewhere(make_user, records, seed=72)
    assert hand_move_heard(records[0])
    carried = hand_store.hand_committed_last(hand.pk)
    hand.refresh_from_db()
    assert carried is not None and carried.seq == hand.seq == 2
    for field in ("updated_at", "last_event_at", "deadline_at", "seats_version", "status"):
        assert getattr(carried, field) == getattr(hand, field), field
    assert carried.table.updated_at == hand.table.updated_at
    assert hand_state(carried) == hand_replay(hand, upto=2)
    # (the long polls' renders find it too, at its seq and seats' version)
    assert hand_store.hand_committed_at(hand.pk, 2, hand.seats_version) is not None


def _tampered(record: bytes, **changes: Any) -> bytes:
    head, _, body = record.partition(b" ")
    fields = json.loads(body)
    for name, value in changes.items():
        fields[name] = value(fields[name]) if callable(value) else value
    return head + b" " + json.dumps(fields).encode()


@pytest.mark.parametrize(
    "changes",
    [
        # the row written in between by something else (its updated_at is not the copy's)
        {"before": "2001-01-01T00:00:00+00:00"},
        # another seats' version, another table's state
        {"seats_version": lambda v: v + 1},
        {"table_updated_at": "2001-01-01T00:00:00+00:00"},
        # a content that is not the hash's (a card changed), or a hash not chained to the copy's
        {"payload": lambda p: {**p, "seat": (p.get("seat", 0) + 1) % 4}},
        {"hash": "0" * 64},
        # another deal of the hand
        {"seed_hash": "f" * 64},
    ],
    ids=["before", "seats_version", "table", "payload", "hash", "seed"],
)
def test_a_record_that_does_not_follow_carries_nothing_on(
    make_user, records: list[bytes], changes: dict[str, Any]
) -> None:
    users, hand = _moved_elsewhere(make_user, records, seed=73)
    dropped = _heard("no")
    assert hand_move_heard(_tampered(records[0], **changes))  # (kept: judged when folded)
    # when the seat to act moves
    user, move = _turn_move(hand, users)
    result, counted = _counted(lambda: submit(hand, user, move))
    # then the copy stayed at seq 1 and the move was made on the row, once
    assert _heard("no") - dropped == 1
    assert counted["one"] == 0 and counted["refused"] + counted["two"] == 1
    assert result.status == 201 and result.body["seq"] == 3
    _log_is_whole(hand)


def test_a_gap_carries_nothing_on_and_what_follows_it_waits(
    make_user, records: list[bytes]
) -> None:
    # Given a hand kept at seq 1 and moved to 3 elsewhere, of whose moves only 3's is heard
    users, hand = _moved_elsewhere(make_user, records, seed=74, moves=2)
    second, third = records
    assert hand_move_heard(third)
    # then the copy stays at 1, and once 2's record comes both carry it on to 3
    assert hand_store.hand_committed_last(hand.pk).seq == 1
    assert hand_move_heard(second)
    carried = hand_store.hand_committed_last(hand.pk)
    hand.refresh_from_db()
    assert carried.seq == 3 and carried.updated_at == hand.updated_at
    # and the next move is one flight
    user, move = _turn_move(hand, users)
    result, counted = _counted(lambda: submit(hand, user, move))
    assert counted == {"one": 1, "refused": 0, "two": 0} and result.body["seq"] == 4
    _log_is_whole(hand)


def test_a_record_is_kept_only_for_a_hand_kept_at_an_earlier_seq(
    make_user, records: list[bytes]
) -> None:
    users, hand = _moved_elsewhere(make_user, records, seed=75)
    record = records[0]
    assert not hand_move_heard(record.replace(f"m{hand.pk}:".encode(), b"m999999999:", 1))
    assert not hand_move_heard(record.replace(f"m{hand.pk}:2 ".encode(), f"m{hand.pk}:1 ".encode()))
    assert not hand_move_heard(b"m12:x {}")
    assert not hand_move_heard(f"m{hand.pk}:2".encode())  # (no body)
    assert hand_move_heard(record)
    # at most HEARD_PER_HAND records wait for a hand
    for seq in range(3, 3 + hand_store.HEARD_PER_HAND):
        hand_move_heard(f"m{hand.pk}:{seq} {{}}".encode())
    assert not hand_move_heard(f"m{hand.pk}:{100} {{}}".encode())


def test_a_move_that_ends_the_hand_or_sets_preferences_makes_no_record(
    make_user, records: list[bytes]
) -> None:
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=76)
    user, move = _turn_move(hand, users)
    records.clear()
    prefs = {"type": "set_prefs", "auto_u": not hand_state(hand).seats[0].auto_u}
    submit(hand, users[0], prefs)
    assert records == []
    submit(hand, user, move)
    assert len(records) == 1
    # and played to its end, every move leaving it playing makes one, the last none
    records.clear()
    while True:
        hand.refresh_from_db()
        if hand.status != Hand.Status.PLAYING:
            break
        user, move = _turn_move(hand, users)
        submit(hand, user, move)
    last_seq = hand.seq
    assert not any(r.startswith(f"m{hand.pk}:{last_seq} ".encode()) for r in records)
    assert all(r.startswith(f"m{hand.pk}:".encode()) for r in records)
