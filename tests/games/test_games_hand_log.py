"""A hand's settlement and void in its log (``games.services.hand_log``): ``hand_settle`` appends a
``settled`` record and ``hand_void`` a ``voided`` one, each in its ledger posting's transaction;
the hand's seq and ETag move, every viewer's event feed shows them, and the replays (store,
viewer, export, verifier, check_hands, audit_hands) skip them as the non-moves they are."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import LedgerTransaction
from accounts.services import token_create
from games.admin import hand_replay_steps
from games.hand_store import hand_replay, hand_state, state_lru
from games.models import Hand, HandEvent, HandSeat
from games.rules.verify import verify_export
from games.services.hands import hand_clock_tick
from games.services.quan_booking import hand_settle, settlement_key
from games.services.void import hand_void
from tests.db_owner import as_owner
from tests.games.conftest import client_with
from tests.games.tampering import tampered_hands
from tests.games.test_games_hands_api import make_auditor, play_to_end
from tests.games.test_games_practice import FAR_FUTURE, create, play_human_move

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user) -> Any:
    user, _ = make_user(username="boss", is_staff=True, is_superuser=True)
    return user


def events_of(player: Any, hand_id: int, **query: Any) -> list[dict[str, Any]]:
    r = player.client.get(f"/api/v1/hands/{hand_id}/events", query)
    assert r.status_code == 200, r.content
    return r.json()["events"]


def test_settling_appends_one_settled_record_and_moves_the_etag(
    players, win_hand, make_player
) -> None:
    # Given a hand played to its end, its view held by a client with its ETag,
    play_to_end(players, win_hand)
    hand_id = win_hand["hand"]
    url = f"/api/v1/hands/{hand_id}"
    ended = players[1].client.get(url)
    etag, seq = ended["ETag"], ended.json()["seq"]
    assert ended.json()["settlement"]["quan"] is None
    assert players[1].client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    # when its settlement is booked (twice: the second books and appends nothing),
    tx = hand_settle(hand_id=hand_id)
    assert tx is not None and hand_settle(hand_id=hand_id) == tx
    hand = Hand.objects.get(pk=hand_id)
    # its log gains exactly one settled record, the system's, right after the last move,
    records = list(HandEvent.objects.filter(hand=hand, seq__gt=seq))
    assert [(e.seq, e.type, e.system, e.actor_seat) for e in records] == [
        (seq + 1, "settled", True, None)
    ]
    assert hand.seq == seq + 1
    record = records[0].payload
    # holding each seat's Quan, the fees, the pot, the caps and the ledger transaction — but
    # not the wallet balances the booking read,
    assert record == {
        "type": "settled",
        "seats": hand.quan["seats"],
        "fees": hand.quan["fees"],
        "fee_percent": hand.quan["fee_percent"],
        "pot": hand.quan["pot"],
        "capped": hand.quan["capped"],
        "dropped": hand.quan["dropped"],
        "practice": False,
        "transaction": tx.pk,
    }
    assert "balances" not in record and "pot_before" not in record
    # the client's old ETag no longer matches: a 200 with the Quan and a new ETag,
    r = players[1].client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert r.status_code == 200 and r["ETag"] == f'"{hand_id}-{seq + 1}"' != etag
    assert r.json()["seq"] == seq + 1 and r.json()["settlement"]["quan"] == hand.quan
    # and every participant's and a spectator's event feed shows the same record.
    spectator = make_player()
    for viewer in [*players, spectator]:
        last = events_of(viewer, hand_id, after_seq=seq)
        assert [(e["seq"], e["type"], e["move"], e["record"]) for e in last] == [
            (seq + 1, "settled", None, record)
        ]
    moves = events_of(players[0], hand_id)
    assert all(e["record"] is None for e in moves[:-1]) and moves[-1]["record"] == record


def test_a_failure_after_the_ledger_posting_rolls_the_record_back_with_it(
    players, win_hand
) -> None:
    # Given an ended hand, and a database that refuses its settled record (a trigger the
    # owner adds: the application may not),
    play_to_end(players, win_hand)
    hand_id = win_hand["hand"]
    seq = Hand.objects.get(pk=hand_id).seq
    as_owner(
        """
            CREATE FUNCTION public.test_refuse_settled() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.type = 'settled' THEN
                    RAISE EXCEPTION 'no settled record today';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER test_refuse_settled BEFORE INSERT ON games_handevent
            FOR EACH ROW EXECUTE FUNCTION public.test_refuse_settled();
            """
    )
    # when the booking runs (the ledger posting comes before the record),
    with pytest.raises(Exception, match="no settled record today"):
        hand_settle(hand_id=hand_id)
    # nothing of it stays: no ledger transaction, no settlement on the hand, no record.
    assert not LedgerTransaction.objects.filter(idempotency_key=settlement_key(hand_id)).exists()
    hand = Hand.objects.get(pk=hand_id)
    assert (hand.settled_at, hand.quan, hand.seq) == (None, None, seq)
    assert not HandEvent.objects.filter(hand=hand, type="settled").exists()
    # Once the database takes it again, the booking and its record land together.
    as_owner("DROP TRIGGER test_refuse_settled ON games_handevent")
    tx = hand_settle(hand_id=hand_id)
    assert tx is not None
    record = HandEvent.objects.get(hand_id=hand_id, type="settled")
    assert record.seq == seq + 1 and record.payload["transaction"] == tx.pk


def test_a_void_appends_voided_and_moves_the_etag(players, win_hand, staff) -> None:
    # Given a settled hand, its view held with its ETag,
    play_to_end(players, win_hand)
    hand_id = win_hand["hand"]
    hand_settle(hand_id=hand_id)
    url = f"/api/v1/hands/{hand_id}"
    held = players[2].client.get(url)
    etag, seq = held["ETag"], held.json()["seq"]
    # when staff void it (twice: the repeat appends nothing),
    reversal = hand_void(hand_id=hand_id, staff=staff, reason="collusion")
    hand_void(hand_id=hand_id, staff=staff, reason="collusion")
    # one voided record follows the settled one: who, why, the reversing transaction,
    records = list(HandEvent.objects.filter(hand_id=hand_id, seq__gt=seq).values("seq", "payload"))
    voided = {"type": "voided", "by": "boss", "reason": "collusion", "transaction": reversal.pk}
    assert records == [{"seq": seq + 1, "payload": voided}]
    # and the ETag moves: the old one gets a 200 at the new seq, the players' feeds show it.
    r = players[2].client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert r.status_code == 200 and r["ETag"] == f'"{hand_id}-{seq + 1}"'
    for p in players:
        assert [e["record"] for e in events_of(p, hand_id, after_seq=seq)] == [voided]


def test_replays_exports_and_audits_skip_the_records(players, win_hand, staff, make_player) -> None:
    # Given a settled, then voided hand (two records after its last move),
    play_to_end(players, win_hand)
    hand_id = win_hand["hand"]
    last_move = Hand.objects.get(pk=hand_id).seq
    ended_state = hand_replay(Hand.objects.get(pk=hand_id))
    hand_settle(hand_id=hand_id)
    hand_void(hand_id=hand_id, staff=staff, reason="collusion")
    hand = Hand.objects.get(pk=hand_id)
    assert hand.seq == last_move + 2
    # the replay at the last seq and at each record's is the ended state, not refused,
    state_lru.clear()
    assert hand_replay(hand) == ended_state
    assert hand_replay(hand, upto=last_move + 1) == ended_state
    replay = players[0].client.get(f"/api/v1/hands/{hand_id}/replay", {"seq": last_move + 2})
    assert replay.status_code == 200 and replay.json()["seq"] == last_move + 2
    # the admin viewer steps through them (the state unchanged),
    steps = hand_replay_steps(hand)["steps"]
    assert [s["type"] for s in steps[-2:]] == ["settled", "voided"]
    assert steps[-1]["view"] == steps[-2]["view"] == steps[-3]["view"]
    # the export lists them and verifies offline,
    auditor = make_auditor(make_player)
    doc = auditor.client.get(f"/api/v1/hands/{hand_id}/export").json()
    assert [e["type"] for e in doc["events"][-2:]] == ["settled", "voided"]
    assert verify_export(doc) is None
    # and check_hands, audit_hands and ledger_check are clean.
    for command in ("check_hands", "audit_hands", "ledger_check"):
        call_command(command, stdout=StringIO())


def test_the_verifier_refuses_a_settled_record_that_is_not_the_booking(
    players, win_hand, make_player
) -> None:
    play_to_end(players, win_hand)
    hand_id = win_hand["hand"]
    hand_settle(hand_id=hand_id)
    doc = make_auditor(make_player).client.get(f"/api/v1/hands/{hand_id}/export").json()
    assert verify_export(doc) is None
    record_seq = doc["events"][-1]["seq"]
    # A forged record breaks the hash chain first (games.rules.chain); without the chain (an
    # export made before it) the record's own checks catch each forgery below.
    forged = json.loads(json.dumps(doc))
    forged["events"][-1]["payload"]["seats"][0]["net"] += 1
    found = verify_export(forged)
    assert found is not None and found.seq == doc["events"][-1]["seq"] and "hash" in found.reason
    doc.pop("chain")
    # A record whose Quan are not the booked ones,
    forged = json.loads(json.dumps(doc))
    forged["events"][-1]["payload"]["seats"][0]["net"] += 1
    found = verify_export(forged)
    assert found is not None and found.seq == record_seq and "settled record" in found.reason
    # a record that claims another transaction,
    forged = json.loads(json.dumps(doc))
    forged["events"][-1]["payload"]["transaction"] += 1
    assert verify_export(forged) is not None
    # a record moved before the last move (the seqs swapped),
    forged = json.loads(json.dumps(doc))
    events = forged["events"]
    events[-1], events[-2] = events[-2], events[-1]
    events[-1]["seq"], events[-2]["seq"] = events[-2]["seq"], events[-1]["seq"]
    found = verify_export(forged)
    assert found is not None and found.seq == record_seq - 1 and "before" in found.reason
    # and a second one, are all discrepancies.
    forged = json.loads(json.dumps(doc))
    forged["events"].append({**forged["events"][-1], "seq": record_seq + 1})
    found = verify_export(forged)
    assert found is not None and found.seq == record_seq + 1 and "second" in found.reason


def test_a_practice_hand_is_settled_in_its_log_too(make_player) -> None:
    # A practice hand books no Quan, but its settlement is a record all the same (its ETag
    # moves and a long poll on it stops waiting).
    player = make_player()
    table_id = create(player, bots=3).json()["id"]
    hand_id = player.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json").json()[
        "hand_id"
    ]
    for _ in range(500):
        hand = Hand.objects.get(pk=hand_id)
        if hand.status == Hand.Status.ENDED:
            break
        if hand.seat_list()[hand_state(hand).turn].user_id == player.id:
            play_human_move(player, hand_id)
        else:
            hand_clock_tick(hand_id=hand_id, now=timezone.now() + FAR_FUTURE)
    seq = Hand.objects.get(pk=hand_id).seq
    assert hand_settle(hand_id=hand_id) is None
    hand_settle(hand_id=hand_id)
    [record] = events_of(player, hand_id, after_seq=seq)
    assert record["type"] == "settled" and record["record"]["practice"] is True
    assert record["record"]["transaction"] is None
    assert {s["net"] for s in record["record"]["seats"]} == {0}
    call_command("audit_hands", hand=[hand_id], stdout=StringIO())


def test_the_database_refuses_a_record_with_a_seat_or_at_seq_0(players, win_hand) -> None:
    play_to_end(players, win_hand)
    hand = Hand.objects.get(pk=win_hand["hand"])
    bad = [
        {"seq": hand.seq + 1, "actor_seat": 0, "payload": {"type": "settled", "seat": 0}},
        {"seq": hand.seq + 1, "system": False, "actor_seat": None},
        {"seq": 0, "actor_seat": None},
    ]
    for fields in bad:
        fields = {"type": "settled", "system": True, "payload": {"type": "settled"}, **fields}
        with pytest.raises(IntegrityError), transaction.atomic():
            HandEvent.objects.create(hand=hand, **fields)


def test_the_lock_reads_the_hash_the_next_event_chains_to(players, win_hand) -> None:
    # given: a hand a few moves in
    from games.hand_store import hand_last_hash_kept
    from games.services.hands import hand_lock
    from tests.games.test_games_live_render import play

    play(players, win_hand, 3)
    last = HandEvent.objects.filter(hand_id=win_hand["hand"]).order_by("-seq").first()
    # when: the hand is locked (its fixed statement)
    with transaction.atomic():
        hand = hand_lock(win_hand["hand"])
    # then: its row, its table and the last event's hash, read from its partition
    assert hand is not None and hand.seq == last.seq == 3
    assert hand.table.pk == win_hand["table"]
    assert hand_last_hash_kept(hand) == last.hash
    assert hand.seat_list()[0].user_id == players[0].id
    with transaction.atomic():
        assert hand_lock(10**12) is None


def test_a_log_changed_outside_the_server_is_a_problem_not_a_server_error(
    make_user, corrupts_cache
) -> None:
    # Given settled hands whose logs the database owner changed behind the guards,
    hands = tampered_hands(make_user)
    state_lru.clear()  # (this process kept their states from the play)
    participant = client_with(token_create(user=_seat_user(hands.payload))[1])
    # when a participant asks for the replay of the one whose move the rules now refuse,
    r = participant.get(f"/api/v1/hands/{hands.payload.pk}/replay")
    # then the answer is a 409 problem naming the broken record, not a 500,
    assert r.status_code == 409, r.content
    assert r["Content-Type"] == "application/problem+json"
    assert r.json()["code"] == "record_broken" and str(hands.payload.pk) in r.json()["detail"]
    # and a hand left alone replays as ever.
    sound = client_with(token_create(user=_seat_user(hands.sound))[1])
    assert sound.get(f"/api/v1/hands/{hands.sound.pk}/replay").status_code == 200


def _seat_user(hand: Hand) -> Any:
    return HandSeat.objects.filter(hand=hand).order_by("position").first().user
