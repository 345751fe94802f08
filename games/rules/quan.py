"""A hand's settlement in Quan (RULES.md §10.8–10.10, §11): points × stake, capped by what each
payer has, fees to the house from what each seat gains, and the gà góp pot. Pure arithmetic on
integers (no Django): the booking service, ``ledger_check`` and the offline verifier
(``games.rules.verify``) all compute with it, so a booked settlement can be recomputed and
compared anywhere.

Rounding (documented in docs/decisions.md): a payer that cannot cover everything it owes pays
its whole balance, shared among its creditors pro rata by floor division; the Quan left over
go one each to the largest remainders (ties: in the order of the transfers). A fee is
``floor(gain × percent / 100)``. Every leg is an integer and the legs sum to zero exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

POT = "pot"
HOUSE = "house"
# Payments that a room where xướng sai "is neither paid nor penalised" (Nền đất) drops.
XUONG_SAI_REASONS = frozenset({"xuong_sai", "bao_xuong_sai"})


def fee_percent(
    fees: Mapping[str, Any], *, n_players: int, auto_declared: bool, xuong_sai: bool
) -> int:
    """The room's fee in percent of a seat's gain (§11): the xướng sai rate on a xướng sai
    hand where the room has one, else by players (VIP), else by how the winner declared."""
    if xuong_sai and "xuong_sai" in fees:
        return int(fees["xuong_sai"][str(n_players)])
    if "by_players" in fees:
        return int(fees["by_players"][str(n_players)])
    if auto_declared and "auto" in fees:
        return int(fees["auto"])
    return int(fees.get("declared", 0))


@dataclass(frozen=True, slots=True)
class SeatQuan:
    """One seat's money in the hand: what it paid and received (before the fee), the fee on
    its gain, and the net change of its wallet."""

    seat: int
    paid: int
    received: int
    fee: int
    to_pot: int = 0

    @property
    def net(self) -> int:
        return self.received - self.paid - self.fee

    def to_dict(self) -> dict[str, int]:
        return {
            "seat": self.seat,
            "paid": self.paid,
            "received": self.received,
            "fee": self.fee,
            "net": self.net,
            "to_pot": self.to_pot,
        }


@dataclass(frozen=True, slots=True)
class QuanSettlement:
    """The booked form of a hand's settlement: per seat, the pot's change and the house's fees.
    ``capped`` lists the seats that could not pay all they owed."""

    seats: tuple[SeatQuan, ...]
    pot_in: int
    pot_out: int
    fee_percent: int
    capped: tuple[int, ...] = ()
    dropped: tuple[str, ...] = field(default=())

    @property
    def fees(self) -> int:
        return sum(s.fee for s in self.seats)

    def legs(self) -> dict[int | str, int]:
        """Signed amounts by seat, ``"pot"`` and ``"house"``; they sum to zero."""
        out: dict[int | str, int] = {s.seat: s.net for s in self.seats}
        out[POT] = self.pot_in - self.pot_out
        out[HOUSE] = self.fees
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "seats": [s.to_dict() for s in self.seats],
            "fees": self.fees,
            "fee_percent": self.fee_percent,
            "pot": {"in": self.pot_in, "out": self.pot_out},
            "capped": list(self.capped),
            "dropped": list(self.dropped),
        }


def _share_pro_rata(total: int, owed: Sequence[int]) -> list[int]:
    """Split ``total`` (< sum(owed)) over the debts ``owed`` pro rata, conserving it exactly."""
    whole = sum(owed)
    shares = [total * o // whole for o in owed]
    remainders = [total * o % whole for o in owed]
    left = total - sum(shares)
    order = sorted(range(len(owed)), key=lambda i: (-remainders[i], i))
    for i in order[:left]:
        shares[i] += 1
    return shares


def settle_quan(
    *,
    transfers: Sequence[Mapping[str, Any]],
    n_seats: int,
    stake: int,
    balances: Sequence[int],
    pot_balance: int = 0,
    fee_pct: int = 0,
    takes_pot: int | None = None,
    xuong_sai_settled: bool = True,
) -> QuanSettlement:
    """Book the rules core's point ``transfers`` (``{"from", "to", "points", "reason"}``; a
    party is a seat or ``"pot"``) at ``stake`` Quan a point, for seats holding ``balances``.

    Each payer pays at most its balance (§10.8); ``takes_pot`` (a seat) receives the pot as it
    stands plus this hand's inflows (§10.10); each seat's gain pays ``fee_pct`` percent to the
    house (§10.9)."""
    dropped = []
    debts: list[tuple[int, int | str, int]] = []
    for t in transfers:
        if not xuong_sai_settled and t["reason"] in XUONG_SAI_REASONS:
            dropped.append(t["reason"])
            continue
        debts.append((int(t["from"]), t["to"], int(t["points"]) * stake))
    paid = [0] * n_seats
    received = [0] * n_seats
    to_pot = [0] * n_seats
    pot_in = 0
    capped = []
    for payer in range(n_seats):
        mine = [(i, d) for i, d in enumerate(debts) if d[0] == payer]
        owed = [d[2] for _, d in mine]
        if sum(owed) > balances[payer]:
            capped.append(payer)
            owed = _share_pro_rata(balances[payer], owed)
        for (_, (_, payee, _)), amount in zip(mine, owed, strict=True):
            paid[payer] += amount
            if payee == POT:
                pot_in += amount
                to_pot[payer] += amount
            else:
                received[int(payee)] += amount
    pot_out = 0
    if takes_pot is not None:
        pot_out = pot_balance + pot_in
        received[takes_pot] += pot_out
    seats = tuple(
        SeatQuan(
            seat=i,
            paid=paid[i],
            received=received[i],
            fee=max(0, received[i] - paid[i]) * fee_pct // 100,
            to_pot=to_pot[i],
        )
        for i in range(n_seats)
    )
    return QuanSettlement(
        seats=seats,
        pot_in=pot_in,
        pot_out=pot_out,
        fee_percent=fee_pct,
        capped=tuple(capped),
        dropped=tuple(dropped),
    )


def result_quan(
    result: Mapping[str, Any],
    *,
    n_seats: int,
    stake: int,
    fees: Mapping[str, Any],
    xuong_sai_settled: bool,
    balances: Sequence[int],
    pot_balance: int,
) -> QuanSettlement:
    """The settlement in Quan of an ended hand's ``result`` (as stored in ``Hand.result``) at
    ``stake`` in a room with these ``fees``, for seats holding ``balances`` and this pot."""
    points = result.get("settlement") or {}
    declaration = result.get("declaration") or {}
    facts = points.get("facts") or {}
    pct = fee_percent(
        fees,
        n_players=n_seats,
        auto_declared=bool(declaration.get("auto")),
        xuong_sai=declaration.get("verdict") == "sai",
    )
    return settle_quan(
        transfers=points.get("transfers") or [],
        n_seats=n_seats,
        stake=stake,
        balances=balances,
        pot_balance=pot_balance,
        fee_pct=pct,
        takes_pot=facts.get("winner") if facts.get("takes_pot") else None,
        xuong_sai_settled=xuong_sai_settled,
    )
