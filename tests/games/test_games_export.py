"""``GET /api/v1/hands/{id}/export``: participants once the hand has ended, auditors any time;
the document verifies with the offline verifier, booked Quan and ledger entries included."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.holds import hold_release
from accounts.ledger import balance_adjust
from accounts.ledger_selectors import wallet_balance
from accounts.models import LedgerTransaction
from games.admin import hand_replay_steps
from games.hand_store import hand_replay
from games.models import Hand, HandEvent, Room
from games.rules.replay import as_stored
from games.rules.verify import FAIR_SHUFFLE, FIXED_SHUFFLE, verify_export
from games.services import hand_log
from games.services import hands as hand_services
from games.services.quan_booking import hand_settle
from tests.games.conftest import hand_guard_off
from tests.games.decks import BO_U_DECK, WIN_DECK, WIN_MOVES, WIN_SEAT
from tests.games.test_games_admin import logged_in
from tests.games.test_games_commands import ended_and_booked
from tests.games.test_games_hands_api import (
    assert_problem,
    drawer_passes_its_win,
    make_auditor,
    play,
    play_to_end,
    post_move,
)
from tests.games.test_games_schema import Checker

pytestmark = pytest.mark.django_db

EXPORT = "/api/v1/hands/{hand_id}/export"


def export_url(hand_id: int) -> str:
    return EXPORT.format(hand_id=hand_id)


@pytest.fixture
def check() -> Checker:
    return Checker(APIClient().get("/api/schema/?format=json").json())


def test_participants_export_after_the_end_and_auditors_any_time(
    make_player, players, win_hand, check
) -> None:
    url = export_url(win_hand["hand"])
    play(players, win_hand, 3)
    # While the hand is played: participants and strangers are refused and learn nothing.
    r = players[0].client.get(url)
    assert_problem(r, 403, "hand_not_ended")
    check(r, EXPORT, "get")
    assert Hand.objects.get(pk=win_hand["hand"]).seed.encode() not in r.content
    stranger = make_player()
    assert check(stranger.client.get(url), EXPORT, "get")["code"] == "not_a_participant"
    # An auditor reads it at once; it does not verify yet: the hand has not ended.
    auditor = make_auditor(make_player)
    live = check(auditor.client.get(url), EXPORT, "get")
    assert live["status"] == "playing" and live["result"] is None and live["ledger"] is None
    assert [e["seq"] for e in live["events"]] == [0, 1, 2, 3]
    assert verify_export(live).reason == "the hand has not ended after its last event"
    # After the end every participant may export it, and it verifies before and after booking.
    play_to_end(players, win_hand)
    doc = check(players[3].client.get(url), EXPORT, "get")
    assert doc["status"] == "ended" and doc["quan"] is None and doc["ledger"] is None
    assert verify_export(doc) is None
    hand_settle(hand_id=win_hand["hand"])
    doc = check(players[1].client.get(url), EXPORT, "get")
    assert verify_export(doc) is None
    # After the end anyone signed in may export it (the table is open to spectators).
    assert verify_export(check(stranger.client.get(url), EXPORT, "get")) is None
    assert_problem(players[0].client.get(export_url(999_999)), 404, "not_found")


def test_the_export_holds_the_whole_hand_and_its_books(players, win_hand) -> None:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    doc = players[0].client.get(export_url(win_hand["hand"])).json()
    hand = Hand.objects.get(pk=win_hand["hand"])
    assert (doc["format"], doc["version"], doc["hand_id"]) == ("chan-hand-export", 1, hand.pk)
    assert doc["table"]["id"] == win_hand["table"] and doc["room"]["slug"] == "nen-dat"
    assert doc["room"]["fees"] == {"declared": 5, "auto": 10} and doc["stake"] == 10
    assert [p["username"] for p in doc["players"]] == [p.user.username for p in players]
    assert doc["config"]["seats"] == 4 and doc["config"]["mode"] == "basic"
    assert (doc["seed"], doc["seed_hash"]) == (hand.seed, hand.seed_hash)
    # a fixed-deck test table has no shuffle: the deck itself is in the document
    assert doc["shuffle"] == FIXED_SHUFFLE and doc["deck"] == WIN_DECK
    # the deal, the moves, then the settlement's record
    assert len(doc["events"]) == WIN_MOVES + 2
    declare, settled = doc["events"][-2:]
    assert (settled["type"], settled["seat"], settled["system"]) == ("settled", None, True)
    assert settled["payload"]["transaction"] == doc["ledger"]["id"]
    assert (declare["type"], declare["seat"], declare["system"]) == ("declare", WIN_SEAT, False)
    assert declare["created_at"].endswith("Z")
    assert doc["result"]["declaration"]["verdict"] == "dung"
    assert doc["quan"] == hand.quan
    legs = {str(e["party"]): e["amount"] for e in doc["ledger"]["entries"]}
    assert legs[str(WIN_SEAT)] > 0 and legs["house"] == hand.quan["fees"]
    assert sum(legs.values()) == 0


def test_a_shuffled_hand_with_a_pot_verifies(players, start_hand) -> None:
    # Given a table dealing from secret seeds, with gà góp (the pot is a party of the books)
    ids = start_hand(ruleset={"preset": "thapthanh", "overrides": {"ga_gop": True}})
    play_to_end(players, ids)
    hand_settle(hand_id=ids["hand"])
    doc = players[2].client.get(export_url(ids["hand"])).json()
    assert doc["shuffle"] == FAIR_SHUFFLE and "deck" not in doc
    # the pot is a party of the books — unless this hand's winner took the pot it had just
    # filled (a new table's pot: what went in came out, and a party that nets nothing has no
    # entry), which the random deal makes now and then
    pot = Hand.objects.get(pk=ids["hand"]).quan["pot"]
    in_books = any(e["party"] == "pot" for e in doc["ledger"]["entries"])
    assert in_books == (pot["in"] != pot["out"]), (pot, doc["ledger"]["entries"])
    assert pot["in"] > 0  # (every seat's stake went in)
    assert verify_export(doc) is None


def test_a_room_whose_fees_change_mid_hand_settles_it_on_the_terms_it_was_dealt_under(
    players, win_hand
) -> None:
    # Given a hand dealt in Nền đất (5 % on a declared win, 10 % on an auto one), whose room
    # then changes its fees
    # and its xướng sai rule while the hand is played,
    hand = Hand.objects.get(pk=win_hand["hand"])
    assert (hand.fees, hand.xuong_sai_settled) == ({"declared": 5, "auto": 10}, False)
    Room.objects.filter(slug="nen-dat").update(
        fees={"declared": 30, "auto": 30}, xuong_sai_settled=True
    )
    # when it ends and is booked,
    play_to_end(players, win_hand)
    hand_settle(hand_id=hand.pk)
    hand.refresh_from_db()
    # it paid the fee it was dealt under, and its export states those terms and verifies.
    assert hand.quan["fee_percent"] in (5, 10) and hand.quan["fees"] > 0  # not the new 30 %
    doc = players[0].client.get(export_url(hand.pk)).json()
    assert doc["room"]["fees"] == {"declared": 5, "auto": 10}
    assert doc["room"]["xuong_sai_settled"] is False
    assert verify_export(doc) is None


def test_a_hand_dealt_without_the_room_terms_settles_on_its_rooms(players, win_hand) -> None:
    # Given a hand dealt by a process older than the frozen terms (a rolling deploy),
    with hand_guard_off():  # as the owner, past the hand row's guard
        Hand.objects.filter(pk=win_hand["hand"]).update(fees=None, xuong_sai_settled=None)
    Room.objects.filter(slug="nen-dat").update(fees={"declared": 7, "auto": 7})
    # when it ends and is booked, it pays its room's fee of the moment, and its export says so.
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    assert Hand.objects.get(pk=win_hand["hand"]).quan["fee_percent"] == 7
    doc = players[0].client.get(export_url(win_hand["hand"])).json()
    assert doc["room"]["fees"] == {"declared": 7, "auto": 7}
    assert verify_export(doc) is None


def test_a_tampered_export_does_not_verify(players, win_hand) -> None:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    doc: dict[str, Any] = players[0].client.get(export_url(win_hand["hand"])).json()
    doc["ledger"]["entries"][0]["amount"] += 1
    found = verify_export(doc)
    assert found is not None and found.seq == WIN_MOVES
    assert found.reason.startswith("the ledger entries")


def test_the_export_says_which_readings_were_equally_right(players, named_tie_hand, check) -> None:
    # Given the thapthanh hand whose chì bạch thủ on 8V is both cá lội sân đình and cá nhảy đầu
    # thuyền (tied in điểm and dịch), declared as cá nhảy đầu thuyền and booked,
    hand = named_tie_hand({"ca_nhay_dau_thuyen": 1})
    hand_settle(hand_id=hand["hand"])
    doc = check(players[0].client.get(export_url(hand["hand"])), EXPORT, "get")
    # its result states the true cước and the reading as right as it, by value, and the đúng,
    declaration = doc["result"]["declaration"]
    assert declaration["true_cuoc"] == {"ca_loi_san_dinh": 1}
    assert declaration["equally_right"] == [{"ca_nhay_dau_thuyen": 1}]
    assert declaration["verdict"] == "dung"
    assert doc["result"]["settlement"]["facts"]["verdict"] == "dung"
    # the document verifies, and a copy without the equally right reading does not.
    assert verify_export(doc) is None
    del doc["result"]["declaration"]["equally_right"]
    found = verify_export(doc)
    assert found is not None and found.reason.startswith("the result's declaration")


def capped_hand(players: list[Any], win_hand: dict[str, int]) -> tuple[Hand, int, Any]:
    """The scripted win played to its end, one of its payers left with 1 Quan before the
    settlement (it owes more: the settlement caps it), then booked. Returns the hand, the capped
    seat and the adjustment that was its wallet's last entry."""
    play_to_end(players, win_hand)
    hand = Hand.objects.get(pk=win_hand["hand"])
    seat = hand.result["settlement"]["transfers"][0]["from"]
    user = hand.seat_list()[seat].user
    # As a seat taken before holds existed (accounts 0014): nothing held for it, so the admin
    # can take the wallet down to 1 Quan.
    hold_release(user=user, table=hand.table)
    spent = balance_adjust(
        user=user, amount=1 - wallet_balance(user), reason="t", key="test:capped"
    )
    hand_settle(hand_id=hand.pk)
    hand.refresh_from_db()
    assert hand.quan["capped"] == [seat] and hand.quan["balances"][seat] == 1
    return hand, seat, spent


