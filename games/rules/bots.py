"""Bots that play a seat from its legal moves: a uniform random one and a simple heuristic one.

Both see only what the seat may see (its own hand and the legal moves); they are used by the
simulator, the self-play tests and the benchmarks.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from games.rules.cards import Counts, rank_count
from games.rules.engine import can_win, legal_moves
from games.rules.moves import Chiu, Declare, Discard, Draw, Eat, Move, Pass, TraCua, U
from games.rules.state import HandState


class Bot(Protocol):
    """What plays a seat: its move, from the state, for the seat whose turn it is."""

    def choose(self, state: HandState, seat: int) -> Move: ...


class RandomBot:
    """Picks uniformly among the legal moves."""

    name = "random"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, state: HandState, seat: int) -> Move:
        return self.rng.choice(legal_moves(state, seat))


def _keep_value(hand: Counts, kind: int) -> int:
    """How much a card is worth keeping: pairs score high, lone cards (què) low."""
    n = hand[kind]
    if n >= 2:
        return 10 + n
    return 3 if rank_count(hand, kind) else 0


class HeuristicBot:
    """Wins when it can, chíus, eats chắn (and cạ with a lone card), throws its worst card."""

    name = "heuristic"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, state: HandState, seat: int) -> Move:
        moves = legal_moves(state, seat)
        if not can_win(state, seat):  # in advanced mode ``u`` is always offered
            moves = [m for m in moves if not isinstance(m, U)] or moves
        return self.pick(moves, state.seats[seat].hand)

    def pick(self, moves: Sequence[Move], hand: Counts) -> Move:
        best_eat: Eat | None = None
        throws: list[Discard | TraCua] = []
        fallback: Move | None = None
        for m in moves:
            if isinstance(m, U | Declare | Chiu):
                return m
            if isinstance(m, Eat):
                if m.card == m.with_ and hand[m.with_] == 1:
                    best_eat = m  # a chắn from a lone card
                elif (
                    best_eat is None
                    and m.card != m.with_
                    and hand[m.with_] == 1
                    and not rank_count(hand, m.with_)
                ):
                    best_eat = m  # a cạ from the only card of its rank
            elif isinstance(m, Discard | TraCua):
                throws.append(m)
            elif isinstance(m, Draw | Pass):
                fallback = m
        if best_eat is not None:
            return best_eat
        if throws:
            low = min(_keep_value(hand, m.card) for m in throws)
            worst = [m for m in throws if _keep_value(hand, m.card) == low]
            return self.rng.choice(worst)
        if fallback is not None:
            return fallback
        return moves[0]


BOTS: dict[str, type[RandomBot] | type[HeuristicBot]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
}


def make_bot(name: str, rng: random.Random) -> RandomBot | HeuristicBot:
    return BOTS[name](rng)
