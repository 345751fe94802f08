"""One hand's record read into the facts the integrity signals need (pure: no database).

:func:`hand_facts` replays the log with ``games.rules`` and records, per seat position: every
discard offered to the next seat and whether that seat could eat it (an ``eat`` among its legal
moves), every real win it held on another seat's stock card and whether it took it (its
automatic ù on, or a ``u`` among its legal moves chosen),
the think time of each of its own moves, and the settlement's transfers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from games.rules.engine import can_win, legal_moves
from games.rules.moves import Eat, U
from games.rules.replay import replay
from games.rules.results import Settlement
from games.rules.shape import wins_with
from games.rules.state import SRC_DISCARD, SRC_STOCK, HandConfig, HandState, Phase


@dataclass(frozen=True, slots=True)
class Offer:
    """A discard of ``by`` offered to ``to``: ``could_eat`` it, and ``ate`` it."""

    by: int
    to: int
    could_eat: bool
    ate: bool


@dataclass(frozen=True, slots=True)
class WinChance:
    """A real win ``seat`` held on a stock card drawn by ``by`` (another seat), and whether it
    took it (in turn with ``u``, or by its automatic ù)."""

    seat: int
    by: int | None
    taken: bool


@dataclass(frozen=True, slots=True)
class Payment:
    """Points paid by position ``payer`` to position ``payee`` for ``reason``."""

    payer: int
    payee: int
    points: int
    reason: str


@dataclass
class HandFacts:
    """What the signals read of one hand; positions index ``players``."""

    hand_id: int
    players: tuple[int, ...]
    offers: list[Offer] = field(default_factory=list)
    chances: list[WinChance] = field(default_factory=list)
    payments: list[Payment] = field(default_factory=list)
    think: dict[int, list[float]] = field(default_factory=dict)  # position -> seconds


def _in_turn_chance(state: HandState, seat: int) -> bool:
    """Whether ``seat`` holds a real win on another seat's stock card it may ``u`` on now."""
    if state.phase is Phase.ENDED or seat != state.turn or not can_win(state, seat):
        return False
    ex = state.exposed
    if ex is None or ex.source != SRC_STOCK or ex.by == seat:
        return False
    return any(isinstance(m, U) for m in legal_moves(state, seat))


def _draw_chances(state: HandState) -> list[tuple[int, bool]]:
    """After a draw: the other seats that win with the drawn card, and whether their automatic
    ù was on (a seat with it off lets the win go unless it takes it in turn)."""
    ex = state.exposed
    if state.phase is not Phase.AFTER_DRAW or ex is None or ex.source != SRC_STOCK:
        return []
    out = []
    for s, st in enumerate(state.seats):
        if s != ex.by and not st.bao and wins_with(st.hand, st.mat_chan, ex.card):
            out.append((s, st.auto_u))
    return out


def _offer_of(state: HandState) -> Offer | None:
    ex = state.exposed
    if state.phase is not Phase.OFFER or ex is None or ex.source != SRC_DISCARD:
        return None
    if ex.by == state.turn:
        return None
    could = any(isinstance(m, Eat) for m in legal_moves(state, state.turn))
    return Offer(ex.by, state.turn, could_eat=could, ate=False)


def payments_of(settlement: Settlement | None) -> list[Payment]:
    """The settlement's seat-to-seat transfers (the pot's flows left out)."""
    if settlement is None:
        return []
    return [
        Payment(t.payer, t.payee, t.points, t.reason)
        for t in settlement.transfers
        if isinstance(t.payee, int)
    ]


def hand_facts(
    *,
    hand_id: int,
    players: Sequence[int],
    config: HandConfig,
    deck: list[int],
    dealer: int,
    events: Iterable[Mapping[str, Any]],
    times: Mapping[int, datetime | float] | None = None,
) -> HandFacts:
    """The facts of one hand from its log (``events`` in seq order, the deal first; ``times``
    maps a seq to when it was recorded: a datetime or seconds). System and bot moves have no
    think time."""
    facts = HandFacts(hand_id, tuple(players))
    before: HandState | None = None
    last_time: float | None = None
    final: HandState | None = None
    # one chance per (seat, stock card): who drew it and whether the seat took the win
    chances: dict[tuple[int, int], WinChance] = {}
    for event, state in replay(config, deck, dealer, events):
        seq = int(event.get("seq", 0))
        at = _seconds(times.get(seq)) if times is not None else None
        payload = event.get("payload") or {}
        if before is not None and "seat" in payload and event["type"] != "deal":
            seat = int(payload["seat"])
            kind = payload.get("type")
            offer = _offer_of(before)
            if offer is not None and offer.to == seat:
                facts.offers.append(Offer(offer.by, offer.to, offer.could_eat, kind == "eat"))
            if _in_turn_chance(before, seat):
                assert before.exposed is not None
                key = (seat, before.stock_drawn)
                taken = kind == "u" or chances.get(key, WinChance(seat, None, False)).taken
                chances[key] = WinChance(seat, before.exposed.by, taken)
            if kind == "draw":
                for s, auto in _draw_chances(state):
                    chances[(s, state.stock_drawn)] = WinChance(s, seat, auto)
            own = not payload.get("system") and not event.get("system") and not event.get("bot")
            if own and at is not None and last_time is not None:
                facts.think.setdefault(seat, []).append(max(0.0, at - last_time))
        if at is not None:
            last_time = at
        before = state
        final = state
    facts.chances = list(chances.values())
    if final is not None:
        facts.payments = payments_of(final.settlement)
    return facts


def _seconds(value: datetime | float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.timestamp()
    return float(value)