def test_a_capped_payer_exports_its_previous_ledger_entry(players, win_hand, check) -> None:
    # Given a hand whose settlement capped a payer at the 1 Quan it held,
    hand, seat, spent = capped_hand(players, win_hand)
    doc = check(players[0].client.get(export_url(hand.pk)), EXPORT, "get")
    # the export carries that payer's previous entry: the adjustment that left it 1 Quan, with
    # its transaction's place in the ledger's chain,
    entry = spent.entries.get(account__kind="wallet")
    assert doc["caps"] == [
        {
            "seat": seat,
            "account": entry.account_id,
            "held_elsewhere": 0,
            "entry": {
                "id": entry.pk,
                "balance_after": 1,
                "transaction": {"id": spent.pk, "hash": spent.hash, "prev_hash": spent.prev_hash},
            },
        }
    ]
    tx = LedgerTransaction.objects.get(pk=doc["ledger"]["id"])
    assert (doc["ledger"]["hash"], doc["ledger"]["prev_hash"]) == (tx.hash, tx.prev_hash)
    mine = [e for e in doc["ledger"]["entries"] if e["party"] == seat]
    assert [(e["amount"], e["balance_after"]) for e in mine] == [(-1, 0)]
    # and it verifies.
    assert verify_export(doc) is None


