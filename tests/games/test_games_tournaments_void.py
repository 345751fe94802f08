"""A voided hand's arena points (games.services.tournaments.tournament_hand_void, called by
``hand_void`` in its transaction): while the arena runs they are taken off by an append-only
reversal row, once only; after its payout the payout stands and the void is only noted.
``ledger_check``'s tournament check holds the entries' scores to the rows' sums."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.ledger_selectors import LEDGER_CHECKS, ledger_problems
from accounts.models import LedgerTransaction
from games.models import FeedEntry, Hand, Tournament, TournamentEntry, TournamentHand
from games.selectors.tournaments import tournament_points_problems, tournament_standings
from games.services.tournaments import tournament_hand_void, tournament_join
from games.services.void import hand_void
from games.tasks import tournament_clock_due
from tests.games.test_games_tournaments import arena, arena_hands, ended, play_out, started

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user: Any) -> Any:
    return make_user(is_staff=True)[0]


def standing(t: Tournament) -> dict[int, tuple[int, int, int]]:
    return {
        e.user_id: (e.score, e.hands, e.wins) for e in TournamentEntry.objects.filter(tournament=t)
    }


def voided_notes(hand: Hand) -> dict[int, dict[str, Any]]:
    rows = FeedEntry.objects.filter(kind="tournament_hand_voided", hand_id=hand.pk)
    return {r.user_id: r.data for r in rows}


@pytest.mark.slow(seconds=60)
def test_a_voided_hand_loses_its_points_before_the_payout_and_is_noted_after_it(
    staff: Any, make_user: Any
) -> None:
    # given a running 2-seat arena of four whose first two hands were played and scored
    people = [make_user()[0] for _ in range(4)]
    t = arena(staff, payout=[100])
    for p in people:
        tournament_join(tournament_id=t.pk, user=p)
    started(t)
    first = arena_hands(t)
    assert len(first) == 2
    for hand_id in first:
        play_out(hand_id)
    tournament_clock_due(t.pk)  # scores both, seats everybody again
    a, b = (Hand.objects.get(pk=h) for h in first)
    scored_a = TournamentHand.objects.get(hand=a, kind="score")
    before = standing(t)
    assert tournament_standings(tournament_id=t.pk)["hands"] == 2

    # when staff void hand A while the arena runs (twice: the repeat changes nothing)
    hand_void(hand_id=a.pk, staff=staff, reason="thông đồng")
    hand_void(hand_id=a.pk, staff=staff, reason="again")

    # then one reversal row negates its score row, and its players lose what it gave them
    reversal = TournamentHand.objects.get(hand=a, kind="void")
    assert reversal.points == [-p for p in scored_a.points] and not reversal.after_payout
    assert TournamentHand.objects.filter(hand=a).count() == 2
    winner = a.outcome_result().winner
    after = standing(t)
    for seat, got in zip(a.seat_list(), scored_a.points, strict=True):
        score, hands, wins = before[seat.user_id]
        won = 1 if winner == seat.position and got > 0 else 0
        assert after[seat.user_id] == (score - got, hands - 1, wins - won)
    for seat in b.seat_list():  # the other table's players are untouched
        assert after[seat.user_id] == before[seat.user_id]
    # the standings count it apart, the feed tells its players, the books and points add up
    board = tournament_standings(tournament_id=t.pk)
    assert (board["hands"], board["hands_voided"]) == (1, 1)
    notes = voided_notes(a)
    assert set(notes) == {s.user_id for s in a.seat_list()}
    for seat, got in zip(a.seat_list(), scored_a.points, strict=True):
        assert notes[seat.user_id] == {
            "tournament_id": t.pk,
            "name": t.name,
            "points": got,
            "score": after[seat.user_id][0],
            "payout_stands": False,
        }
    assert ledger_problems(LEDGER_CHECKS) == []
    # and a retried arena step, or the clock's next beat, takes nothing off twice nor rescores
    t.refresh_from_db()
    assert tournament_hand_void(tournament=t, hand=Hand.objects.get(pk=a.pk)) == []
    tournament_clock_due(t.pk)
    assert standing(t) == after
    assert TournamentHand.objects.filter(hand=a).count() == 2

    # when the arena ends and pays out, then hand B is voided
    ended(t)
    assert t.status == Tournament.Status.FINISHED
    paid = {e.user_id: (e.rank, e.prize) for e in TournamentEntry.objects.filter(tournament=t)}
    prizes = LedgerTransaction.objects.get(idempotency_key=f"tournament:{t.pk}:prizes")
    final = standing(t)
    hand_void(hand_id=b.pk, staff=staff, reason="muộn")

    # then the payout stands: a zero reversal row, after the payout, and nothing else moves
    late = TournamentHand.objects.get(hand=b, kind="void")
    assert late.after_payout and late.points == [0] * len(late.points)
    assert standing(t) == final
    assert {
        e.user_id: (e.rank, e.prize) for e in TournamentEntry.objects.filter(tournament=t)
    } == paid
    assert LedgerTransaction.objects.filter(kind="tournament_prize").get() == prizes
    assert {n["payout_stands"] for n in voided_notes(b).values()} == {True}
    assert {n["points"] for n in voided_notes(b).values()} == {0}
    board = tournament_standings(tournament_id=t.pk)
    assert (board["hands"], board["hands_voided"]) == (1, 2)
    assert ledger_problems(LEDGER_CHECKS) == []

    # and the points check is not blind: a score edited by hand is caught
    someone = people[0]
    TournamentEntry.objects.filter(tournament=t, user=someone).update(score=999)
    problems = tournament_points_problems(t)
    assert len(problems) == 1 and str(someone.pk) in problems[0]


def test_the_append_only_guard_refuses_editing_a_reversal(staff: Any, make_user: Any) -> None:
    from django.db import IntegrityError, transaction

    people = [make_user()[0] for _ in range(2)]
    t = arena(staff)
    for p in people:
        tournament_join(tournament_id=t.pk, user=p)
    started(t)
    (hand_id,) = arena_hands(t)
    row = TournamentHand.objects.create(
        tournament=t, hand_id=hand_id, kind="void", points=[0, 0], after_payout=True
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        TournamentHand.objects.filter(pk=row.pk).update(points=[5, 5])
    with pytest.raises(IntegrityError), transaction.atomic():  # one reversal per hand
        TournamentHand.objects.create(tournament=t, hand_id=hand_id, kind="void", points=[0, 0])
    with pytest.raises(IntegrityError), transaction.atomic():  # only a void is after a payout
        TournamentHand.objects.create(
            tournament=t, hand_id=hand_id, kind="score", points=[0, 0], after_payout=True
        )
