"""Settlement of an ended hand in points (RULES.md §10); money = points × stake, later.

:func:`settle` turns the final state into point transfers between seats (and the gà góp pot),
plus the facts behind them. Transfers always sum to zero with the pot. Caps against balances and
fees are the ledger's job, not this module's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from games.rules.cards import CC
from games.rules.cuoc import ruleset_of
from games.rules.faults import DEN_LANG, FAULTS, NO_PAY, hidden_penalty, winner_faults
from games.rules.ruleset import FOUR_ELEVEN_MIN, FOUR_ELEVEN_POINTS
from games.rules.state import SRC_DISCARD, SRC_STOCK, HandState, Phase

POT = "pot"
U_LAO_POINTS = 17  # "tám đỏ đôi lèo" (seeds 003/004)
POT_HANDS = ("chi_bach_thu", "hoa_roi_cua_phat", "ca_loi_san_dinh")


@dataclass(frozen=True, slots=True)
class Transfer:
    payer: int | str
    payee: int | str
    points: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.payer, "to": self.payee, "points": self.points, "reason": self.reason}


@dataclass
class Settlement:
    result: str
    transfers: list[Transfer] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    thong_next: int | None = None

    def net(self, n_seats: int) -> dict[int | str, int]:
        """Points won (+) or lost (−) per seat, and the pot's change."""
        out: dict[int | str, int] = {s: 0 for s in range(n_seats)}
        out[POT] = 0
        for t in self.transfers:
            out[t.payer] -= t.points
            out[t.payee] += t.points
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "transfers": [t.to_dict() for t in self.transfers],
            "facts": self.facts,
            "thong_next": self.thong_next,
        }


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
    ruleset = ruleset_of(state.config.ruleset)
    n = state.n_seats
    outcome = state.outcome or {}
    result = outcome.get("result", "hoa")
    s = Settlement(result=result)
    if ruleset.ga_gop:
        _pot_flows(state, s)
    if result == "u_lao":
        claimer = outcome["seat"]
        for other in range(n):
            if other != claimer:
                s.transfers.append(Transfer(claimer, other, U_LAO_POINTS, "u_lao"))
        return s
    if result != "u" or state.win is None:
        return s  # hòa or abandoned: nobody pays
    winner = state.win.seat
    decl = state.declaration or {}
    P = decl.get("declared_score", {}).get("total", 0)
    T = decl.get("true_score", {}).get("total", 0)
    verdict = decl.get("verdict", "dung")
    faults = winner_faults(state)
    penalty = hidden_penalty(faults)
    bao = [i for i in _bao_seats(state) if i != winner]
    losers = [i for i in range(n) if i != winner]
    s.facts = {
        "winner": winner,
        "verdict": verdict,
        "declared_score": P,
        "true_score": T,
        "winner_faults": [f.slug for f in faults],
        "penalty": penalty,
        "bao": bao,
    }
    if ruleset.four_eleven and T < FOUR_ELEVEN_MIN:
        for other in losers:
            s.transfers.append(Transfer(winner, other, FOUR_ELEVEN_POINTS, "four_eleven"))
        return s
    if penalty == DEN_LANG:
        fine = P if ruleset.den_lang == "declared" else int(ruleset.den_lang)
        for other in losers:
            s.transfers.append(Transfer(winner, other, fine, "den_lang"))
        return s
    if penalty == NO_PAY:
        treo = any(f.slug == "treo_tranh" for f in faults)
        if treo and ruleset.thong_after_treo_tranh and verdict != "sai":
            s.thong_next = winner
        return s
    if verdict == "sai":
        if n == 2:
            return s
        clean = [i for i in losers if i not in bao]
        for other in clean:
            s.transfers.append(Transfer(winner, other, P, "xuong_sai"))
        for b in bao:
            for other in clean:
                s.transfers.append(Transfer(b, other, T, "bao_xuong_sai"))
        return s
    # a clean win, declared đúng or thiếu
    s.thong_next = winner
    if bao:
        payers = bao if ruleset.bao_payer == "each" else [_last_to_fault(state, bao)]
        for b in payers:
            s.transfers.append(Transfer(b, winner, P * len(losers), "bao_den_lang"))
    else:
        for other in losers:
            s.transfers.append(Transfer(other, winner, P, "win"))
    if ruleset.ga_gop and any(decl.get("cuoc", {}).get(k) for k in _pot_cuoc(decl)):
        s.facts["takes_pot"] = True
    return s


def _pot_cuoc(decl: dict[str, Any]) -> list[str]:
    """The declared cước that take the gà góp pot: chì bạch thủ (chi), hoa rơi, cá lội."""
    cuoc = decl.get("cuoc", {})
    keys = []
    if cuoc.get("chi") and (cuoc.get("bach_thu") or cuoc.get("bach_thu_chi")):
        keys.append("chi")
    keys.extend(k for k in ("hoa_roi_cua_phat", "ca_loi_san_dinh") if cuoc.get(k))
    return keys


def _pot_flows(state: HandState, s: Settlement) -> None:
    """Gà góp (§10.10): each seat's stake for the hand, and the chíu payments into the pot.

    A chíu of a stock card makes every other seat pay 1; of a discard, the discarder pays 1;
    doubled on Chi chi. Each nhái makes every other seat pay its points (1, 2, 3… in a run).
    """
    n = state.n_seats
    for seat in range(n):
        s.transfers.append(Transfer(seat, POT, 1, "ga_gop_stake"))
    for seat, st in enumerate(state.seats):
        for g in st.mat:
            if g.kind != "chiu":
                continue
            unit = 2 if g.taken == CC else 1
            if g.source == SRC_STOCK:
                for other in range(n):
                    if other != seat:
                        s.transfers.append(Transfer(other, POT, unit, "ga_gop_chiu"))
            elif g.source == SRC_DISCARD:
                s.transfers.append(Transfer(g.from_door, POT, unit, "ga_gop_chiu"))
    for nhai in state.nhai:
        for other in range(n):
            if other != nhai.seat:
                s.transfers.append(Transfer(other, POT, nhai.points, "ga_gop_nhai"))


__all__ = ["FAULTS", "POT", "Settlement", "Transfer", "settle"]