def test_the_verifier_refuses_an_edited_cap_or_balance_after(players, win_hand) -> None:
    hand, seat, _ = capped_hand(players, win_hand)
    doc: dict[str, Any] = players[0].client.get(export_url(hand.pk)).json()
    last = len(doc["events"]) - 2  # the declare: the settled record follows it
    unchained = {k: v for k, v in doc.items() if k != "chain"}
    assert verify_export(unchained) is None
    for base in (doc, unchained):
        # the previous entry's balance_after edited: the cap did not use it
        edited = json.loads(json.dumps(base))
        edited["caps"][0]["entry"]["balance_after"] = 2
        found = verify_export(edited)
        assert found is not None and found.seq == last
        assert found.reason == (
            f"seat {seat}'s cap used a balance of 1, its previous ledger entry holds 2"
        )
        # the cap edited with it (the balance the Quan were booked against): the Quan no longer
        # follow from the points
        edited["quan"]["balances"][seat] = 2
        found = verify_export(edited)
        assert found is not None and found.reason.startswith("the Quan seats")
        # a capped payer's proof left out
        found = verify_export({**base, "caps": []})
        assert found is not None and found.reason.startswith("the caps [] are not")
        # the settlement transaction edited where the entries do not show it: its hash breaks
        edited = json.loads(json.dumps(base))
        edited["ledger"]["memo"] += "!"
        found = verify_export(edited)
        assert found is not None
        assert found.reason == "the ledger transaction's hash is not the SHA-256 of its content"
    # An export made before it carried caps and the ledger's hash still verifies.
    old = {k: v for k, v in unchained.items() if k != "caps"}
    old["ledger"] = {
        k: v
        for k, v in old["ledger"].items()
        if k not in ("memo", "user", "hand", "table", "prev_hash", "hash")
    }
    assert verify_export(old) is None


