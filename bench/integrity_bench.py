"""Integrity signals against a known population of bots, measured in one run.

    python bench/integrity_bench.py [--honest 60] [--pairs 3] [--timers 2] [--sessions 240]
                                    [--hands-per-session 25] [--seed bench]

Plays sessions of self-played 4-seat hands (games.rules, the heuristic bot) among honest
players (who misplay now and then: a win let go 2 % of the time, human think times; one in ten
claims its wins by hand, its automatic ù off, and misses those on the others' draws), colluding
pairs that sit side by side, soft-play pairs (never ù on the partner's draw: automatic ù off
while the partner moves) and chip-dumping
pairs (each throws the partner a card it can eat whenever it has one), and timing bots (a
constant think time). Each hand's log is read back by the job's own extraction
(``games.integrity.facts.hand_facts``: a replay with the rules), the job's statistics run over
the window (``games.integrity.signals.compute``, default thresholds), and it prints

    precision: P recall: R false-flag rate: F

over the flagged subjects (a pair, or a player for timing): precision is the share of flagged
subjects that are cheats, recall the share of cheats flagged, the false-flag rate the share of
honest players named in any flag.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from games.integrity.facts import hand_facts  # noqa: E402
from games.integrity.signals import compute  # noqa: E402
from games.rules.bots import HeuristicBot  # noqa: E402
from games.rules.deck import first_dealer, shuffle  # noqa: E402
from games.rules.engine import apply, can_win, legal_moves, new_hand  # noqa: E402
from games.rules.moves import Discard, Eat, Move, SetPrefs, U  # noqa: E402
from games.rules.state import HandConfig, HandState, Phase  # noqa: E402


class Player(HeuristicBot):
    """An honest player: the heuristic bot, letting a win go now and then, human think times."""

    miss_win = 0.02

    def __init__(self, rng: random.Random, pid: int, *, manual: bool = False) -> None:
        super().__init__(rng)
        self.pid = pid
        self.partner_seat: int | None = None
        self.auto_u = not manual  # a player who claims its wins by hand misses some

    def prefs(self, state: HandState, seat: int) -> SetPrefs | None:
        """A change of its automatic ù before the turn seat moves (None: none)."""
        return None

    def think(self) -> float:
        return self.rng.lognormvariate(1.0, 0.6)

    def choose(self, state: HandState, seat: int) -> Move:
        moves = legal_moves(state, seat)
        if can_win(state, seat) and self.rng.random() < self.miss_win:
            others = [m for m in moves if not isinstance(m, U)]
            if others:
                return self.pick(others, state.seats[seat].hand)
        return super().choose(state, seat)


class TimingBot(Player):
    """Plays honestly, at a constant think time."""

    miss_win = 0.0

    def think(self) -> float:
        return 2.0 + self.rng.uniform(-0.05, 0.05)


class SoftPlayer(Player):
    """Never wins on a card its partner drew: its automatic ù goes off while the partner is
    to move, and it never takes a ``u`` on the partner's card in turn."""

    def prefs(self, state: HandState, seat: int) -> SetPrefs | None:
        want = state.turn != self.partner_seat
        if state.seats[seat].auto_u != want:
            return SetPrefs(seat, auto_u=want)
        return None

    def choose(self, state: HandState, seat: int) -> Move:
        ex = state.exposed
        if ex is not None and ex.by == self.partner_seat and can_win(state, seat):
            others = [m for m in legal_moves(state, seat) if not isinstance(m, U)]
            if others:
                return self.pick(others, state.seats[seat].hand)
        return super().choose(state, seat)


class Dumper(Player):
    """Throws the partner (the next seat) a card it can eat whenever it holds one."""

    def choose(self, state: HandState, seat: int) -> Move:
        moves = legal_moves(state, seat)
        partner = self.partner_seat
        if partner is not None and state.phase is Phase.DISCARD and not can_win(state, seat):
            feeds = []
            for m in moves:
                if isinstance(m, Discard):
                    after = apply(state, m)
                    if after.turn == partner and any(
                        isinstance(x, Eat) for x in legal_moves(after, partner)
                    ):
                        feeds.append(m)
            if feeds:
                return self.rng.choice(feeds)
        return super().choose(state, seat)


