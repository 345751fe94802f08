"""Settlement of an ended hand in points (RULES.md §10); money = points × stake, later.

:func:`settle` turns the final state into point transfers between seats (and the gà góp pot),
plus the facts behind them. Transfers always sum to zero with the pot. Caps against balances and
fees are the ledger's job, not this module's. The engine settles a hand once, when it ends, into
``HandState.settlement``.
"""

from __future__ import annotations

from dataclasses import replace

from games.rules.cards import CC
from games.rules.faults import DEN_LANG, FAULTS, NO_PAY, hidden_penalty, winner_faults
from games.rules.results import (
    POT,
    Declaration,
    Result,
    Settlement,
    SettlementFacts,
    Transfer,
    Verdict,
)
from games.rules.ruleset import FOUR_ELEVEN_MIN, FOUR_ELEVEN_POINTS, NAMED_HANDS
from games.rules.state import SRC_DISCARD, SRC_STOCK, HandState, Phase

__all__ = ["FAULTS", "POT", "Settlement", "SettlementFacts", "Transfer", "settle", "takes_pot"]

U_LAO_POINTS = 17  # "tám đỏ đôi lèo" (seeds 003/004)


def _bao_seats(state: HandState) -> list[int]:
    return [i for i, st in enumerate(state.seats) if st.bao]


def _last_to_fault(state: HandState, seats: list[int]) -> int:
    def last(i: int) -> int:
        return max((f.move_index for f in state.seats[i].faults if f.visible), default=-1)

    return max(seats, key=last)


def settle(state: HandState) -> Settlement:
    """Who pays whom for the ended hand ``state``."""
    if state.phase is not Phase.ENDED:
        raise ValueError("only an ended hand is settled")
    ruleset = state.config.ruleset
    result = state.outcome.result if state.outcome is not None else Result.HOA
    transfers = _pot_flows(state) if ruleset.ga_gop else []
    if result is Result.U_LAO:
        assert state.outcome is not None and state.outcome.seat is not None
        claimer = state.outcome.seat
        transfers += [
            Transfer(claimer, other, U_LAO_POINTS, "u_lao")
            for other in range(state.n_seats)
            if other != claimer
        ]
        return Settlement(result, tuple(transfers))
    if result is not Result.U or state.win is None or state.declaration is None:
        return Settlement(result, tuple(transfers))  # hòa: nobody pays
    won, facts, thong_next = _settle_win(state, state.win.seat, state.declaration)
    return Settlement(result, tuple(transfers + won), facts, thong_next)


def _settle_win(
    state: HandState, winner: int, decl: Declaration
) -> tuple[list[Transfer], SettlementFacts, int | None]:
    """The transfers, facts and Thông carry of a won hand (§10.1–10.6, 10.10)."""
    ruleset = state.config.ruleset
    P = decl.declared_score.total
    T = decl.true_score.total
    verdict = decl.verdict
    faults = winner_faults(state)
    penalty = hidden_penalty(faults)
    bao = [i for i in _bao_seats(state) if i != winner]
    losers = [i for i in range(state.n_seats) if i != winner]
    facts = SettlementFacts(
        winner=winner,
        verdict=verdict,
        declared_score=P,
        true_score=T,
        winner_faults=tuple(f.slug for f in faults),
        penalty=penalty,
        bao=tuple(bao),
    )
    if ruleset.four_eleven and T < FOUR_ELEVEN_MIN:
        return [Transfer(winner, o, FOUR_ELEVEN_POINTS, "four_eleven") for o in losers], facts, None
    if penalty == DEN_LANG:
        fine = P if ruleset.den_lang == "declared" else int(ruleset.den_lang)
        return [Transfer(winner, o, fine, "den_lang") for o in losers], facts, None
    if penalty == NO_PAY:
        treo = any(f.slug == "treo_tranh" for f in faults)
        thong = treo and ruleset.thong_after_treo_tranh and verdict is not Verdict.SAI
        return [], facts, winner if thong else None
    if verdict is Verdict.SAI:
        if state.n_seats == 2:
            return [], facts, None
        clean = [i for i in losers if i not in bao]
        out = [Transfer(winner, o, P, "xuong_sai") for o in clean]
        out += [Transfer(b, o, T, "bao_xuong_sai") for b in bao for o in clean]
        return out, facts, None
    # a clean win, declared đúng or thiếu
    if bao:
        payers = bao if ruleset.bao_payer == "each" else [_last_to_fault(state, bao)]
        out = [Transfer(b, winner, P * len(losers), "bao_den_lang") for b in payers]
    else:
        out = [Transfer(o, winner, P, "win") for o in losers]
    if ruleset.ga_gop and takes_pot(decl):
        facts = replace(facts, takes_pot=True)
    return out, facts, winner


def takes_pot(decl: Declaration) -> bool:
    """Whether a declaration takes the gà góp pot (§10.10): chì bạch thủ, chì bạch thủ chi, or a
    named hand (each a chì bạch thủ whose name replaces ``chi`` and ``bach_thu``)."""
    chi_bach_thu = decl.declared("chi") and (
        decl.declared("bach_thu") or decl.declared("bach_thu_chi")
    )
    return bool(chi_bach_thu) or any(decl.declared(slug) for slug in NAMED_HANDS)


def _pot_flows(state: HandState) -> list[Transfer]:
    """Gà góp (§10.10): each seat's stake for the hand, and the chíu payments into the pot.

    A chíu of a stock card makes every other seat pay 1; of a discard, the discarder pays 1;
    doubled on Chi chi. Each nhái makes every other seat pay its points (1, 2, 3… in a run).
    """
    n = state.n_seats
    out = [Transfer(seat, POT, 1, "ga_gop_stake") for seat in range(n)]
    for seat, st in enumerate(state.seats):
        for g in st.mat:
            if g.kind != "chiu":
                continue
            unit = 2 if g.taken == CC else 1
            if g.source == SRC_STOCK:
                out += [Transfer(o, POT, unit, "ga_gop_chiu") for o in range(n) if o != seat]
            elif g.source == SRC_DISCARD:
                out.append(Transfer(g.from_door, POT, unit, "ga_gop_chiu"))
    for nhai in state.nhai:
        out += [Transfer(o, POT, nhai.points, "ga_gop_nhai") for o in range(n) if o != nhai.seat]
    return out