def test_an_uncapped_hand_exports_no_caps(players, win_hand) -> None:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    doc = players[0].client.get(export_url(win_hand["hand"])).json()
    assert doc["caps"] == [] and verify_export(doc) is None
    # a cap claimed where the settlement capped nobody is refused
    made_up = [{"seat": 0, "account": None, "entry": None}]
    assert verify_export({**doc, "caps": made_up}).reason.startswith("the caps")


def test_the_export_lists_the_drawers_bo_u_and_the_verifier_checks_it(
    players, start_hand, check
) -> None:
    # Given seat 1 passes its own winning draw and seat 2's win on it replaces the pass (§4) …
    hand = start_hand(BO_U_DECK)
    drawer_passes_its_win(players, hand)
    assert post_move(players[2], hand, {"type": "declare", "auto": True}).status_code == 201
    hand_settle(hand_id=hand["hand"])
    # … the export lists the bỏ ù, and it verifies.
    doc = check(players[0].client.get(export_url(hand["hand"])), EXPORT, "get")
    assert doc["bo_u"] == [{"seat": 1, "card": "2V", "seq": 3, "replaced_by": 2}]
    assert verify_export(doc) is None
    # An export made before bỏ ù were listed (no bo_u) still verifies.
    old = {k: v for k, v in doc.items() if k != "bo_u"}
    assert verify_export(old) is None
    # A bỏ ù hidden or made up is a discrepancy at its seq.
    found = verify_export({**doc, "bo_u": []})
    assert found is not None and found.seq == 3 and "does not list the bỏ ù" in found.reason
    made_up = [*doc["bo_u"], {"seat": 3, "card": "2V", "seq": 3, "replaced_by": 2}]
    found = verify_export({**doc, "bo_u": made_up})
    assert found is not None and "the replay does not have" in found.reason
    changed = [{**doc["bo_u"][0], "replaced_by": None}]
    assert verify_export({**doc, "bo_u": changed}).seq == 3


def test_a_hand_without_bo_u_exports_an_empty_list(players, win_hand) -> None:
    play_to_end(players, win_hand)
    doc = players[0].client.get(export_url(win_hand["hand"])).json()
    assert doc["bo_u"] == [] and verify_export(doc) is None


# --------------------------------------------------------------------------- the hand's admin page


@pytest.fixture
def clerk(make_user) -> Client:
    """Staff who may view hands, not an auditor."""
    user, _ = make_user(username="clerk", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(codename__in=["view_hand", "view_handevent"])
    )
    return logged_in(user)