def play(config: HandConfig, seed: bytes, bots: list[Player], hand_id: int, rng: random.Random):
    deck = shuffle(seed)
    dealer = first_dealer(seed, config.n_seats)
    config = replace(config, prefs=tuple((b.auto_u, True) for b in bots))
    state = new_hand(config, deck, dealer)
    events = [{"seq": 0, "type": "deal", "payload": {}}]
    times = {0: 0.0}
    clock = 0.0
    while state.phase is not Phase.ENDED:
        for other, bot in enumerate(bots):
            change = bot.prefs(state, other)
            if change is not None:
                state = apply(state, change)
                clock += bot.think()
                events.append(
                    {"seq": len(events), "type": change.type, "payload": change.to_dict()}
                )
                times[len(events) - 1] = clock
        seat = state.turn
        move = bots[seat].choose(state, seat)
        state = apply(state, move)
        clock += bots[seat].think()
        seq = len(events)
        events.append({"seq": seq, "type": move.type, "payload": move.to_dict()})
        times[seq] = clock
    players = [b.pid for b in bots]
    return hand_facts(
        hand_id=hand_id,
        players=players,
        config=config,
        deck=deck,
        dealer=dealer,
        events=events,
        times=times,
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--honest", type=int, default=60)
    p.add_argument("--pairs", type=int, default=3, help="soft-play pairs, and as many dumpers")
    p.add_argument("--timers", type=int, default=2)
    p.add_argument("--sessions", type=int, default=240)
    p.add_argument("--hands-per-session", type=int, default=25)
    p.add_argument("--manual", type=float, default=0.1, help="honest players without auto ù")
    p.add_argument("--seed", default="bench")
    args = p.parse_args(argv)

    rng = random.Random(args.seed)
    pid = iter(range(1, 10**6))
    honest = [
        Player(random.Random(rng.random()), next(pid), manual=rng.random() < args.manual)
        for _ in range(args.honest)
    ]
    timers = [TimingBot(random.Random(rng.random()), next(pid)) for _ in range(args.timers)]
    pairs: list[tuple[Player, Player]] = []
    for cls in (SoftPlayer, Dumper):
        for _ in range(args.pairs):
            a = cls(random.Random(rng.random()), next(pid))
            b = cls(random.Random(rng.random()), next(pid))
            pairs.append((a, b))
    singles = honest + timers
    cheat_pairs = {frozenset((a.pid, b.pid)) for a, b in pairs}
    cheat_players = {t.pid for t in timers}
    honest_ids = {h.pid for h in honest}

    config = HandConfig(n_seats=4)
    facts = []
    started = time.perf_counter()
    hand_id = 0
    for s in range(args.sessions):
        if pairs and s % 4 == 0:  # a pair sits together, side by side, with two others
            a, b = pairs[(s // 4) % len(pairs)]
            others = rng.sample(singles, 2)
            start = rng.randrange(4)
            table: list[Player | None] = [None] * 4
            table[start], table[(start + 1) % 4] = a, b
            rest = iter(others)
            table = [t if t is not None else next(rest) for t in table]
            a.partner_seat, b.partner_seat = (start + 1) % 4, start
        else:
            table = rng.sample(singles, 4)
        for i in range(args.hands_per_session):
            hand_id += 1
            seed = f"{args.seed}:{s}:{i}".encode()
            facts.append(play(config, seed, table, hand_id, rng))  # type: ignore[arg-type]
    played = time.perf_counter() - started

    flags, rates = compute(facts)
    subjects: dict[frozenset[int], list[str]] = {}
    for f in flags:
        subjects.setdefault(frozenset(f.players), []).append(f.signal)
    true = {s for s in subjects if s in cheat_pairs or (len(s) == 1 and s <= cheat_players)}
    precision = len(true) / len(subjects) if subjects else 1.0
    truths = cheat_pairs | {frozenset((t,)) for t in cheat_players}
    recall = len(true & truths) / len(truths) if truths else 1.0
    falsely = {p for s in subjects if s not in true for p in s if p in honest_ids}
    false_rate = len(falsely) / len(honest_ids) if honest_ids else 0.0

    print(f"hands: {hand_id} in {played:.1f} s; flags: {len(flags)}; rates: {rates}")
    for s, signals in sorted(subjects.items(), key=lambda kv: sorted(kv[0])):
        mark = "cheat" if s in true else "HONEST"
        print(f"  {sorted(s)} {mark}: {', '.join(sorted(set(signals)))}")
    print(f"precision: {precision:.3f} recall: {recall:.3f} false-flag rate: {false_rate:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
