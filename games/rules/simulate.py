"""Self-play: ``python -m games.rules.simulate --hands N --seats 4 --seed S --bot heuristic``.

Plays N full hands (each from ``shuffle(f"{seed}:{i}")``), declaring the true cước for every win,
and prints hands per second, how hands ended, mean moves per hand, and how often each cước and
each fault occurred.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from games.rules.bots import Bot, make_bot
from games.rules.deck import first_dealer, shuffle
from games.rules.engine import apply, new_hand
from games.rules.moves import Move
from games.rules.ruleset import build_ruleset
from games.rules.state import HandConfig, HandState, Mode, Phase


@dataclass
class Played:
    final: HandState
    moves: list[Move] = field(default_factory=list)


def play_hand(
    config: HandConfig,
    seed: bytes,
    bots: Mapping[int, Bot],
    dealer: int | None = None,
) -> Played:
    """Play one hand to its end with ``bots[seat].choose(state, seat)``."""
    deck = shuffle(seed)
    state = new_hand(config, deck, first_dealer(seed, config.n_seats) if dealer is None else dealer)
    played = Played(state)
    while state.phase is not Phase.ENDED:
        seat = state.turn
        move = bots[seat].choose(state, seat)
        state = apply(state, move)
        played.moves.append(move)
    played.final = state
    return played


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--hands", type=int, default=1000)
    p.add_argument("--seats", type=int, default=4, choices=(2, 3, 4))
    p.add_argument("--seed", default="1")
    p.add_argument("--bot", default="heuristic", choices=("heuristic", "random"))
    p.add_argument("--mode", default="basic", choices=("basic", "advanced"))
    p.add_argument("--ruleset", default="chan_van_van")
    args = p.parse_args(argv)

    ruleset = build_ruleset({"preset": args.ruleset})
    config = HandConfig(n_seats=args.seats, mode=Mode(args.mode), ruleset=ruleset)
    rng = random.Random(args.seed)
    bots = {s: make_bot(args.bot, rng) for s in range(args.seats)}
    endings: Counter[str] = Counter()
    cuoc: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    n_moves = 0
    started = time.perf_counter()
    for i in range(args.hands):
        played = play_hand(config, f"{args.seed}:{i}".encode(), bots)
        final = played.final
        n_moves += len(played.moves)
        endings[final.outcome.result.value if final.outcome else "none"] += 1
        decl = final.declaration
        if decl is not None:
            for slug, n in decl.true_cuoc:
                cuoc[slug] += n
            verdicts[decl.verdict.value] += 1
        for st in final.seats:
            for f in st.faults:
                faults[f.slug] += 1
    elapsed = time.perf_counter() - started
    print(f"hands: {args.hands}  seats: {args.seats}  bot: {args.bot}  mode: {args.mode}")
    print(f"ruleset: {args.ruleset}")
    print(f"hands/s: {args.hands / elapsed:.1f}  ({elapsed:.2f} s)")
    print(f"mean moves per hand: {n_moves / max(args.hands, 1):.1f}")
    print("endings: " + ", ".join(f"{k} {v}" for k, v in endings.most_common()))
    if verdicts:
        print("declarations: " + ", ".join(f"{k} {v}" for k, v in verdicts.most_common()))
    print("cước: " + (", ".join(f"{k} {v}" for k, v in cuoc.most_common()) or "none"))
    print("faults: " + (", ".join(f"{k} {v}" for k, v in faults.most_common()) or "none"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
