"""``manage.py check_hands`` (every cached state is the replay of its log, each hand read with
its log in one snapshot), ``play_bots`` and ``audit_hands`` (stored hands verified as their
exports, with their ledger rows); both report every hand whose record was changed behind the
database's guards at its first bad seq, and go on; both report every event (and ``audit_hands``
every settlement) the record key does not vouch for."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections
from django.utils import timezone

from accounts.record_keys import new_record_key, record_keys
from games.hand_store import hand_state, hand_store_problems
from games.models import Hand
from games.rules.engine import apply
from games.rules.moves import move_from_dict
from games.rules.replay import EVENT_VERSION, move_effects
from games.services.quan_booking import hand_settle
from tests.db_owner import as_owner
from tests.forgery import hand_event_forge
from tests.games.conftest import hand_guard_off
from tests.games.decks import WIN_SEAT
from tests.games.tampering import PAYLOAD_SEQ, expected_reports, first_reports, tampered_hands
from tests.games.test_games_hands_api import play_to_end

pytestmark = pytest.mark.django_db


def test_check_hands_passes_on_played_hands(players, win_hand, capsys) -> None:
    players[0].client.post(
        f"/api/v1/hands/{win_hand['hand']}/moves", {"type": "discard", "card": "2N"}, format="json"
    )
    call_command("check_hands")
    assert "1 hand(s) checked" in capsys.readouterr().out


def test_check_hands_reports_a_hand_whose_seq_is_not_its_logs(
    players, win_hand, corrupts_cache
) -> None:
    with hand_guard_off():  # as the owner, past the hand row's guard
        Hand.objects.filter(pk=win_hand["hand"]).update(seq=99)
    with pytest.raises(CommandError):
        call_command("check_hands", hand=[win_hand["hand"]])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "summary"),
    [("check_hands", r"{} problem\(s\) in 4 hand\(s\)"), ("audit_hands", r"{} mismatch\(es\)")],
)
def test_a_checker_reports_every_tampered_hand_at_its_first_bad_seq_and_goes_on(
    make_user, corrupts_cache, command: str, summary: str
) -> None:
    # Given hands the database owner changed behind the guards (a payload, a seed, the order
    # of two events) and one left alone,
    hands = tampered_hands(make_user)
    # the command names each changed hand with its first bad seq and why, then every event
    # whose hash the owner recomputed without the record key, and exits 1.
    rechained = range(PAYLOAD_SEQ, hands.payload.seq + 1)
    err = StringIO()
    with pytest.raises(CommandError, match=summary.format(3 + len(rechained))) as failed:
        call_command(command, stderr=err)
    assert failed.value.returncode == 1
    assert first_reports(err.getvalue(), hands) == expected_reports(hands)
    assert [line for line in err.getvalue().splitlines() if "MAC" in line] == [
        f"hand {hands.payload.pk}: discrepancy at seq {seq}: its MAC is not the record key's MAC "
        "of its hash"
        for seq in rechained
    ]


@pytest.mark.django_db(transaction=True)
def test_check_hands_reads_a_hand_and_its_log_in_one_snapshot(
    players, win_hand, monkeypatch
) -> None:
    # Given a scan that, once it has read the hand's row, lets a move commit on another
    # connection before it reads the hand's log,
    answers: list[int] = []

    def move_elsewhere() -> None:
        try:
            r = players[0].client.post(
                f"/api/v1/hands/{win_hand['hand']}/moves",
                {"type": "discard", "card": "2N"},
                format="json",
            )
            answers.append(r.status_code)
        finally:
            connections.close_all()

    def moved_then_checked(hand: Hand) -> list[str]:
        if not answers:
            mover = threading.Thread(target=move_elsewhere)
            mover.start()
            mover.join(timeout=60)
        return hand_store_problems(hand)

    monkeypatch.setattr(
        "games.management.commands.check_hands.hand_store_problems", moved_then_checked
    )
    # the check sees the hand before the move in both (no "hand.seq is 0 but the log ends at
    # 1"): one snapshot,
    out = StringIO()
    call_command("check_hands", stdout=out)
    assert answers == [201]
    assert "1 hand(s) checked: every one is the replay of its log." in out.getvalue()
    # and the next scan sees the move in both.
    assert Hand.objects.get(pk=win_hand["hand"]).seq == 1
    call_command("check_hands", stdout=StringIO())


@pytest.mark.slow
def test_play_bots_settles_every_hand_and_the_books_reconcile() -> None:
    out = StringIO()
    call_command("play_bots", hands=12, seed=3, stdout=out)
    text = out.getvalue()
    assert "12 hands in" in text and "ledger ok" in text
    assert Hand.objects.filter(status="ended", settled_at__isnull=False).count() == 12


# --------------------------------------------------------------------------- audit_hands


def ended_and_booked(players, hand: dict) -> Hand:
    play_to_end(players, hand)
    hand_settle(hand_id=hand["hand"])
    return Hand.objects.get(pk=hand["hand"])


def test_audit_hands_verifies_ended_hands_and_their_ledger_rows(players, win_hand) -> None:
    ended_and_booked(players, win_hand)
    out = StringIO()
    call_command("audit_hands", stdout=out)
    assert out.getvalue().startswith("1 hand(s) verified")
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    out = StringIO()
    call_command("audit_hands", "--since", tomorrow, stdout=out)
    assert out.getvalue().startswith("0 hand(s) verified")


def test_audit_hands_fails_on_a_log_tampered_behind_the_triggers(
    players, win_hand, corrupts_cache
) -> None:
    # Given a booked hand whose declaration a database superuser rewrote in the log (the
    # append-only triggers do not fire for a session replicating: the one way past them),
    hand = ended_and_booked(players, win_hand)
    declare = hand.seq - 1  # the last move, before the settlement's record
    with connection.cursor() as cursor:
        as_owner("SET LOCAL session_replication_role = replica")
        cursor.execute(
            "UPDATE games_handevent SET payload = %s::jsonb WHERE hand_id = %s AND seq = %s",
            [
                json.dumps({"type": "declare", "seat": WIN_SEAT, "cuoc": {"tom": 1}}),
                hand.pk,
                declare,
            ],
        )
        as_owner("SET LOCAL session_replication_role = DEFAULT")
    # the audit reports the first discrepancy of its export and exits 1: the event's hash no
    # longer matches its content (games.rules.chain), before the replay judges it again.
    err = StringIO()
    with pytest.raises(CommandError, match="mismatch"):
        call_command("audit_hands", hand=[hand.pk], stderr=err)
    assert (
        f"hand {hand.pk}: discrepancy at seq {declare}: its hash is not the SHA-256 of its content"
    ) in err.getvalue()


def test_audit_hands_fails_on_a_result_that_is_not_the_replays(
    players, win_hand, corrupts_cache
) -> None:
    hand = ended_and_booked(players, win_hand)
    result = hand.result
    result["settlement"]["transfers"][0]["points"] += 1
    with hand_guard_off():  # as the owner, past the hand row's guard
        Hand.objects.filter(pk=hand.pk).update(result=result)
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("audit_hands", stderr=err)
    text = err.getvalue()
    last_move = hand.seq - 1  # the settlement's record comes after it
    assert f"hand {hand.pk}: discrepancy at seq {last_move}: the result's settlement" in text
    assert f"hand {hand.pk}: the stored points settlement is not the replay's" in text
    with pytest.raises(CommandError):
        call_command("audit_hands", hand=[hand.pk + 1], stderr=StringIO())


# --------------------------------------------------------------------------- the record key


def forged_discard(hand_id: int, **mac: tuple[str, str]) -> int:
    """chan_app's forgery: the dealer's legal discard appended to a playing hand's log, its
    effects the rules', its hash chained to the last event's, and the hand's seq moved to it."""
    hand = Hand.objects.get(pk=hand_id)
    move = move_from_dict({"type": "discard", "card": "2N"}, seat=0)
    after = apply(hand_state(hand), move)
    effects = json.loads(json.dumps(move_effects(after)))
    payload = {**move.to_dict(), "v": EVENT_VERSION}
    seq = hand_event_forge(
        hand=hand, type="discard", actor_seat=0, payload=payload, effects=effects, **mac
    )
    with connection.cursor() as cursor:
        cursor.execute("UPDATE games_hand SET seq = %s WHERE id = %s", [seq, hand_id])
    return seq