def test_the_hand_admin_page_names_players_shows_its_books_and_links_its_export(
    clerk, players, win_hand
) -> None:
    hand = ended_and_booked(players, win_hand)
    page = clerk.get(f"/admin/games/hand/{hand.pk}/change/").content.decode()
    # usernames instead of seat numbers, times to the second
    assert f"{players[0].user.username} (seat 0)" in page  # the dealer, and its first discard
    assert f"{players[WIN_SEAT].user.username} (seat {WIN_SEAT})" in page
    assert timezone.localtime(hand.ended_at).strftime("%Y-%m-%d %H:%M:%S") in page
    # the stake, the booked Quan and the ledger transaction, linked
    tx = LedgerTransaction.objects.get(hand=hand)
    assert f"/admin/accounts/ledgertransaction/{tx.pk}/change/" in page
    assert tx.idempotency_key in page
    # and the export, which downloads as a document that verifies
    assert f"/admin/games/hand/{hand.pk}/export/" in page
    assert f"/api/v1/hands/{hand.pk}/export" in page
    r = clerk.get(f"/admin/games/hand/{hand.pk}/export/")
    assert r.status_code == 200
    assert r["Content-Disposition"] == f'attachment; filename="hand-{hand.pk}.json"'
    assert verify_export(json.loads(r.content)) is None


def test_the_admin_export_of_a_hand_in_play_is_for_auditors_only(
    clerk, make_player, players, win_hand
) -> None:
    hand = Hand.objects.get(pk=win_hand["hand"])
    page = clerk.get(f"/admin/games/hand/{hand.pk}/change/").content.decode()
    assert f"/admin/games/hand/{hand.pk}/export/" not in page and hand.seed not in page
    assert clerk.get(f"/admin/games/hand/{hand.pk}/export/").status_code == 403
    auditor = make_auditor(make_player)
    auditor.user.is_staff = True
    auditor.user.save(update_fields=["is_staff"])
    auditor.user.user_permissions.add(Permission.objects.get(codename="view_hand"))
    r = logged_in(auditor.user).get(f"/admin/games/hand/{hand.pk}/export/")
    assert r.status_code == 200 and json.loads(r.content)["seed"] == hand.seed


def test_a_hand_stored_in_the_version_1_shape_replays_and_verifies_after_the_change(
    players, start_hand, monkeypatch
) -> None:
    # Given a hand played by the server as it was before version 2 (no ``v``, the effects of
    # version 1: no claims, no hidden faults, no báo, no system causes) …
    monkeypatch.setattr(hand_log, "EVENT_VERSION", 1)
    monkeypatch.setattr(
        hand_services, "move_effects", lambda after, cause=None: as_stored(list(after.events), 1)
    )
    hand = start_hand(BO_U_DECK)
    drawer_passes_its_win(players, hand)
    assert post_move(players[2], hand, {"type": "declare", "auto": True}).status_code == 201
    hand_settle(hand_id=hand["hand"])
    monkeypatch.undo()
    stored = list(HandEvent.objects.filter(hand_id=hand["hand"]).order_by("seq"))
    assert all("v" not in e.payload for e in stored)
    assert not any(x["type"] == "claim" for e in stored for x in e.effects)
    # … once the shape changed, it replays through the one replay (upcast in memory) …
    row = Hand.objects.get(pk=hand["hand"])
    final = hand_replay(row)
    assert final.win is not None and final.win.seat == 2 and final.phase.value == "ended"
    steps = hand_replay_steps(row)["steps"]
    assert [s["seq"] for s in steps] == [e.seq for e in stored]
    assert steps[3]["move"] == {"type": "pass", "seat": 1}
    # … its events say which version they are in, and its export verifies.
    feed = players[1].client.get(f"/api/v1/hands/{hand['hand']}/events").json()["events"]
    assert {e["v"] for e in feed} == {1}
    doc = players[0].client.get(export_url(hand["hand"])).json()
    assert verify_export(doc) is None
    # A hand played now records version 2: the claim of the same win is in its pass's event.
    again = start_hand(BO_U_DECK)
    drawer_passes_its_win(players, again)
    event = HandEvent.objects.get(hand_id=again["hand"], seq=3)
    assert event.payload["v"] == 2
    claim = {"type": "claim", "seat": 2, "card": "2V", "rule": "drawer_declined", "replaced": 1}
    assert claim in event.effects
