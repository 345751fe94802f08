"""Real threads on PostgreSQL, each with its own connection and transaction: a player's loss
limit holds when its tables deal and settle at the same instant (RULES.md §11, "limits at
several tables"; games/services/table_limits.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from accounts.ledger_selectors import ledger_problems
from accounts.limit_selectors import losses_in_period
from accounts.limits import limits_set
from accounts.models import LossReservation
from games.models import Hand
from games.services.quan_booking import hand_settle
from tests.games.conftest import Player, client_with
from tests.games.decks import WIN_DECK
from tests.games.test_games_concurrency import at_once
from tests.games.test_games_hands_api import play_to_end

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers"),
]

TABLES = 8
STAKE = 10
HOLD = 15 * STAKE
LIMIT = 2 * HOLD + 100  # room for two seats' holds, not three


@pytest.fixture
def make_player(make_user: Any) -> Any:
    def factory() -> Player:
        user, token = make_user()
        return Player(user, token, client_with(token))

    return factory


def _ready(player: Any, table_id: int) -> Any:
    r = player.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
    assert r.status_code == 200, r.content
    return r


def _playing(table_id: int, everyone: list[Any]) -> tuple[Hand, list[Any]]:
    """The table's hand in play and its players in play order."""
    hand = Hand.objects.filter(table_id=table_id).order_by("-number").first()
    assert hand is not None and hand.status == Hand.Status.PLAYING
    by_id = {p.user.pk: p for p in everyone}
    return hand, [by_id[s.user_id] for s in hand.seat_list()]


def _deal_at_once(tables: list[tuple[int, list[Any]]], everyone: list[Any]) -> list[Hand]:
    """Every seated player of each table ready but its last, then the 8 last at once: each
    thread settles its table's previous hand (if any) and deals the next."""
    for table_id, seated in tables:
        for p in seated[:-1]:
            _ready(p, table_id)
    at_once(TABLES, lambda i: _ready(tables[i][1][-1], tables[i][0]))
    return [_playing(table_id, everyone)[0] for table_id, _ in tables]


def _play_out(hands: list[Hand], everyone: list[Any]) -> None:
    for hand in hands:
        _hand, order = _playing(hand.table_id, everyone)
        play_to_end(order, {"table": hand.table_id, "hand": hand.pk})


def test_eight_tables_dealing_and_settling_at_once_never_overshoot_a_loss_limit(
    make_player,
) -> None:
    # Given a player with a day's loss limit with room for two seats' holds (15 × stake),
    # seated at 8 tables (at seat 1, which loses the scripted hand),
    hero = make_player()
    limits_set(user=hero.user, changes={"loss_limit_day": LIMIT})
    tables, everyone = [], [hero]
    for _ in range(TABLES):
        owner, *rest = [make_player() for _ in range(3)]
        everyone += [owner, *rest]
        body = {"name": "t", "stake": STAKE, "deck": WIN_DECK, "dealer": 0}
        r = owner.client.post("/api/v1/tables", body, format="json")
        assert r.status_code == 201, r.content
        table_id = r.json()["id"]
        for p in (hero, *rest):
            r = p.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
            assert r.status_code == 200, r.content
        tables.append((table_id, [owner, hero, *rest]))

    # when the 8 tables deal at once,
    hands = _deal_at_once(tables, everyone)
    # it is dealt only the seats its limit holds, each reserving its hold, and stood up
    # at the others;
    dealt = [h for h in hands if hero.user.pk in [s.user_id for s in h.seat_list()]]
    assert len(dealt) == LIMIT // HOLD
    reserved = LossReservation.objects.filter(user=hero.user)
    assert sorted(r.hand_id for r in reserved) == sorted(h.pk for h in dealt)
    assert all(r.amount == HOLD for r in reserved)

    # when the hands are played out and the 8 tables settle them and deal again at once,
    _play_out(hands, everyone)
    still = [(t, [p for p in seated if p.user.pk != hero.user.pk]) for t, seated in tables]
    tables = [
        (t, seated if any(h.table_id == t for h in dealt) else others)
        for (t, seated), (_t, others) in zip(tables, still, strict=True)
    ]
    hands = _deal_at_once(tables, everyone)
    lost = losses_in_period(hero.user, "day")
    # it lost in its two hands, and what it lost and what its new seats reserve fit the limit;
    assert lost > 0
    again = [h for h in hands if hero.user.pk in [s.user_id for s in h.seat_list()]]
    assert lost + HOLD * len(again) <= LIMIT

    # and once those are played out and settled at once too, the day's loss is within it.
    _play_out(hands, everyone)
    at_once(TABLES, lambda i: hand_settle(hand_id=hands[i].pk))
    assert all(h.settled_at is not None for h in Hand.objects.filter(pk__in=[h.pk for h in hands]))
    assert 0 < losses_in_period(hero.user, "day") <= LIMIT
    assert ledger_problems() == []
