"""Real threads against the real database (each its own connection): arenas' joins, leaves and
the start racing one another. Joins and leaves go through the API (a refusal must be a clean
409, never a 500); the start is the clock's service. Last, a void racing the payout. Whatever the order, every entry holds its
fee until the start and is in the pool after it, the pool is the entries' fees, and no hold is
left behind at the arena's table of record."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest
from django.utils import timezone

from accounts.hold_selectors import wallet_funds
from accounts.ledger import pot_account
from accounts.ledger_selectors import LEDGER_CHECKS, ledger_problems
from accounts.models import LedgerHold
from games.models import Hand, Tournament, TournamentEntry, TournamentHand
from games.services.tournaments import (
    tournament_create,
    tournament_finish,
    tournament_join,
    tournament_start,
)
from games.services.void import hand_void
from games.tasks import tournament_clock_due
from tests.games.conftest import Player, client_with
from tests.games.test_games_concurrency import at_once
from tests.games.test_games_tournaments import arena_hands, play_out

pytestmark = pytest.mark.django_db(transaction=True)
FEE, STAKE = 700, 1
ROUNDS = 4  # leave/start races, each on a new arena
SPREAD = 0.15  # seconds between two joins' arrivals


def arena(staff: Any, *, due: bool = False) -> Tournament:
    """A scheduled 2-seat arena; ``due``: its start has come (the clock would start it now)."""
    now = timezone.now()
    t = tournament_create(
        staff=staff,
        name="Giải đua",
        room="nen-dat",
        stake=STAKE,
        entry_fee=FEE,
        table_size=2,
        starts_at=now + dt.timedelta(minutes=5),
        ends_at=now + dt.timedelta(hours=1),
        payout=[100],
    )
    if due:
        Tournament.objects.filter(pk=t.pk).update(starts_at=now - dt.timedelta(seconds=1))
    return t


def record_holds(t: Tournament) -> dict[int, int]:
    """The holds still open at the arena's table of record, by account (a hold is the amount
    of its latest event there)."""
    latest: dict[int, int] = {}
    rows = LedgerHold.objects.filter(table_id=t.ledger_table_id).order_by("id")
    for account_id, amount in rows.values_list("account_id", "amount"):
        latest[account_id] = amount
    return {a: amount for a, amount in latest.items() if amount}


def money_adds_up(t: Tournament) -> None:
    """The pool (or the holds, before the start) is exactly the entries' fees; ledger_check
    is clean."""
    t.refresh_from_db()
    entries = list(TournamentEntry.objects.filter(tournament=t).select_related("user__wallet"))
    fees = sum(e.fee for e in entries)
    holds = record_holds(t)
    if t.status == Tournament.Status.RUNNING:
        assert pot_account(t.ledger_table).balance == fees
        assert holds == {}
    else:
        assert t.status == Tournament.Status.SCHEDULED
        assert holds == {e.user.wallet.pk: e.fee for e in entries}
    assert ledger_problems(LEDGER_CHECKS) == []


@pytest.fixture
def staff(make_user: Any) -> Any:
    return make_user(is_staff=True)[0]


def test_the_same_player_joining_at_once_enters_once_and_holds_one_fee(
    staff: Any, make_player: Any
) -> None:
    lan: Player = make_player()
    t = arena(staff)
    n = 6
    clients = [client_with(lan.token) for _ in range(n)]
    before = wallet_funds(lan.user)
    responses = at_once(n, lambda i: clients[i].post(f"/api/v1/tournaments/{t.pk}/join"))
    assert sorted(r.status_code for r in responses) == [200] + [409] * (n - 1)
    assert {r.json()["code"] for r in responses if r.status_code == 409} == {"already_entered"}
    assert TournamentEntry.objects.filter(tournament=t, user=lan.user).count() == 1
    after = wallet_funds(lan.user)
    assert (after.balance, after.held) == (before.balance, before.held + FEE)
    money_adds_up(t)


@pytest.mark.slow(seconds=30)
def test_players_joining_while_the_arena_starts_are_in_its_pool_or_refused(
    staff: Any, make_player: Any
) -> None:
    # given a due arena with two entrants, and more players about to join
    t = arena(staff, due=True)
    early = [make_player() for _ in range(2)]
    for p in early:
        tournament_join(tournament_id=t.pk, user=p.user)
    late = [make_player() for _ in range(7)]
    balances = {p.user.pk: wallet_funds(p.user).balance for p in early + late}

    # when they join while the clock starts it, all at once
    def call(i: int) -> Any:
        if i == 0:  # the start comes amid the joins: once the first of them is in
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if TournamentEntry.objects.filter(tournament=t).count() > len(early):
                    break
                time.sleep(0.005)
            return tournament_start(tournament_id=t.pk)
        time.sleep(SPREAD * (i - 1))  # the joins arrive over a second or so, around the start
        return late[i - 1].client.post(f"/api/v1/tournaments/{t.pk}/join")

    results = at_once(len(late) + 1, call)

    # then each join is in (200) or refused cleanly because the arena had started (409)
    t.refresh_from_db()
    assert t.status == Tournament.Status.RUNNING
    joined = set()
    for p, r in zip(late, results[1:], strict=True):
        assert r.status_code in (200, 409), r.content
        if r.status_code == 409:
            assert r.json()["code"] == "tournament_started"
        else:
            joined.add(p.user.pk)
    entered = set(TournamentEntry.objects.filter(tournament=t).values_list("user_id", flat=True))
    assert entered == joined | {p.user.pk for p in early}
    # every entrant paid its fee into the pool, nobody else paid anything, no hold is left
    for p in early + late:
        paid = FEE if p.user.pk in entered else 0
        funds = wallet_funds(p.user)
        assert funds.balance == balances[p.user.pk] - paid
    money_adds_up(t)


def test_a_leave_racing_the_start_is_a_leave_or_a_withdrawal(staff: Any, make_player: Any) -> None:
    players = [make_player() for _ in range(3)]
    outcomes = set()
    for _ in range(ROUNDS):
        t = arena(staff, due=True)
        for p in players:
            tournament_join(tournament_id=t.pk, user=p.user)
        leaver = players[0]
        balance = wallet_funds(leaver.user).balance

        def call(i: int, t: Tournament = t, leaver: Player = leaver) -> Any:
            if i == 0:
                return tournament_start(tournament_id=t.pk)
            return leaver.client.post(f"/api/v1/tournaments/{t.pk}/leave")

        _started, left = at_once(2, call)
        assert left.status_code == 200, left.content
        entry = TournamentEntry.objects.filter(tournament=t, user=leaver.user).first()
        if entry is None:  # it left before the start: its hold released, its fee kept
            outcomes.add("left")
            assert wallet_funds(leaver.user).balance == balance
        else:  # the start came first: it withdrew, its fee is in the pool
            outcomes.add("withdrew")
            assert entry.active is False
            assert wallet_funds(leaver.user).balance == balance - FEE
        assert wallet_funds(leaver.user).held == 0  # released, or consumed by the start
        money_adds_up(t)  # running either way (two entrants at least): no hold left at all
    assert outcomes  # either order is fine; each round checked its own


@pytest.mark.slow(seconds=80)
def test_a_void_racing_the_payout_is_taken_off_or_noted_never_half(
    staff: Any, make_player: Any
) -> None:
    # given a 2-seat arena of two whose hand was played and scored, and whose end has come
    t = arena(staff, due=True)
    players = [make_player() for _ in range(2)]
    for p in players:
        tournament_join(tournament_id=t.pk, user=p.user)
    tournament_clock_due(t.pk)
    (hand_id,) = arena_hands(t)
    play_out(hand_id)
    tournament_clock_due(t.pk)  # scored (if the settlement's own beat had not already)
    scored = TournamentHand.objects.get(hand_id=hand_id, kind="score")
    before = {e.user_id: e.score for e in TournamentEntry.objects.filter(tournament=t)}
    Tournament.objects.filter(pk=t.pk).update(ends_at=timezone.now())

    # when staff void that hand just as the clock pays the arena out
    def call(i: int) -> Any:
        if i == 0:
            return tournament_finish(tournament_id=t.pk)
        return hand_void(hand_id=hand_id, staff=staff, reason="race")

    at_once(2, call)

    # then the void is either before the payout (its points off, the prizes by the new scores)
    # or after it (noted, nothing off): one reversal row, and the books and points add up
    t.refresh_from_db()
    assert t.status == Tournament.Status.FINISHED
    void = TournamentHand.objects.get(hand_id=hand_id, kind="void")
    hand = Hand.objects.get(pk=hand_id)
    after = {e.user_id: e.score for e in TournamentEntry.objects.filter(tournament=t)}
    if void.after_payout:
        assert void.points == [0] * len(scored.points) and after == before
    else:
        assert void.points == [-p for p in scored.points]
        for seat, got in zip(hand.seat_list(), scored.points, strict=True):
            assert after[seat.user_id] == before[seat.user_id] - got
    assert ledger_problems(LEDGER_CHECKS) == []
