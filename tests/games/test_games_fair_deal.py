"""The fair deal over the API: the table commits the next hand's server seed before
anyone says ready, each seat sends its own seed with ready, the deck mixes them all, and the
export reveals everything for ``python -m games.rules.verify`` to check."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
from django.db import IntegrityError, transaction

from games.hand_store import hand_deck
from games.models import Hand, Seat, Table
from games.rules.fair_deal import fair_deck
from games.rules.verify import FAIR_SHUFFLE, Discrepancy, main, verify_export, verify_seed_chain
from games.services.quan_booking import hand_settle
from tests.games.test_games_hands_api import assert_problem, play_to_end

pytestmark = pytest.mark.django_db

SEEDS = ["seat-zero", "", "f" * 64, "~seat!3"]


def table_for(players: list[Any]) -> int:
    r = players[0].client.post("/api/v1/tables", {"name": "fair", "stake": 10}, format="json")
    assert r.status_code == 201, r.content
    table_id = r.json()["id"]
    for p in players[1:]:
        assert (
            p.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json").status_code == 200
        )
    return table_id


def ready_all(players: list[Any], table_id: int, seeds: list[str | None]) -> int:
    hand_id = None
    for p, seed in zip(players, seeds, strict=True):
        body = {} if seed is None else {"client_seed": seed}
        r = p.client.post(f"/api/v1/tables/{table_id}/ready", body, format="json")
        assert r.status_code == 200, r.content
        hand_id = r.json()["hand_id"] or hand_id
    assert hand_id is not None
    return hand_id


def export_of(player: Any, hand_id: int) -> dict[str, Any]:
    r = player.client.get(f"/api/v1/hands/{hand_id}/export")
    assert r.status_code == 200, r.content
    return r.json()


def test_the_server_seed_is_committed_before_ready_and_every_seat_moves_the_deck(
    players,
) -> None:
    table_id = table_for(players)
    # Before anyone says ready, the table shows the commitment to the next hand's server seed.
    committed = players[1].client.get(f"/api/v1/tables/{table_id}").json()["next_seed_hash"]
    assert len(committed) == 64
    hand_id = ready_all(players, table_id, SEEDS)
    hand = Hand.objects.get(pk=hand_id)
    # The hand is dealt from exactly that seed, mixed with every seat's seed in seat order.
    assert hand.seed_hash == committed
    assert hand.client_seeds == SEEDS
    deck = fair_deck(server_seed=bytes.fromhex(hand.seed), hand_id=hand_id, client_seeds=SEEDS)
    assert hand_deck(hand) == deck
    view = players[0].client.get(f"/api/v1/hands/{hand_id}").json()
    assert view["seed_hash"] == committed and view["client_seeds"] is None
    # For that committed server seed, changing any one seat's seed changes the deck.
    for seat in range(4):
        seeds = list(SEEDS)
        seeds[seat] += "x"
        other = fair_deck(server_seed=bytes.fromhex(hand.seed), hand_id=hand_id, client_seeds=seeds)
        assert other != deck
    # The next hand's seed is committed at this deal (recorded on the hand, shown on the table),
    # seats' seeds are spent, and no view shows a seed before the end.
    table = Table.objects.get(pk=table_id)
    assert hand.next_seed_hash == table.next_seed_hash != committed
    assert hashlib.sha256(bytes.fromhex(table.next_seed)).hexdigest() == hand.next_seed_hash
    shown = players[2].client.get(f"/api/v1/tables/{table_id}").json()
    assert shown["next_seed_hash"] == hand.next_seed_hash
    assert set(Seat.objects.filter(table_id=table_id).values_list("client_seed", flat=True)) == {""}
    assert view["next_seed_hash"] == hand.next_seed_hash
    assert "seat-zero" not in players[1].client.get(f"/api/v1/hands/{hand_id}").content.decode()


def test_the_export_reveals_the_seeds_and_verifies_and_a_tampered_seed_does_not(
    players,
) -> None:
    table_id = table_for(players)
    hand_id = ready_all(players, table_id, SEEDS)
    play_to_end(players, {"table": table_id, "hand": hand_id})
    hand_settle(hand_id=hand_id)
    view = players[3].client.get(f"/api/v1/hands/{hand_id}").json()
    assert view["client_seeds"] == SEEDS and view["seed"] is not None
    doc = export_of(players[0], hand_id)
    assert doc["shuffle"] == FAIR_SHUFFLE and doc["client_seeds"] == SEEDS and "deck" not in doc
    assert doc["next_seed_hash"] == Table.objects.get(pk=table_id).next_seed_hash
    assert verify_export(doc) is None
    # A seat's seed edited: the deck is another, and the deal's own effects no longer match.
    tampered = copy.deepcopy(doc)
    tampered["client_seeds"][1] = "edited"
    found = verify_export(tampered)
    assert found == Discrepancy(
        0, "the seeds do not give the deck the deal committed to (deck_hash)"
    )
    # A seed missing, or malformed
    short = copy.deepcopy(doc)
    short["client_seeds"] = SEEDS[:3]
    assert "one client seed per seat" in verify_export(short).reason
    bad = copy.deepcopy(doc)
    bad["client_seeds"][0] = "with space"
    assert verify_export(bad).reason == "seat 0's client seed is malformed"
    # The server's seed edited: it no longer matches its commitment.
    forged = copy.deepcopy(doc)
    forged["seed"] = "00" * 32
    assert verify_export(forged).reason == "seed_hash is not the SHA-256 of the seed's bytes"


def test_a_seat_that_gives_no_seed_contributes_the_empty_one_and_not_ready_forgets_it(
    players,
) -> None:
    table_id = table_for(players)
    r = players[0].client.post(
        f"/api/v1/tables/{table_id}/ready", {"client_seed": "given"}, format="json"
    )
    assert r.status_code == 200
    r = players[0].client.post(f"/api/v1/tables/{table_id}/ready", {"ready": False}, format="json")
    assert r.status_code == 200
    hand_id = ready_all(players, table_id, [None, "b", None, "d"])
    assert Hand.objects.get(pk=hand_id).client_seeds == ["", "b", "", "d"]


@pytest.mark.parametrize("bad", ["has space", "a" * 129, 12, None, ["x"], "é"])
def test_a_malformed_client_seed_is_refused(players, bad: object) -> None:
    table_id = table_for(players)
    r = players[0].client.post(
        f"/api/v1/tables/{table_id}/ready", {"client_seed": bad}, format="json"
    )
    body = assert_problem(r, 400, "invalid")
    assert "client_seed" in json.dumps(body)
    assert not Seat.objects.get(table_id=table_id, player=players[0].user).ready


def test_consecutive_hands_chain_their_server_seed_commitments(players, tmp_path, capsys) -> None:
    table_id = table_for(players)
    first = ready_all(players, table_id, SEEDS)
    play_to_end(players, {"table": table_id, "hand": first})
    second = ready_all(players, table_id, ["1", "2", "3", "4"])
    play_to_end(players, {"table": table_id, "hand": second})
    a, b = export_of(players[0], first), export_of(players[0], second)
    assert a["next_seed_hash"] == b["seed_hash"]
    assert verify_seed_chain([b, a]) is None
    paths = []
    for name, doc in (("a.json", a), ("b.json", b)):
        path = tmp_path / name
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    assert main(paths) == 0 and capsys.readouterr().out.startswith("verified")
    broken = copy.deepcopy(a)
    broken["next_seed_hash"] = "0" * 64
    assert "is not the commitment" in verify_seed_chain([broken, b]).reason


def test_a_hands_seeds_are_written_once_at_the_deal(players) -> None:
    table_id = table_for(players)
    hand_id = ready_all(players, table_id, SEEDS)
    for change in ({"client_seeds": ["x"] * 4}, {"next_seed_hash": "0" * 64}):
        refused = pytest.raises(IntegrityError, match="the seeds of its deal never change")
        with refused, transaction.atomic():
            Hand.objects.filter(pk=hand_id).update(**change)
    assert Hand.objects.get(pk=hand_id).client_seeds == SEEDS


def test_the_refusal_of_a_client_seed_speaks_the_callers_language(players) -> None:
    table_id = table_for(players)
    r = players[0].client.post(
        f"/api/v1/tables/{table_id}/ready",
        {"client_seed": "a b"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="vi",
    )
    body = assert_problem(r, 400, "invalid")
    assert "Hạt giống" in json.dumps(body, ensure_ascii=False)
