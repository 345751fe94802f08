"""Spectators: a non-participant reads a hand's public view, its events and long
polls — mats, doors, stock count, whose turn, deadlines — and never a card of any hand, the
stock or the seed, before or after the end."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.hand_store import hand_state
from games.models import Hand
from games.rules.bots import make_bot
from games.rules.cards import CODES
from games.rules.deck import shuffle
from games.rules.engine import apply, new_hand
from games.rules.ruleset import build_ruleset
from games.rules.state import HandConfig, HandState, Mode, Phase
from games.rules.views import full_view
from games.selectors.hands import spectator_view
from tests.games.decks import WIN_DECK, scripted_move
from tests.games.test_games_hands_api import assert_problem, play_to_end, post_move

CARD_CODES = frozenset(CODES)
# Keys that would hold hidden cards or the means to deal them.
SECRET_KEYS = frozenset({"hand", "hands", "dealt", "stock", "deck", "seed", "legal_moves"})


def _strings(node: Any) -> list[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in (k, *_strings(v))]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def _public_cards(view: dict[str, Any]) -> dict[str, Any]:
    """The places where a card is public: the doors, the mats, the card on offer, the win card."""
    return {
        "doors": view["doors"],
        "mats": [seat["mat"] for seat in view["seats"]],
        "offer": view["offer"],
        "win_card": (view.get("win") or {}).get("card"),
    }


def assert_spectator_safe(view: dict[str, Any], truth: HandState) -> None:
    """The property: the spectator's view shows exactly the public cards of the true state, and
    no card anywhere else; no key of it holds a hand, the stock, the deck or the seed (null or
    empty at most)."""
    assert _public_cards(view) == _public_cards(full_view(truth))
    assert view["stock_count"] == len(truth.stock)
    assert view["my_seat"] is None and view["hand"] == [] and view["legal_moves"] == []
    rest = {k: v for k, v in view.items() if k not in ("doors", "mats", "offer", "win")}
    rest["seats"] = [{k: v for k, v in seat.items() if k != "mat"} for seat in view["seats"]]
    if view.get("result"):  # the HTTP view repeats the win (and its public card) in the result
        assert view["result"]["win"] == view["win"]
        rest["result"] = {k: v for k, v in view["result"].items() if k != "win"}
    leaked = [s for s in _strings(rest) if s in CARD_CODES]
    assert leaked == [], leaked
    secret = {k for k, v in _items(rest) if k in SECRET_KEYS and v not in (None, [])}
    assert secret == set(), secret
    for seat in view["seats"]:
        assert "hand" not in seat and "dealt" not in seat
        assert all(f["visible"] for f in seat["faults"])


def _items(node: Any) -> list[tuple[str, Any]]:
    """Every (key, value) of a JSON value, however deep."""
    if isinstance(node, dict):
        return [*node.items(), *(kv for v in node.values() for kv in _items(v))]
    if isinstance(node, list):
        return [kv for v in node for kv in _items(v)]
    return []


# --------------------------------------------------------------------------- the property


@settings(max_examples=25, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    n_seats=st.integers(min_value=2, max_value=4),
    mode=st.sampled_from(list(Mode)),
    bot=st.sampled_from(["random", "heuristic"]),
)
def test_a_spectators_view_never_holds_a_hidden_card(
    seed: bytes, n_seats: int, mode: Mode, bot: str
) -> None:
    """Random hands, random play: at every state, before and after the end."""
    config = HandConfig(
        n_seats=n_seats, mode=mode, ruleset=build_ruleset({"preset": "chan_van_van"})
    )
    rng = random.Random(seed)
    bots = {s: make_bot(bot, rng) for s in range(n_seats)}
    state = new_hand(config, shuffle(seed), 0)
    for _ in range(400):
        assert_spectator_safe(spectator_view(state), state)
        if state.phase is Phase.ENDED:
            break
        state = apply(state, bots[state.turn].choose(state, state.turn))  # type: ignore[attr-defined]
    assert state.phase is Phase.ENDED
    assert_spectator_safe(spectator_view(state), state)


# --------------------------------------------------------------------------- over HTTP

pytestmark = pytest.mark.django_db


def _assert_events_hide_the_deal(page: dict[str, Any]) -> None:
    for event in page["events"]:
        for effect in event["effects"]:
            assert not {"hand", "hands", "deck"} & set(effect), effect


def test_a_spectator_follows_a_live_hand_to_its_end(players, make_player) -> None:
    # Given a four-player hand being played and a stranger watching it,
    r = players[0].client.post(
        "/api/v1/tables", {"stake": 10, "deck": WIN_DECK, "dealer": 0}, format="json"
    )
    table_id = r.json()["id"]
    for p in players[1:]:
        p.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    hand_id = None
    for p in players:
        hand_id = (
            p.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json").json()["hand_id"]
            or hand_id
        )
    watcher = make_player()
    url = f"/api/v1/hands/{hand_id}"
    # when it reads the hand at every move,
    for _ in range(40):
        r = watcher.client.get(url)
        assert r.status_code == 200, r.content
        view = r.json()
        hand = Hand.objects.select_related("table").get(pk=hand_id)
        # then it sees the public view of the true state, whose turn and the deadline,
        assert_spectator_safe(view, hand_state(hand))
        assert view["spectator"] is True and view["seed"] is None and view["analysis"] is None
        assert view["seq"] == hand.seq and view["seed_hash"] == hand.seed_hash
        page = watcher.client.get(url + "/events").json()
        _assert_events_hide_the_deal(page)
        assert page["seq"] == hand.seq
        if view["status"] == "ended":
            break
        assert view["deadline"].endswith("Z") and view["turn_seat"] is not None
        turn = view["turn_seat"]
        mine = players[turn].client.get(url).json()
        assert mine["spectator"] is False and mine["my_seat"] == turn
        post_move(players[turn], {"hand": hand_id}, scripted_move(mine["legal_moves"]))
    # and after the end the result, but still no card of any hand and no seed.
    assert view["status"] == "ended" and view["result"]["outcome"]["result"] == "u"
    assert view["seed"] is None and "stock" not in view
    # A spectator may not move; once the hand has ended it may replay and export it (every card
    # and the seed, revealed then anyway), unlike while it was played.
    r = post_move(watcher, {"hand": hand_id}, {"type": "draw"})
    assert_problem(r, 403, "not_a_participant")
    replay = watcher.client.get(url + "/replay")
    assert replay.status_code == 200 and replay.json()["seed"] is not None
    assert watcher.client.get(url + "/export").status_code == 200


def test_nobody_but_the_players_replays_a_hand_of_a_table_closed_to_spectators(
    players, make_player, win_hand, no_spectators
) -> None:
    play_to_end(players, win_hand)
    url = f"/api/v1/hands/{win_hand['hand']}"
    stranger = make_player()
    assert_problem(stranger.client.get(url + "/replay"), 403, "not_a_participant")
    assert_problem(stranger.client.get(url + "/export"), 403, "not_a_participant")
    assert players[1].client.get(url + "/replay").status_code == 200


def test_a_spectator_polls_with_etags_and_long_polls(players, make_player, win_hand) -> None:
    watcher = make_player()
    url = f"/api/v1/hands/{win_hand['hand']}"
    first = watcher.client.get(url)
    etag = first["ETag"]
    assert watcher.client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    # a move by a player changes the spectator's view too
    view = players[0].client.get(url).json()
    post_move(players[0], win_hand, scripted_move(view["legal_moves"]))
    r = watcher.client.get(url + "?wait=1&after_seq=0", HTTP_IF_NONE_MATCH=etag)
    assert r.status_code == 200 and r.json()["seq"] == 1 and r["ETag"] != etag


def test_without_spectators_a_stranger_is_refused(make_player, win_hand, no_spectators) -> None:
    watcher = make_player()
    url = f"/api/v1/hands/{win_hand['hand']}"
    for path in (url, url + "/events", url + "?wait=1"):
        assert_problem(watcher.client.get(path), 403, "not_a_participant")


def test_a_table_created_without_spectators_refuses_them(players, make_player) -> None:
    r = players[0].client.post(
        "/api/v1/tables", {"name": "private", "stake": 10, "spectators": False}, format="json"
    )
    assert r.status_code == 201 and r.json()["spectators"] is False
    table_id = r.json()["id"]
    players[1].client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    hand_id = None
    for p in players[:2]:
        hand_id = (
            p.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json").json()["hand_id"]
            or hand_id
        )
    stranger = make_player()
    assert stranger.client.get(f"/api/v1/hands/{hand_id}").status_code == 403
    assert players[0].client.get(f"/api/v1/hands/{hand_id}").status_code == 200
