"""games.services.tournaments: arenas — the entry fee held, taken into the pool at the start,
released or refunded on a cancel; free players seated together, blocked pairs never; points
per hand; the pool paid out at the end; ``ledger_check`` reconciling every arena. The last
test runs a whole arena on the clock (the real Celery task bodies, called in order)."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import pytest
from django.utils import timezone

from accounts.hold_selectors import wallet_funds
from accounts.ledger import pot_account
from accounts.ledger_selectors import LEDGER_CHECKS, ledger_problems
from accounts.limits import cool_off_start
from accounts.models import LedgerTransaction
from core.errors import Conflict, InvalidInput
from games.export import hand_export
from games.models import (
    Block,
    Hand,
    Seat,
    Tournament,
    TournamentEntry,
    TournamentHand,
    TournamentTable,
)
from games.rules.arena_points import arena_points
from games.rules.verify import verify_export
from games.services.tournaments import (
    tournament_cancel,
    tournament_clock,
    tournament_create,
    tournament_edit,
    tournament_join,
    tournament_leave,
)
from games.tasks import hand_settle_due, hand_turn_due, tournament_clock_due, tournaments_sweep

pytestmark = pytest.mark.django_db

FEE, STAKE = 1000, 1


def arena(staff: Any, **terms: Any) -> Tournament:
    now = timezone.now()
    values: dict[str, Any] = {
        "name": "Giải thử",
        "room": "nen-dat",
        "stake": STAKE,
        "entry_fee": FEE,
        "table_size": 2,
        "starts_at": now + dt.timedelta(minutes=5),
        "ends_at": now + dt.timedelta(hours=1),
        "payout": [60, 40],
        **terms,
    }
    return tournament_create(staff=staff, **values)


def started(tournament: Tournament) -> None:
    """As if its start had come: the start an hour ago, then one beat of its clock."""
    Tournament.objects.filter(pk=tournament.pk).update(
        starts_at=timezone.now() - dt.timedelta(hours=1)
    )
    tournament_clock_due(tournament.pk)
    tournament.refresh_from_db()


def running(staff: Any, people: list[Any], **terms: Any) -> Tournament:
    """An arena ``people`` entered, started."""
    tournament = arena(staff, **terms)
    for p in people:
        tournament_join(tournament_id=tournament.pk, user=p)
    started(tournament)
    return tournament


def ended(tournament: Tournament) -> None:
    Tournament.objects.filter(pk=tournament.pk).update(
        ends_at=timezone.now() - dt.timedelta(seconds=1)
    )
    tournament_clock_due(tournament.pk)
    tournament.refresh_from_db()


def play_out(hand_id: int) -> Hand:
    """The clock plays every seat to the end (each deadline as if passed), then settles."""
    for _ in range(1000):
        hand = Hand.objects.get(pk=hand_id)
        if hand.status == Hand.Status.ENDED:
            break
        Hand.objects.filter(pk=hand_id).update(deadline_at=timezone.now() - dt.timedelta(hours=1))
        hand_turn_due(hand_id)
    hand_settle_due(hand_id)
    return Hand.objects.get(pk=hand_id)


def arena_hands(tournament: Tournament, status: str = Hand.Status.PLAYING) -> list[int]:
    tables = TournamentTable.objects.filter(tournament=tournament).values_list("table_id")
    return list(
        Hand.objects.filter(table_id__in=tables, status=status).values_list("pk", flat=True)
    )


@pytest.fixture
def staff(make_user: Any) -> Any:
    return make_user(is_staff=True)[0]


@pytest.fixture
def people(make_user: Any) -> list[Any]:
    return [make_user()[0] for _ in range(5)]


# --------------------------------------------------------------------------- entry fees


def test_joining_holds_the_fee_and_leaving_releases_it(staff: Any, people: list[Any]) -> None:
    t = arena(staff)
    before = wallet_funds(people[0])
    tournament_join(tournament_id=t.pk, user=people[0])
    held = wallet_funds(people[0])
    assert (held.balance, held.held) == (before.balance, before.held + FEE)
    assert held.available == before.available - FEE
    with pytest.raises(Conflict) as exc:
        tournament_join(tournament_id=t.pk, user=people[0])
    assert exc.value.code == "already_entered"
    assert tournament_leave(tournament_id=t.pk, user=people[0]) is None
    assert wallet_funds(people[0]) == before
    assert not TournamentEntry.objects.filter(tournament=t).exists()
    assert ledger_problems(LEDGER_CHECKS) == []


def test_a_player_without_the_fee_and_a_seat_cannot_join(staff: Any, people: list[Any]) -> None:
    t = arena(staff, entry_fee=wallet_funds(people[0]).available)  # nothing left for a seat
    with pytest.raises(Conflict) as exc:
        tournament_join(tournament_id=t.pk, user=people[0])
    assert exc.value.code == "insufficient_balance"
    assert exc.value.extra["needed"] == t.entry_fee + 15 * STAKE


def test_a_player_cooling_off_cannot_join(staff: Any, people: list[Any]) -> None:
    t = arena(staff)
    cool_off_start(user=people[0], days=1)
    with pytest.raises(Conflict) as exc:
        tournament_join(tournament_id=t.pk, user=people[0])
    assert exc.value.code == "cooling_off"
    assert wallet_funds(people[0]).held == 0


def test_the_start_takes_every_fee_into_the_pool_in_one_transaction(
    staff: Any, people: list[Any]
) -> None:
    t = arena(staff)
    balances = {}
    for p in people:
        tournament_join(tournament_id=t.pk, user=p)
        balances[p.pk] = wallet_funds(p).balance
    started(t)
    assert t.status == Tournament.Status.RUNNING
    tx = LedgerTransaction.objects.get(idempotency_key=f"tournament:{t.pk}:entries")
    assert tx.kind == "tournament_entry" and tx.entries.count() == len(people) + 1
    assert pot_account(t.ledger_table).balance == FEE * len(people)
    for p in people:
        funds = wallet_funds(p)
        assert funds.balance == balances[p.pk] - FEE  # the fee went; a seat's hold may be on
    # a second beat books nothing twice
    tournament_clock(tournament_id=t.pk)
    assert LedgerTransaction.objects.filter(kind="tournament_entry").count() == 1
    # a newcomer cannot join now
    with pytest.raises(Conflict) as exc:
        tournament_join(tournament_id=t.pk, user=staff)
    assert exc.value.code == "tournament_started"
    assert ledger_problems(LEDGER_CHECKS) == []


def test_an_arena_with_fewer_than_two_players_is_cancelled_at_its_start(
    staff: Any, people: list[Any]
) -> None:
    t = arena(staff)
    tournament_join(tournament_id=t.pk, user=people[0])
    started(t)
    assert t.status == Tournament.Status.CANCELLED
    assert wallet_funds(people[0]).held == 0
    assert not LedgerTransaction.objects.filter(kind__startswith="tournament").exists()


def test_cancelled_before_the_start_the_holds_are_released(staff: Any, people: list[Any]) -> None:
    t = arena(staff)
    before = [wallet_funds(p) for p in people[:3]]
    for p in people[:3]:
        tournament_join(tournament_id=t.pk, user=p)
    tournament_cancel(tournament_id=t.pk, reason="mưa")
    assert [wallet_funds(p) for p in people[:3]] == before
    tournament_cancel(tournament_id=t.pk, reason="again")  # idempotent
    assert ledger_problems(LEDGER_CHECKS) == []


@pytest.mark.slow(seconds=20)
def test_cancelled_after_the_start_the_pool_is_refunded_in_one_transaction(
    staff: Any, people: list[Any]
) -> None:
    t = running(staff, people)
    for hand_id in arena_hands(t):
        play_out(hand_id)
    tournament_cancel(tournament_id=t.pk, reason="server")
    tournament_cancel(tournament_id=t.pk, reason="server")
    refund = LedgerTransaction.objects.get(idempotency_key=f"tournament:{t.pk}:refund")
    assert refund.kind == "tournament_refund"
    assert pot_account(t.ledger_table).balance == 0
    tournament_clock_due(t.pk)  # closes its tables out, scores nothing
    assert not TournamentTable.objects.filter(tournament=t, done=False).exists()
    assert ledger_problems(LEDGER_CHECKS) == []


def test_terms_change_before_the_start_only(staff: Any, people: list[Any]) -> None:
    t = arena(staff)
    tournament_edit(tournament_id=t.pk, staff=staff, stake=2, payout=[100])
    t.refresh_from_db()
    assert (t.stake, t.payout) == (2, [100])
    with pytest.raises(InvalidInput) as bad:
        tournament_edit(tournament_id=t.pk, staff=staff, payout=[70, 40])
    assert bad.value.errors is not None and set(bad.value.errors) == {"payout"}
    tournament_join(tournament_id=t.pk, user=people[0])
    tournament_join(tournament_id=t.pk, user=people[1])
    with pytest.raises(Conflict) as exc:
        tournament_edit(tournament_id=t.pk, staff=staff, entry_fee=5)
    assert exc.value.code == "tournament_has_entries"
    started(t)
    with pytest.raises(Conflict) as exc:
        tournament_edit(tournament_id=t.pk, staff=staff, name="x")
    assert exc.value.code == "tournament_closed"


# --------------------------------------------------------------------------- pairing


def test_blocked_players_are_never_seated_together(staff: Any, make_user: Any) -> None:
    a, b, c, d = (make_user()[0] for _ in range(4))
    Block.objects.create(blocker=a, blocked=b)
    t = arena(staff)
    for p in (a, b, c, d):
        tournament_join(tournament_id=t.pk, user=p)
    started(t)
    tables = TournamentTable.objects.filter(tournament=t)
    assert tables.count() == 2
    for link in tables:
        seated = set(Seat.objects.filter(table=link.table).values_list("player_id", flat=True))
        assert len(seated) == 2 and not {a.pk, b.pk} <= seated


def test_a_withdrawn_player_is_not_seated_and_may_come_back(staff: Any, people: list[Any]) -> None:
    t = arena(staff)
    for p in people[:3]:
        tournament_join(tournament_id=t.pk, user=p)
    tournament_leave(tournament_id=t.pk, user=people[2])  # before the start: gone
    tournament_join(tournament_id=t.pk, user=people[2])
    started(t)
    waiting = next(
        p
        for p in people[:3]
        if not Seat.objects.filter(player=p, table__tournament_link__tournament=t).exists()
    )
    tournament_leave(tournament_id=t.pk, user=waiting)
    assert TournamentEntry.objects.get(tournament=t, user=waiting).active is False
    with pytest.raises(Conflict) as exc:
        tournament_leave(tournament_id=t.pk, user=waiting)
    assert exc.value.code == "not_entered"
    tournament_join(tournament_id=t.pk, user=waiting)
    assert TournamentEntry.objects.get(tournament=t, user=waiting).active is True


@pytest.mark.slow(seconds=60)
def test_five_players_at_two_seat_tables_each_take_their_turn(
    staff: Any, people: list[Any]
) -> None:
    # given five players in a 2-seat arena: two tables at its start, one player waits
    t = running(staff, people)
    # when its tables end one at a time, each followed by a beat of its clock
    for _beat in range(6):
        play_out(min(arena_hands(t)))  # the oldest table ends first
        tournament_clock_due(t.pk)
        waiting = TournamentEntry.objects.filter(tournament=t, waited__gt=0)
        # then at most one player is left out at a time, never two pairings in a row
        assert [e.waited for e in waiting] in ([], [1])
    # and every player has played
    entries = TournamentEntry.objects.filter(tournament=t)
    assert all(e.hands >= 1 for e in entries), [(e.user_id, e.hands) for e in entries]
    tables_of = {p.pk: 0 for p in people}
    for link in TournamentTable.objects.filter(tournament=t).select_related("table"):
        for user_id in link.table.hands.get().hand_seats.values_list("user_id", flat=True):
            tables_of[user_id] += 1
    assert min(tables_of.values()) >= 2


# --------------------------------------------------------------------------- a whole arena


@pytest.mark.slow(seconds=60)
def test_a_whole_arena_on_the_clock_pays_a_pool_that_reconciles(
    staff: Any, people: list[Any]
) -> None:
    # given five players in a 2-seat arena with a 1000 Quan fee
    t = arena(staff, payout=[50, 30, 20])
    for p in people:
        tournament_join(tournament_id=t.pk, user=p)
    assert tournaments_sweep() == []  # nothing due before the start
    # when it starts: two tables at once, the fifth player waits
    started(t)
    assert len(arena_hands(t)) == 2
    # and its clock runs: each hand played by the server to its end and settled, then a beat
    for _round in range(2):
        for hand_id in arena_hands(t):
            play_out(hand_id)
        assert t.pk in tournaments_sweep()
        tournament_clock_due(t.pk)
    scored = list(TournamentHand.objects.filter(tournament=t).select_related("hand"))
    assert len(scored) == 4  # two rounds of two tables (the odd player out waits)
    # every scored hand's points are the table's for its result
    for row in scored:
        hand = row.hand
        assert row.points == list(arena_points(hand.outcome_result(), hand.n_seats))
    entries = {e.user_id: e for e in TournamentEntry.objects.filter(tournament=t)}
    assert sum(e.hands for e in entries.values()) == sum(len(r.points) for r in scored)
    assert sum(e.score for e in entries.values()) == sum(sum(r.points) for r in scored)
    # each pairing seated players who were free, never one player twice at once
    for link in TournamentTable.objects.filter(tournament=t):
        assert link.table.private is not None
    # then at its end the pool is paid by the schedule as one transaction
    before = {p.pk: wallet_funds(p).balance for p in people}
    ended(t)
    assert t.status == Tournament.Status.FINISHED
    prizes = LedgerTransaction.objects.get(idempotency_key=f"tournament:{t.pk}:prizes")
    assert prizes.kind == "tournament_prize"
    pool = 5 * FEE
    final = list(TournamentEntry.objects.filter(tournament=t).order_by("rank", "id"))
    assert sum(e.prize for e in final) == pool
    assert pot_account(t.ledger_table).balance == 0
    assert final[0].rank == 1 and final[0].prize >= 1000
    for a, b in itertools.pairwise(final):
        assert (a.score, a.wins) >= (b.score, b.wins) and a.prize >= b.prize
    # hands still in play finish as ordinary hands and score nothing
    for hand_id in arena_hands(t):
        play_out(hand_id)
    tournament_clock_due(t.pk)
    assert TournamentHand.objects.filter(tournament=t).count() == len(scored)
    assert not TournamentTable.objects.filter(tournament=t, done=False).exists()
    for p in people:  # what each won is in its wallet (hands played after the end aside)
        entry = entries[p.pk]
        assert entry.pk and wallet_funds(p).balance >= before[p.pk] - 100 * STAKE
    # and the arena's hands are ordinary hands: their exports verify
    export = hand_export(scored[0].hand)
    assert verify_export(export) is None
    assert ledger_problems(LEDGER_CHECKS) == []
    assert tournaments_sweep() == []
