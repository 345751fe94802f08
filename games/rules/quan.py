"""A hand's settlement in Quan (RULES.md §10.8–10.10, §11): points × stake, capped by what each
payer has, fees to the house from what each seat gains, and the gà góp pot. Pure arithmetic on
integers (no Django): the booking service, ``ledger_check`` and the offline verifier
(``games.rules.verify``) all compute with it, so a booked settlement can be recomputed and
compared anywhere.

Rounding (documented in docs/decisions/): a payer that cannot cover everything it owes pays
its whole balance, shared among its creditors pro rata by floor division; the Quan left over
go one each to the largest remainders (ties: in the order of the transfers). A fee is
``floor(gain × percent / 100)``. Every leg is an integer and the legs sum to zero exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.rules.errors import InvalidField, gettext_noop, shown
from games.rules.results import HandResult, Verdict

POT = "pot"
HOUSE = "house"
# Payments that a room where xướng sai "is neither paid nor penalised" (Nền đất) drops.
XUONG_SAI_REASONS = frozenset({"xuong_sai", "bao_xuong_sai"})


# The seat counts a per-players rate must cover (RULES.md §3: 2 to 4 players).
FEE_SEAT_COUNTS: tuple[int, ...] = (2, 3, 4)
_FEE_KEYS = ("declared", "auto", "by_players", "xuong_sai")
_PERCENT_RANGE = (0, 100)


class FeesError(InvalidField):
    """A fee schedule was refused (code ``invalid_fees``); ``field`` is the dotted path of the
    offending entry (``by_players.3``)."""

    def __init__(self, key: str, template: str, /, **params: object) -> None:
        super().__init__(key, "invalid_fees", template, **params)


def _percent(key: str, value: Any) -> int:
    low, high = _PERCENT_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FeesError(
            key,
            gettext_noop("%(key)s must be a whole percent from %(low)s to %(high)s."),
            key=key,
            low=low,
            high=high,
        )
    return value


def _by_players(key: str, value: Any) -> tuple[tuple[int, int], ...]:
    wanted = [str(n) for n in FEE_SEAT_COUNTS]
    if (
        not isinstance(value, Mapping)
        or sorted(map(str, value)) != wanted
        or (not all(isinstance(k, str) for k in value))
    ):
        raise FeesError(
            key,
            gettext_noop("%(key)s must give a percent for each number of players: %(counts)s."),
            key=key,
            counts=", ".join(f'"{n}"' for n in wanted),
        )
    return tuple((n, _percent(f"{key}.{n}", value[str(n)])) for n in FEE_SEAT_COUNTS)


@dataclass(frozen=True, slots=True)
class FeeSchedule:
    """A room's fees (RULES.md §11), in whole percent of each seat's gain in a hand: by how
    the winner declared (``declared``, ``auto``), or by number of players (``by_players``, the
    VIP rooms); ``xuong_sai`` the rate on a xướng sai hand by number of players. A rate a
    schedule does not give is absent (None), exactly as in its JSON form."""

    declared: int | None = None
    auto: int | None = None
    by_players: tuple[tuple[int, int], ...] | None = None
    xuong_sai: tuple[tuple[int, int], ...] | None = None

    @classmethod
    def from_dict(cls, data: Any) -> FeeSchedule:
        """Validate the JSON form ``{"declared": 5, "auto": 10, "xuong_sai": {"2": 30, …}}``;
        ``FeesError`` names the bad entry."""
        if not isinstance(data, Mapping):
            raise FeesError(
                "fees",
                gettext_noop("The fees must be an object with %(keys)s."),
                keys=", ".join(_FEE_KEYS),
            )
        for name in data:
            if name not in _FEE_KEYS:
                raise FeesError(
                    str(name),
                    gettext_noop("%(key)s is not a fee (use %(keys)s)."),
                    key=shown(name),
                    keys=", ".join(_FEE_KEYS),
                )
        return cls(
            declared=_percent("declared", data["declared"]) if "declared" in data else None,
            auto=_percent("auto", data["auto"]) if "auto" in data else None,
            by_players=_by_players("by_players", data["by_players"])
            if "by_players" in data
            else None,
            xuong_sai=_by_players("xuong_sai", data["xuong_sai"]) if "xuong_sai" in data else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form; ``FeeSchedule.from_dict(f.to_dict()) == f``."""
        out: dict[str, Any] = {}
        if self.declared is not None:
            out["declared"] = self.declared
        if self.auto is not None:
            out["auto"] = self.auto
        if self.by_players is not None:
            out["by_players"] = {str(n): pct for n, pct in self.by_players}
        if self.xuong_sai is not None:
            out["xuong_sai"] = {str(n): pct for n, pct in self.xuong_sai}
        return out

    def percent(self, *, n_players: int, auto_declared: bool, xuong_sai: bool) -> int:
        """The fee in percent of a seat's gain (§11): the xướng sai rate on a xướng sai hand
        where the schedule has one, else by players (VIP), else by how the winner declared."""
        if xuong_sai and self.xuong_sai is not None:
            return dict(self.xuong_sai)[n_players]
        if self.by_players is not None:
            return dict(self.by_players)[n_players]
        if auto_declared and self.auto is not None:
            return self.auto
        return self.declared or 0


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
    result: HandResult,
    *,
    n_seats: int,
    stake: int,
    fees: FeeSchedule,
    xuong_sai_settled: bool,
    balances: Sequence[int],
    pot_balance: int,
) -> QuanSettlement:
    """The settlement in Quan of an ended hand's ``result`` (``Hand.result``, typed) at
    ``stake`` in a room with these ``fees``, for seats holding ``balances`` and this pot."""
    points, declaration = result.settlement, result.declaration
    facts = points.facts if points is not None else None
    pct = fees.percent(
        n_players=n_seats,
        auto_declared=declaration is not None and declaration.auto,
        xuong_sai=declaration is not None and declaration.verdict is Verdict.SAI,
    )
    return settle_quan(
        transfers=[t.to_dict() for t in points.transfers] if points is not None else [],
        n_seats=n_seats,
        stake=stake,
        balances=balances,
        pot_balance=pot_balance,
        fee_pct=pct,
        takes_pot=facts.winner if facts is not None and facts.takes_pot else None,
        xuong_sai_settled=xuong_sai_settled,
    )
