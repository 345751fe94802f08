"""Rules-core speed, measured in one run on this machine.

    python bench/rules_bench.py [--hands 2000] [--seed bench]

Prints win checks per second, apply() per second, full self-played heuristic 4-seat hands per
second (basic mode and advanced mode with fault checking on), cước detection + scoring per
second, the basic mode's analysis of the seat that just moved (what its view shows) per second,
and the time to replay a complete hand's log, each with its ratio to a baseline measured
in the same run (a bare Python loop doing one tuple index per iteration), so figures from
different machines compare.
"""

from __future__ import annotations

import argparse
import functools
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.rules.bots import HeuristicBot  # noqa: E402
from games.rules.deck import first_dealer, shuffle  # noqa: E402
from games.rules.engine import apply, new_hand  # noqa: E402
from games.rules.shape import wins_with  # noqa: E402
from games.rules.simulate import play_hand  # noqa: E402
from games.rules.state import HandConfig, Mode  # noqa: E402


def rate(fn, n: int) -> float:
    """Calls per second of ``fn`` over ``n`` calls (best of three rounds)."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, time.perf_counter() - t)
    return n / best


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--hands", type=int, default=2000)
    p.add_argument("--seed", default="bench")
    args = p.parse_args()

    data = tuple(range(25))
    baseline = rate(lambda: data[7], 1_000_000)
    print(f"baseline (tuple index loop): {baseline:,.0f}/s")

    # hands and winning cards from real play
    rng = random.Random(args.seed)
    bots = {s: HeuristicBot(rng) for s in range(4)}
    config = HandConfig(n_seats=4)
    played = [play_hand(config, f"{args.seed}:{i}".encode(), bots) for i in range(200)]
    hands = [(st.hand, st.mat_chan) for p_ in played for st in p_.final.seats]
    cards = list(range(25))

    def win_check(i=[0]) -> bool:  # noqa: B006
        i[0] += 1
        h, m = hands[i[0] % len(hands)]
        return wins_with(h, m, cards[i[0] % 25])

    wc = rate(win_check, 200_000)
    print(f"win checks/s: {wc:,.0f}  (baseline/win check = {baseline / wc:.1f}x)")

    logs = [(p_, p_.moves) for p_ in played]
    total_moves = sum(len(m) for _, m in logs)
    # replay each hand's log from its deal
    starts = []
    for i, (_, moves) in enumerate(logs):
        seed = f"{args.seed}:{i}".encode()
        starts.append((new_hand(config, shuffle(seed), first_dealer(seed, 4)), moves))
    t = time.perf_counter()
    for start, moves in starts:
        functools.reduce(apply, moves, start)
    elapsed = time.perf_counter() - t
    applies = total_moves / elapsed
    replay_ms = elapsed / len(starts) * 1000
    print(f"apply/s: {applies:,.0f}  (mean {total_moves / len(starts):.1f} moves per hand)")
    print(f"replay of a full hand's log: {replay_ms:.3f} ms  (target < 2 ms)")

    # The basic mode's analysis of the seat that just moved (its view's trash, blocked cards and
    # waits: the mover's view at every move computes it anew), over the replays' seat states.
    from games.rules.analysis import _analysed

    movers = []
    for start, moves in starts[:60]:
        state = start
        for move in moves:
            state = apply(state, move)
            if move.seat is not None:
                movers.append(state.seats[move.seat])

    def analysed(i=[0]) -> object:  # noqa: B006
        i[0] += 1
        return _analysed(movers[i[0] % len(movers)])

    an = rate(analysed, 20_000)
    print(
        f"mover's analysis/s (basic): {an:,.0f}  ({1e6 / an:.0f} us; baseline ratio {baseline / an:.0f}x)"
    )

    from games.rules import faults as fault_rules

    checker = fault_rules.faults_of
    for label, mode, check in (
        ("basic, no fault checks", Mode.BASIC, False),
        ("basic", Mode.BASIC, True),
        ("advanced", Mode.ADVANCED, True),
    ):
        fault_rules.faults_of = checker if check else (lambda state, move: [])
        cfg = HandConfig(n_seats=4, mode=mode)
        t = time.perf_counter()
        for i in range(args.hands):
            play_hand(cfg, f"{args.seed}:h{i}".encode(), bots)
        hps = args.hands / (time.perf_counter() - t)
        if not check:
            unchecked = hps
        ratio = f", {unchecked / hps:.2f}x slower than unchecked" if check else ""
        print(f"heuristic 4-seat hands/s ({label}): {hps:,.0f}  (target >= 200{ratio})")
    fault_rules.faults_of = checker

    try:
        from games.rules.cuoc import detect_cuoc, facts_from_state
        from games.rules.ruleset import build_ruleset
        from games.rules.scoring import score
    except ImportError:
        print("cước detection: not available")
        return 0
    ruleset = build_ruleset(None)
    wins = [p_.final for p_ in played if p_.final.win is not None]
    facts = []
    for final in wins:
        try:
            facts.append(facts_from_state(final))
        except Exception:  # noqa: BLE001
            continue
    if facts:

        def detect_and_score(i=[0]) -> object:  # noqa: B006
            i[0] += 1
            return score(ruleset, detect_cuoc(ruleset, facts[i[0] % len(facts)]))

        ds = rate(detect_and_score, 20_000)
        print(f"cước detection + scoring/s: {ds:,.0f}  (baseline ratio {baseline / ds:.1f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
