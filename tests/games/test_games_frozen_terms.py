"""A hand's terms are frozen by value at the deal (docs/decisions/layers-and-frozen-terms.md): a
later change of a preset reaches the hands dealt after it, never the replay, the export, the
audit or the ledger check of the hands dealt before."""

from __future__ import annotations

import dataclasses

import pytest
from django.core.management import call_command

from games.audit import check_hand_settlements, hand_settlement_problems
from games.export import hand_export
from games.hand_store import (
    _ruleset_from_json,
    hand_replay,
    hand_seats_load,
    hand_store_problems,
    state_lru,
)
from games.models import Hand, Room
from games.rules.ruleset import PRESETS, CuocValue, Ruleset
from games.rules.verify import verify_export
from games.rules.views import result_of
from games.services.quan_booking import hand_settle
from tests.games.conftest import start_table
from tests.games.decks import WIN_DECK
from tests.games.test_games_hands_api import assert_problem, play_to_end

pytestmark = pytest.mark.django_db


def _preset_v2(base: Ruleset) -> Ruleset:
    """The preset with every cước worth 5 điểm and 5 dịch more, two more gà per pattern and
    version 2: any win scores differently under it."""
    cuoc = {
        slug: CuocValue(diem=v.diem + 5, dich=v.dich + 5, enabled=v.enabled)
        for slug, v in base.cuoc.items()
    }
    ga = {pattern: count + 2 for pattern, count in base.ga.items()}
    return dataclasses.replace(base, cuoc=cuoc, ga=ga, preset_version=base.preset_version + 1)


def test_a_hand_dealt_before_a_preset_changes_replays_verifies_and_reconciles_as_before(
    players, win_hand, make_player, monkeypatch
) -> None:
    # Given a hand won and booked under chan_van_van version 1, stored by value,
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    hand = Hand.objects.select_related("room", "table").get(pk=win_hand["hand"])
    hand_seats_load(hand)
    assert hand.ruleset == PRESETS["chan_van_van"].to_dict()
    assert hand.ruleset["preset_version"] == 1
    export_before = hand_export(hand)
    assert verify_export(export_before) is None
    # when the preset's values change in the running process (version 2),
    monkeypatch.setitem(PRESETS, "chan_van_van", _preset_v2(PRESETS["chan_van_van"]))
    # (and nothing is remembered from before: as in a process started after the change)
    state_lru.clear()
    _ruleset_from_json.cache_clear()
    hand = Hand.objects.select_related("room", "table").get(pk=hand.pk)
    hand_seats_load(hand)
    # then its replay is what it was: the same result, the same table,
    replayed = hand_replay(hand)
    assert result_of(replayed) == hand.result
    assert replayed.config.ruleset.to_dict() == export_before["config"]["ruleset"]
    assert replayed.config.ruleset.cuoc["tom"] == CuocValue(diem=4, dich=1, enabled=True)
    assert hand_store_problems(hand) == []
    # its export is the same document and verifies offline,
    export_after = hand_export(hand)
    assert export_after == export_before
    assert verify_export(export_after) is None
    # and its booked Quan reconcile (ledger_check's and audit_hands's checks).
    assert hand_settlement_problems(hand) == []
    assert check_hand_settlements() == []
    call_command("audit_hands", hand=[hand.pk])

    # A hand dealt after the change is played under the new values, version 2.
    others = [make_player() for _ in range(4)]
    newer = Hand.objects.get(pk=start_table(others, WIN_DECK)["hand"])
    assert newer.ruleset["preset_version"] == 2
    assert newer.ruleset["cuoc"]["tom"] == {"diem": 9, "dich": 6, "enabled": True}
    assert newer.frozen_ruleset() == PRESETS["chan_van_van"]
    assert Hand.objects.get(pk=hand.pk).ruleset["preset_version"] == 1


def test_an_export_in_the_older_shape_still_verifies(players, win_hand) -> None:
    # Given an export written before frozen tables (its ruleset is the spec only),
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    doc = hand_export(Hand.objects.get(pk=win_hand["hand"]))
    doc["config"]["ruleset"] = {"preset": "chan_van_van", "overrides": {}}
    # the verifier upcasts it with its presets and verifies it.
    assert verify_export(doc) is None
    # A frozen table that is not what the hand was played under is a discrepancy.
    doc["config"]["ruleset"] = _preset_v2(PRESETS["chan_van_van"]).to_dict()
    assert verify_export(doc) is not None


def test_a_hand_stores_its_rooms_fees_typed_and_a_bad_schedule_stops_the_deal(
    players, make_player
) -> None:
    # Given a room whose fees were written around the admin form (no validation there),
    Room.objects.filter(slug="nen-dat").update(fees={"declared": "5%"})
    # when a table of that room deals, the deal is refused naming the entry at fault
    # (the settlement never meets the bad schedule),
    body = {"name": "test", "stake": 10, "deck": WIN_DECK, "dealer": 0}
    table_id = players[0].client.post("/api/v1/tables", body, format="json").json()["id"]
    for p in players[1:]:
        p.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    for p in players[:3]:
        p.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
    r = players[3].client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
    problem = assert_problem(r, 400, "invalid_fees")
    assert list(problem["errors"]) == ["room.fees.declared"]
    assert not Hand.objects.filter(table_id=table_id).exists()
    # and once the room is fixed the hand deals with the schedule as a validated value.
    Room.objects.filter(slug="nen-dat").update(fees={"auto": 10, "declared": 5})
    r = players[3].client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
    assert r.status_code == 200, r.content
    hand = Hand.objects.get(table_id=table_id)
    assert hand.fees == {"declared": 5, "auto": 10}
    assert hand.room_terms()[0].percent(n_players=4, auto_declared=True, xuong_sai=False) == 10
