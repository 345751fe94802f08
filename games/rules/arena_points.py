"""An arena's points per hand, from the hand's result and the cước: a pure function,
no Django. The table is docs/rules.md "Arena points"; docs/decisions/ says why.

* a win paid in full or on its declaration (đúng, thiếu; no fault of the winner): the winner
  2, plus 1 for a declared score of 4 or more (a real cước beyond xuông, thông, chì), plus 1
  more from 8 (tám đỏ and up), plus 1 more from 12 (thập thành and up): 2 to 5;
* hòa (the stock ran out): 1 to every seat;
* the others of a won hand: 0; a báo seat (it paid for the village) 0;
* a winner that does not collect (xướng sai, a no-pay or đền-làng fault, 4-11): 0, and every
  other seat that is not báo 1 (it was not beaten);
* ù láo / ù báo: the claimer 0, every other seat 1.

Never negative: an arena rewards playing and winning, a bad hand costs only the hand.
"""

from __future__ import annotations

from games.rules.results import HandResult, Result, Verdict

WIN, DRAW, NOT_BEATEN = 2, 1, 1
CUOC_STEPS = (4, 8, 12)  # each declared score reached adds a point to the win


def win_points(declared_score: int) -> int:
    """A paid win's points: 2, +1 for each of ``CUOC_STEPS`` the declared score reaches."""
    return WIN + sum(1 for step in CUOC_STEPS if declared_score >= step)


def arena_points(result: HandResult, n_seats: int) -> tuple[int, ...]:
    """Each hand seat's arena points (play order) for an ended hand's ``result``."""
    outcome = result.outcome
    if outcome is None or outcome.result is Result.HOA:
        return (DRAW,) * n_seats
    if outcome.result is Result.U_LAO:
        return tuple(0 if s == outcome.seat else NOT_BEATEN for s in range(n_seats))
    settlement = result.settlement
    facts = settlement.facts if settlement is not None else None
    if facts is None:  # a win without settlement facts: nobody paid
        return (DRAW,) * n_seats
    winner, bao = facts.winner, set(facts.bao)
    paid = (
        facts.verdict in (Verdict.DUNG, Verdict.THIEU)
        and not facts.winner_faults
        and facts.penalty is None
        and any(t.payee == winner for t in result.transfers)
    )
    if paid:
        return tuple(win_points(facts.declared_score) if s == winner else 0 for s in range(n_seats))
    return tuple(0 if s == winner or s in bao else NOT_BEATEN for s in range(n_seats))
