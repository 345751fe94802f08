"""How a hand ended, as typed values: the :class:`Outcome`, the winner's :class:`Declaration`
(RULES.md §8) and the :class:`Settlement` in points (§10).

Each round-trips ``to_dict()`` / ``from_dict()`` to the exact JSON the server stores in
``Hand.result`` and clients read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from games.rules.scoring import Score

__all__ = [
    "POT",
    "CuocCounts",
    "Declaration",
    "HandResult",
    "JsonValue",
    "Outcome",
    "Payee",
    "Pot",
    "Result",
    "Settlement",
    "SettlementFacts",
    "Transfer",
    "Verdict",
    "WinRecord",
]

JsonValue = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]
# A cước map (slug → count) in declaration order, as an immutable value.
CuocCounts = tuple[tuple[str, int], ...]


class Result(StrEnum):
    U = "u"  # a win (declared)
    U_LAO = "u_lao"  # ù láo / ù báo (advanced mode)
    HOA = "hoa"  # the stock ran out


class Verdict(StrEnum):
    """A declaration against the true cước (§8)."""

    DUNG = "dung"
    THIEU = "thieu"
    SAI = "sai"


class Pot(StrEnum):
    """The gà góp pot (§10.10), the one payee that is not a seat."""

    POT = "pot"


POT = Pot.POT
Payee = int | Pot


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the hand ended: ``{"result": "u", "seat": n}``, ``{"result": "u_lao", "seat": n}`` or
    ``{"result": "hoa"}``."""

    result: Result
    seat: int | None = None

    def to_dict(self) -> dict[str, JsonValue]:
        d: dict[str, JsonValue] = {"result": self.result.value}
        if self.seat is not None:
            d["seat"] = self.seat
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Outcome:
        return cls(Result(data["result"]), data.get("seat"))


def _cuoc_dict(cuoc: CuocCounts) -> dict[str, JsonValue]:
    return dict(cuoc)


def _score(data: Mapping[str, Any]) -> Score:
    return Score(base=data["base"], ga=data["ga"], total=data["total"])


@dataclass(frozen=True, slots=True)
class Declaration:
    """The winner's xướng, judged: what it declared, the true cước, the verdict, and both
    scores (``declared_score`` is P of §10, ``true_score`` is T).

    ``equally_right`` are the other readings of the win as right as ``true_cuoc`` (§6: named
    hands tied in điểm and dịch), each a whole cước map scoring T; declaring any of them is
    đúng. Stored only when there are some: a record without it has none."""

    cuoc: CuocCounts
    auto: bool
    verdict: Verdict
    true_cuoc: CuocCounts
    declared_score: Score
    true_score: Score
    equally_right: tuple[CuocCounts, ...] = ()

    def declared(self, slug: str) -> int:
        """How many times the winner declared ``slug``."""
        return dict(self.cuoc).get(slug, 0)

    def to_dict(self) -> dict[str, JsonValue]:
        d: dict[str, JsonValue] = {
            "cuoc": _cuoc_dict(self.cuoc),
            "auto": self.auto,
            "verdict": self.verdict.value,
            "true_cuoc": _cuoc_dict(self.true_cuoc),
            "declared_score": dict(self.declared_score.to_dict()),
            "true_score": dict(self.true_score.to_dict()),
        }
        if self.equally_right:
            d["equally_right"] = [_cuoc_dict(reading) for reading in self.equally_right]
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Declaration:
        return cls(
            cuoc=tuple(data["cuoc"].items()),
            auto=bool(data["auto"]),
            verdict=Verdict(data["verdict"]),
            true_cuoc=tuple(data["true_cuoc"].items()),
            declared_score=_score(data["declared_score"]),
            true_score=_score(data["true_score"]),
            equally_right=tuple(
                tuple(reading.items()) for reading in data.get("equally_right", ())
            ),
        )


