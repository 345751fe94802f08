"""The server's own moves (RULES.md §9 ngồi im, §12 deadlines): what it plays for a seat whose
deadline has passed, for a báo seat and for a seat that left mid-hand.

Draw, then pass; a discard (or trả cửa) of the first trash card; the seat's true cước when it must
declare. It never eats or chíus for anybody, and wins only for a seat that asked the server to
(``auto_u``) and really holds the win. Every move is ``system`` and never a fault when a clean one
exists.
"""

from __future__ import annotations

from games.rules import faults as fault_rules
from games.rules.analysis import analyse
from games.rules.cards import KIND_OF, N_KINDS
from games.rules.cuoc import facts_from_state, true_total
from games.rules.engine import apply, can_win
from games.rules.moves import Declare, Discard, Draw, Move, Pass, TraCua, U
from games.rules.ruleset import FOUR_ELEVEN_MIN
from games.rules.state import Fault, HandState, Phase


def auto_move(state: HandState) -> Move:
    """The move the server makes for the seat to act (``state.turn``); the hand must be live."""
    if state.phase is Phase.ENDED:
        raise ValueError("the hand is over")
    seat = state.turn
    st = state.seats[seat]
    if state.phase is Phase.DECLARE:
        return Declare(seat, auto=True, system=True)
    if st.auto_u and not st.bao and _worth_claiming(state, seat):
        return U(seat, system=True)
    if state.phase in (Phase.OFFER, Phase.AFTER_DRAW):
        step = Draw if state.phase is Phase.OFFER else Pass
        return step(seat, system=True)
    # A discard (or trả cửa): trash first, a clean one if any (when every one is a fault, the
    # engine accepts any: RULES.md §9 forced discards).
    kind = Discard if state.phase in (Phase.DISCARD, Phase.DEALER_START) else TraCua
    trash = [KIND_OF[c] for c in analyse(st.hand, st.mat)["trash"]]
    held = sorted(
        (k for k in range(N_KINDS) if st.hand[k]),
        key=lambda k: trash.index(k) if k in trash else len(trash),
    )
    moves = [kind(seat, k, system=True) for k in held]
    # Each fault costs the seat: none, then a hidden no-pay, then đền làng, then a visible one
    # (the seat goes báo); the sort is stable, so trash order decides among equals.
    return min(moves, key=lambda m: _cost(fault_rules.faults_of(state, m)))


def _cost(faults: list[Fault]) -> int:
    ranks = {fault_rules.NO_PAY: 1, fault_rules.DEN_LANG: 2}
    return max(
        (3 if f.visible else ranks.get(fault_rules.FAULTS[f.slug].category, 2) for f in faults),
        default=0,
    )


def _worth_claiming(state: HandState, seat: int) -> bool:
    """Whether the server should claim the seat's win: a real win, no fault (a bỏ ù after a win
    let go by would void it), and in 4-11 mode worth at least 4 (a lower win costs the winner 11
    points to every other seat, while letting it go is free: RULES.md §10.6)."""
    if not can_win(state, seat):
        return False
    claim = U(seat, system=True)
    if fault_rules.faults_of(state, claim):
        return False
    ruleset = state.config.ruleset
    if not ruleset.four_eleven:
        return True
    won = apply(state, claim)
    return true_total(ruleset, facts_from_state(won)) >= FOUR_ELEVEN_MIN
