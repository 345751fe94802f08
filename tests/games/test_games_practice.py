"""Practice tables: server bots at the other seats, moved by the clock through the
move service, seeing only their own seat; no Quan, fees, stats or XP."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.ledger_selectors import wallet_balance
from accounts.models import LedgerTransaction, User
from core.errors import InvalidInput
from games.audit import hand_settlement_problems
from games.hand_store import hand_state
from games.models import Hand, HandEvent, Seat, Table
from games.rules import HandConfig, Mode, legal_moves, new_hand, shuffle
from games.rules.cards import N_KINDS
from games.rules.engine import apply
from games.rules.moves import Pass
from games.rules.state import Phase
from games.rules.views import view_for
from games.services.hand_log import hand_event_append
from games.services.hands import hand_clock_tick, hand_lock, hand_move_apply
from games.services.practice import bot_choose, seat_only_state
from games.services.quan_booking import hand_settle, practice_quan
from games.services.tables import room_quick_join, seat_leave, seat_ready, table_create
from tests.games.test_games_tasks import broker_env, wait_for, worker, worker_log  # noqa: F401

pytestmark = pytest.mark.django_db

FAR_FUTURE = timedelta(days=1)


def create(player: Any, **body: Any) -> Any:
    return player.client.post("/api/v1/tables", {"practice": True, **body}, format="json")


# --------------------------------------------------------------------------- the API


@pytest.mark.parametrize("bots", [1, 2, 3])
def test_a_practice_table_seats_the_bots_at_the_other_seats(make_player, bots: int) -> None:
    player = make_player()
    r = create(player, bots=bots)
    assert r.status_code == 201, r.content
    table = r.json()
    assert table["practice"] is True and table["bot_delay"] == 1 and table["stake"] == 1
    assert table["max_seats"] == bots + 1 and table["open_seats"] == 0
    seats = table["seats"]
    assert [(s["number"], s["bot"], s["ready"]) for s in seats] == [(0, False, False)] + [
        (n, True, True) for n in range(1, bots + 1)
    ]
    assert seats[0]["user_id"] == player.id
    bots_users = User.objects.filter(pk__in=[s["user_id"] for s in seats[1:]])
    assert all(u.is_bot and not u.is_active and not u.has_usable_password() for u in bots_users)


def test_a_practice_table_without_bots_fills_every_other_seat(make_player) -> None:
    r = create(make_player(), bot_delay=0)
    assert r.status_code == 201, r.content
    assert [s["bot"] for s in r.json()["seats"]] == [False, True, True, True]
    assert r.json()["bot_delay"] == 0
    # with more seats than bots, the free ones are for other players to join.
    r = create(make_player(), bots=1, max_seats=3)
    assert r.status_code == 201, r.content
    assert r.json()["open_seats"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"practice": True, "bots": 0}, "bots"),
        ({"practice": True, "bots": 4}, "bots"),
        ({"practice": True, "bots": 3, "max_seats": 3}, "bots"),
        ({"practice": True, "bots": "2"}, "bots"),
        ({"practice": True, "bot_delay": 11}, "bot_delay"),
        ({"practice": True, "bot_delay": -1}, "bot_delay"),
        ({"stake": 10, "bots": 2}, "bots"),
        ({"stake": 10, "bot_delay": 2}, "bot_delay"),
        ({"practice": False, "bots": 1}, "bots"),
        ({}, "stake"),
    ],
)
def test_bots_out_of_range_or_without_practice_are_refused(make_player, body, field) -> None:
    r = make_player().client.post("/api/v1/tables", body, format="json")
    assert r.status_code == 400, r.content
    assert field in r.json()["errors"]
    assert not Table.objects.exists()


def test_practice_needs_neither_quan_nor_the_rooms_requirements(make_user, make_player) -> None:
    # Given a player who could not sit in Chiếu cói at any stake,
    player = make_player()
    r = player.client.post("/api/v1/tables", {"stake": 10, "room": "chieu-coi"}, format="json")
    assert r.status_code == 409, r.content
    # a practice table there opens all the same.
    r = create(player, room="chieu-coi", bots=2, stake=1000)
    assert r.status_code == 201, r.content


def test_the_human_ready_deals_at_once(make_player) -> None:
    player = make_player()
    table_id = create(player, bots=2).json()["id"]
    r = player.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
    assert r.status_code == 200, r.content
    hand_id = r.json()["hand_id"]
    assert hand_id is not None
    hand = Hand.objects.get(pk=hand_id)
    assert hand.n_seats == 3 and hand.seat_of(player.id) is not None


def test_two_humans_are_dealt_when_both_are_ready(make_player) -> None:
    owner, guest = make_player(), make_player()
    table_id = create(owner, bots=1, max_seats=3).json()["id"]
    r = guest.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    assert r.status_code == 200, r.content
    r = owner.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
    assert r.json()["hand_id"] is None  # the bot is ready, the guest not yet
    r = guest.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
    assert r.json()["hand_id"] is not None


def test_the_last_player_leaving_closes_the_table_and_seats_no_bots(make_player) -> None:
    player = make_player()
    table_id = create(player, bots=3).json()["id"]
    seat_leave(table_id=table_id, user=player.user)
    assert Table.objects.get(pk=table_id).status == Table.Status.CLOSED
    assert not Seat.objects.filter(table_id=table_id).exists()


def test_quick_join_never_seats_a_player_at_a_practice_table(make_player) -> None:
    create(make_player(), bots=1, max_seats=4)
    newcomer = make_player()
    table, created = room_quick_join(room="nen-dat", user=newcomer.user)
    assert created and not table.practice


# --------------------------------------------------------------------------- the clock


def test_a_bots_deadline_is_the_bot_delay(make_player) -> None:
    # Given a practice table whose bots wait 3 s while players have 30 s,
    player = make_player()
    table = table_create(
        owner=player.user, name="p", practice=True, bots=1, bot_delay=3, timeouts={"turn": 30}
    )
    hand = seat_ready(table_id=table.pk, user=player.user)
    assert hand is not None
    # each deadline is the bot's delay on the bot's turns, the timeout on the player's.
    for _ in range(6):
        hand.refresh_from_db()
        if hand.status == Hand.Status.ENDED:
            break
        state = hand_state(hand)
        bot_turn = hand.seat_list()[state.turn].user_id != player.id
        waited = hand.deadline_at - hand.last_event_at
        expected = 3 if bot_turn else {"tra_cua": 15, "declare": 60}.get(state.phase, 30)
        assert waited == timedelta(seconds=expected)
        hand_clock_tick(hand_id=hand.pk, now=timezone.now() + FAR_FUTURE)


def play_human_move(player: Any, hand_id: int) -> None:
    """The player's move through the API: a win, else a draw, a pass, a declaration, or a
    discard, taken from the legal moves of its own view."""
    view = player.client.get(f"/api/v1/hands/{hand_id}").json()
    legal = view["legal_moves"]
    order = ["u", "declare", "draw", "pass", "discard", "tra_cua"]
    move = min(legal, key=lambda m: order.index(m["type"]) if m["type"] in order else 99)
    r = player.client.post(f"/api/v1/hands/{hand_id}/moves", move, format="json")
    assert r.status_code == 201, r.content


def test_a_whole_practice_hand_books_nothing_and_awards_no_xp(make_player) -> None:
    # Given a player at a practice table with three bots,
    player = make_player()
    balance, xp = wallet_balance(player.user), player.user.xp
    table_id = create(player, bots=3).json()["id"]
    r = player.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
    hand_id = r.json()["hand_id"]
    # when the player moves through the API and the bots through the clock,
    for _ in range(500):
        hand = Hand.objects.get(pk=hand_id)
        if hand.status == Hand.Status.ENDED:
            break
        state = hand_state(hand)
        if hand.seat_list()[state.turn].user_id == player.id:
            play_human_move(player, hand_id)
        else:
            assert hand_clock_tick(hand_id=hand_id, now=timezone.now() + FAR_FUTURE) is not None
    hand = Hand.objects.get(pk=hand_id)
    # the hand ends; its settlement books no Quan and awards no XP,
    assert hand.status == Hand.Status.ENDED
    assert hand_settle(hand_id=hand_id) is None
    hand.refresh_from_db()
    assert hand.settled_at is not None and hand.quan == practice_quan(4)
    assert not LedgerTransaction.objects.filter(hand=hand).exists()
    player.user.refresh_from_db()
    assert (wallet_balance(player.user), player.user.xp) == (balance, xp)
    assert all(u.xp == 0 for u in User.objects.filter(is_bot=True))
    assert hand_settlement_problems(hand) == []
    call_command("ledger_check")
    call_command("audit_hands", hand=[hand_id])  # its export verifies as a practice hand
    # the bots' moves are marked as theirs (never the server's system moves),
    events = player.client.get(f"/api/v1/hands/{hand_id}/events").json()["events"]
    human = hand.seat_of(player.id)
    bot_events = [e for e in events if e["bot"]]
    assert bot_events and all(not e["system"] and e["actor_seat"] != human for e in bot_events)
    assert all(not e["bot"] for e in events if e["actor_seat"] == human)
    assert HandEvent.objects.filter(hand=hand, bot=True).count() == len(bot_events)
    # and the hand counts neither in the profile nor as a ranked hand in the history.
    profile = player.client.get(f"/api/v1/players/{player.user.username}").json()
    assert (profile["hands_played"], profile["wins"]) == (0, 0)
    mine = player.client.get("/api/v1/me/hands").json()["results"]
    assert [(h["id"], h["practice"], h["quan"]) for h in mine] == [(hand_id, True, 0)]
    # The table is open again, its bots still ready for the next hand.
    seats = Seat.objects.filter(table_id=table_id).select_related("player")
    assert {(s.player.is_bot, s.ready) for s in seats} == {(True, True), (False, False)}


def test_the_only_player_leaving_mid_hand_closes_the_table_at_its_end(make_player) -> None:
    # Given a practice hand whose only player stands up in the middle,
    player = make_player()
    table = table_create(owner=player.user, name="p", practice=True, bots=2)
    hand = seat_ready(table_id=table.pk, user=player.user)
    assert hand is not None
    seat_leave(table_id=table.pk, user=player.user)
    # when the clock plays the hand out (the bots, and the server for the player),
    for _ in range(500):
        if hand_clock_tick(hand_id=hand.pk, now=timezone.now() + FAR_FUTURE) is None:
            break
    # the hand ends, the table closes and the bots stand up: nobody deals again.
    hand.refresh_from_db()
    assert hand.status == Hand.Status.ENDED
    assert Table.objects.get(pk=table.pk).status == Table.Status.CLOSED
    assert not Seat.objects.filter(table=table).exists()


def test_a_refused_bot_move_falls_back_to_the_servers_move(make_player, monkeypatch) -> None:
    # Given a bot that would send a move the rules refuse (a pass where it must discard),
    player = make_player()
    table = table_create(owner=player.user, name="p", practice=True, bots=1)
    hand = seat_ready(table_id=table.pk, user=player.user)
    assert hand is not None
    monkeypatch.setattr("games.services.hands.bot_choose", lambda state, seat, rng: Pass(seat))
    state = hand_state(hand)
    if hand.seat_list()[state.turn].user_id == player.id:
        hand_clock_tick(hand_id=hand.pk, now=timezone.now() + FAR_FUTURE)  # the player's turn
    # when its deadline comes, the server moves for it (a system move, not marked as the bot's).
    seq = hand_clock_tick(hand_id=hand.pk, now=timezone.now() + FAR_FUTURE)
    event = HandEvent.objects.get(hand=hand, seq=seq)
    assert event.system and not event.bot


def test_the_database_refuses_a_bot_event_marked_system(make_player) -> None:
    player = make_player()
    table = table_create(owner=player.user, name="p", practice=True, bots=1)
    hand = seat_ready(table_id=table.pk, user=player.user)
    assert hand is not None
    move = {"type": "draw", "seat": 0, "system": True}
    refused = pytest.raises(IntegrityError, match="games_handevent_bot_moves_are_not_system")
    with refused, transaction.atomic():
        hand_event_append(
            hand=hand, type="draw", actor_seat=0, system=True, bot=True, payload=move, effects=[]
        )


# --------------------------------------------------------------------------- the bot's view


def _scrambled(state: Any, seat: int, rng: random.Random) -> Any:
    """``state`` with every other seat's hand replaced by other cards (same count) and the stock
    reordered: what ``seat`` cannot see, changed."""
    seats = []
    for i, st in enumerate(state.seats):
        if i == seat:
            seats.append(st)
            continue
        counts = [0] * N_KINDS
        for _ in range(sum(st.hand)):
            counts[rng.choice([k for k in range(N_KINDS) if counts[k] < 4])] += 1
        seats.append(replace(st, hand=tuple(counts)))
    stock = list(state.stock)
    rng.shuffle(stock)
    return replace(state, seats=tuple(seats), stock=tuple(stock))


@pytest.mark.parametrize("mode", [Mode.BASIC, Mode.ADVANCED])
@pytest.mark.parametrize("seed", [0, 7])
def test_the_bot_decides_from_its_own_seats_view_alone(mode: Mode, seed: int) -> None:
    rng = random.Random(11)
    state = new_hand(HandConfig(n_seats=4, mode=mode), shuffle(bytes([seed]) * 32), seed % 4)
    checked = 0
    while state.phase is not Phase.ENDED and checked < 300:
        seat = state.turn
        known = seat_only_state(state, seat)
        # What the bot reasons on shows the seat exactly its own view, and nothing else:
        assert view_for(known, seat) == view_for(state, seat)
        # its choice stays the same whatever the other hands and the stock order are.
        move = bot_choose(state, seat, random.Random(checked))
        for n in range(3):
            other = _scrambled(state, seat, rng)
            assert bot_choose(other, seat, random.Random(checked)) == move, n
        state = apply(state, move)
        checked += 1
    assert state.phase is Phase.ENDED


# --------------------------------------------------------------------------- a real worker


def human_move(hand_id: int, user: Any) -> bool:
    """The player's move if its turn has come (a win, else a draw, a pass, a declaration or a
    discard, from its legal moves), through the move service under the hand's lock."""
    with transaction.atomic():
        hand = hand_lock(hand_id)
        if hand is None or hand.status != Hand.Status.PLAYING:
            return False
        state = hand_state(hand)
        if hand.seat_list()[state.turn].user_id != user.pk:
            return False
        order = ["u", "declare", "draw", "pass", "discard", "tra_cua"]
        moves = [m.to_dict() for m in legal_moves(state, state.turn)]
        move = min(moves, key=lambda m: order.index(m["type"]) if m["type"] in order else 99)
        hand_move_apply(hand=hand, seat=state.turn, move_json=move)
        return True


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_worker_plays_the_bots_of_a_practice_hand_to_its_end(worker, make_user) -> None:  # noqa: F811
    # Given a practice table with three bots that move at once, and its player,
    user = make_user()[0]
    table = table_create(
        owner=user, name="practice", practice=True, bots=3, bot_delay=0, timeouts={"turn": 5}
    )
    hand = seat_ready(table_id=table.pk, user=user)
    assert hand is not None

    # when the player moves whenever its turn comes, and the worker's clock plays the bots,
    def settled() -> bool:
        human_move(hand.pk, user)
        return Hand.objects.get(pk=hand.pk).settled_at is not None

    done = wait_for(settled, timeout=55)
    assert done, worker_log(worker)
    # the hand ends and is settled as a practice hand: bots' moves marked, nothing booked.
    hand.refresh_from_db()
    assert hand.status == Hand.Status.ENDED and hand.quan == practice_quan(4)
    bot_moves = HandEvent.objects.filter(hand=hand, bot=True)
    assert bot_moves.exists() and not bot_moves.filter(system=True).exists()
    assert not LedgerTransaction.objects.filter(hand=hand).exists()


@pytest.mark.parametrize(
    "options",
    [{"bot_delay": 11}, {"bots": 0}, {"bots": 2, "max_seats": 2}, {"bots": 4, "max_seats": 4}],
)
def test_the_service_refuses_what_the_api_refuses(make_user, options) -> None:
    with pytest.raises(InvalidInput):
        table_create(owner=make_user()[0], name="p", practice=True, **options)
    assert not Table.objects.exists()