@dataclass(frozen=True, slots=True)
class Transfer:
    """``points`` paid by seat ``payer`` to ``payee`` (a seat or the pot) for ``reason``."""

    payer: int
    payee: Payee
    points: int
    reason: str

    def to_dict(self) -> dict[str, JsonValue]:
        payee = self.payee.value if isinstance(self.payee, Pot) else self.payee
        return {"from": self.payer, "to": payee, "points": self.points, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Transfer:
        to = data["to"]
        payee: Payee = Pot(to) if isinstance(to, str) else int(to)
        return cls(int(data["from"]), payee, int(data["points"]), str(data["reason"]))


@dataclass(frozen=True, slots=True)
class SettlementFacts:
    """What a won hand was settled on (absent for hòa and ù láo)."""

    winner: int
    verdict: Verdict
    declared_score: int
    true_score: int
    winner_faults: tuple[str, ...]
    penalty: str | None
    bao: tuple[int, ...]
    takes_pot: bool = False  # gà góp: the winner takes the pot (§10.10)

    def to_dict(self) -> dict[str, JsonValue]:
        d: dict[str, JsonValue] = {
            "winner": self.winner,
            "verdict": self.verdict.value,
            "declared_score": self.declared_score,
            "true_score": self.true_score,
            "winner_faults": list(self.winner_faults),
            "penalty": self.penalty,
            "bao": list(self.bao),
        }
        if self.takes_pot:
            d["takes_pot"] = True
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SettlementFacts:
        return cls(
            winner=data["winner"],
            verdict=Verdict(data["verdict"]),
            declared_score=data["declared_score"],
            true_score=data["true_score"],
            winner_faults=tuple(data["winner_faults"]),
            penalty=data["penalty"],
            bao=tuple(data["bao"]),
            takes_pot=bool(data.get("takes_pot", False)),
        )


@dataclass(frozen=True, slots=True)
class Settlement:
    """Who pays whom for an ended hand, in points; transfers sum to zero with the pot.
    ``thong_next`` is the seat that carries Thông into the next hand."""

    result: Result
    transfers: tuple[Transfer, ...] = ()
    facts: SettlementFacts | None = None
    thong_next: int | None = None

    def net(self, n_seats: int) -> dict[Payee, int]:
        """Points won (+) or lost (−) per seat, and the pot's change."""
        out: dict[Payee, int] = {s: 0 for s in range(n_seats)}
        out[POT] = 0
        for t in self.transfers:
            out[t.payer] -= t.points
            out[t.payee] += t.points
        return out

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "result": self.result.value,
            "transfers": [t.to_dict() for t in self.transfers],
            "facts": self.facts.to_dict() if self.facts is not None else {},
            "thong_next": self.thong_next,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Settlement:
        facts = data.get("facts") or None
        return cls(
            result=Result(data["result"]),
            transfers=tuple(Transfer.from_dict(t) for t in data["transfers"]),
            facts=SettlementFacts.from_dict(facts) if facts else None,
            thong_next=data.get("thong_next"),
        )


@dataclass(frozen=True, slots=True)
class WinRecord:
    """How the hand was won, as recorded (``card`` is its code, ``source`` the calculator's
    word: own_draw, other_draw, chiu …)."""

    seat: int
    card: str | None
    source: str
    by_chiu: bool
    bach_thu: bool
    first_draw: bool

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "seat": self.seat,
            "card": self.card,
            "source": self.source,
            "by_chiu": self.by_chiu,
            "bach_thu": self.bach_thu,
            "first_draw": self.first_draw,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WinRecord:
        return cls(
            seat=int(data["seat"]),
            card=data["card"],
            source=str(data["source"]),
            by_chiu=bool(data["by_chiu"]),
            bach_thu=bool(data["bach_thu"]),
            first_draw=bool(data["first_draw"]),
        )


@dataclass(frozen=True, slots=True)
class HandResult:
    """An ended hand's result as the server stores it (``Hand.result``): the outcome, the win,
    the winner's declaration and the points settlement, each None where the hand has none.
    The one typed reading of that record (``Hand.outcome_result()``)."""

    outcome: Outcome | None
    win: WinRecord | None = None
    declaration: Declaration | None = None
    settlement: Settlement | None = None

    @property
    def winner(self) -> int | None:
        """The seat that won by ù (not ù láo), else None."""
        if self.outcome is not None and self.outcome.result is Result.U:
            return self.outcome.seat
        return None

    @property
    def transfers(self) -> tuple[Transfer, ...]:
        """The points settlement's transfers (none without a settlement)."""
        return self.settlement.transfers if self.settlement is not None else ()

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "outcome": self.outcome.to_dict() if self.outcome else None,
            "win": self.win.to_dict() if self.win else None,
            "declaration": self.declaration.to_dict() if self.declaration else None,
            "settlement": self.settlement.to_dict() if self.settlement else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> HandResult:
        """The typed result of a stored ``Hand.result`` (None, a live hand: all parts None)."""
        data = data or {}
        outcome, win = data.get("outcome"), data.get("win")
        declaration, settlement = data.get("declaration"), data.get("settlement")
        return cls(
            outcome=Outcome.from_dict(outcome) if outcome else None,
            win=WinRecord.from_dict(win) if win else None,
            declaration=Declaration.from_dict(declaration) if declaration else None,
            settlement=Settlement.from_dict(settlement) if settlement else None,
        )
