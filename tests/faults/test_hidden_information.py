"""Hidden information stays hidden, property-tested through the API layer: random hands (random
bots and preferences, both modes, 2–4 seats) played over the real views. Before the end, no
view, events page, long-poll answer, move response or error body for one seat ever holds another
seat's hidden cards, the stock order or the seed.

``HIDDEN_INFO_HANDS`` sets how many hands (CI: 15; the closing note's run: 1,000), one test case
each."""

from __future__ import annotations

import json
import os
import random
from typing import Any

import pytest

from games.hand_store import hand_state
from games.models import Hand
from games.rules.cards import CODES

pytestmark = pytest.mark.django_db
HANDS = int(os.environ.get("HIDDEN_INFO_HANDS", "15"))
SECRET_KEYS = {"stock", "deck", "hands", "seed_bytes"}


def codes(counts: Any) -> list[str]:
    return sorted(CODES[k] for k in range(25) for _ in range(counts[k]))


def walk(body: Any) -> tuple[set[str], list[list[str]]]:
    """Every key of a JSON body, and every list of card codes in it (in document order)."""
    keys: set[str] = set()
    card_lists: list[list[str]] = []
    stack = [body]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            keys.update(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            if value and all(isinstance(v, str) and v in CODES for v in value):
                card_lists.append(value)
            stack.extend(value)
    return keys, card_lists


def assert_hides(raw: bytes, viewer: int, hand: Hand, state: Any, where: str) -> None:
    """Nothing in ``raw`` (one response for seat ``viewer``) reveals a hidden card or the seed:
    no secret key, no list holding another seat's hidden hand (as a multiset), no run of the
    stock's next five cards in their order."""
    text = raw.decode()
    assert hand.seed not in text, where
    keys, card_lists = walk(json.loads(text) if text else None)
    assert not (SECRET_KEYS & keys), (where, SECRET_KEYS & keys)
    shown = [sorted(cards) for cards in card_lists]
    for i, seat in enumerate(state.seats):
        if i != viewer and sum(seat.hand):
            assert codes(seat.hand) not in shown, (where, i)
    stock_next = [CODES[k] for k in state.stock[:5]]
    runs = [cards[k : k + 5] for cards in card_lists for k in range(max(1, len(cards) - 4))]
    assert len(stock_next) < 3 or stock_next not in runs, where


def play_one(make_player, rng: random.Random) -> int:
    n = rng.choice([2, 3, 4])
    mode = rng.choice(["basic", "advanced"])
    players = [make_player() for _ in range(n)]
    r = players[0].client.post(
        "/api/v1/tables", {"name": "hide", "stake": 10, "max_seats": n, "mode": mode}, format="json"
    )
    table_id = r.json()["id"]
    for p in players[1:]:
        prefs = {"auto_u": rng.random() < 0.7, "auto_chiu": rng.random() < 0.7}
        p.client.post(f"/api/v1/tables/{table_id}/join", prefs, format="json")
    hand_id = None
    for p in players:
        hand_id = (
            p.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json").json()["hand_id"]
            or hand_id
        )
    hand = Hand.objects.get(pk=hand_id)
    order = [s.user_id for s in hand.seat_list()]
    by_seat = [next(p for p in players if p.user.pk == uid) for uid in order]
    url = f"/api/v1/hands/{hand_id}"
    for moves in range(600):
        hand.refresh_from_db()
        if hand.status == "ended":
            return moves
        state = hand_state(hand)
        for seat, p in enumerate(by_seat):
            assert_hides(p.client.get(url).content, seat, hand, state, f"view {seat}")
            if moves % 7 == 0:
                r = p.client.get(url + f"?wait=1&after_seq={max(0, hand.seq - 1)}")
                assert_hides(r.content, seat, hand, state, f"long poll {seat}")
                r = p.client.get(url + "/events")
                assert_hides(r.content, seat, hand, state, f"events {seat}")
        turn = state.turn
        idle = by_seat[(turn + 1) % n]
        refused = idle.client.post(url + "/moves", {"type": "discard", "card": "CC"}, format="json")
        assert refused.status_code >= 400
        assert_hides(refused.content, (turn + 1) % n, hand, state, "error body")
        mover = by_seat[turn]
        legal = mover.client.get(url).json()["legal_moves"]
        wins = [m for m in legal if m["type"] == "u"]
        move = wins[0] if wins and mode == "basic" else rng.choice(legal)
        r = mover.client.post(url + "/moves", move, format="json")
        assert r.status_code == 201, r.content
        hand.refresh_from_db()
        if hand.status != "ended":
            assert_hides(r.content, turn, hand, hand_state(hand), "move response")
    raise AssertionError("the hand did not end")


@pytest.mark.slow
@pytest.mark.parametrize("number", range(HANDS))
def test_no_response_ever_shows_a_hidden_card_or_the_seed(make_player, number: int) -> None:
    """One random hand a case, so that the parallel workers share them out."""
    rng = random.Random(f"hidden-information-{number}")
    assert play_one(make_player, rng) > 0  # the hand saw moves