def test_check_hands_reports_an_event_forged_with_the_application_credentials(
    players, win_hand, corrupts_cache
) -> None:
    # Given a legal move chan_app appended to a hand's log, chained as anyone can chain it,
    seq = forged_discard(win_hand["hand"])
    # check_hands names the hand and the event, and exits 1.
    err = StringIO()
    with pytest.raises(CommandError, match=r"1 problem\(s\) in 1 hand\(s\)"):
        call_command("check_hands", stderr=err)
    assert err.getvalue().splitlines() == [
        f"hand {win_hand['hand']}: discrepancy at seq {seq}: it carries no MAC, after a row "
        "that does"
    ]


def test_check_hands_reports_every_event_with_a_made_up_mac_and_goes_on(
    players, win_hand, corrupts_cache
) -> None:
    forged_discard(win_hand["hand"], mac=("cd" * 32, record_keys().signing))
    hand = Hand.objects.get(pk=win_hand["hand"])
    assert hand_store_problems(hand) == [
        f"discrepancy at seq {hand.seq}: its MAC is not the record key's MAC of its hash"
    ]


def test_audit_hands_reports_a_forged_event_and_an_unkeyed_settlement(
    players, win_hand, corrupts_cache, settings
) -> None:
    # Given a booked hand whose events and settlement were written under a key since dropped,
    hand = ended_and_booked(players, win_hand)
    settings.CHAN_RECORD_KEY = new_record_key("other")
    # the audit lists every event and the settlement transaction, and exits 1.
    err = StringIO()
    with pytest.raises(CommandError, match="mismatch"):
        call_command("audit_hands", hand=[hand.pk], stderr=err)
    lines = err.getvalue().splitlines()
    assert len(lines) == hand.seq + 2  # seq 0 … hand.seq, then the ledger transaction
    assert all("which is not a record key" in line for line in lines)
    assert lines[-1].startswith(f"hand {hand.pk}: discrepancy at seq ")
    assert "the ledger transaction" in lines[-1]
