"""Which rating system predicts the next hand's winner best on our own hands?

``python bench/rating_eval.py --players 24 --hands 3000 --seed 1``

A population of bot players of different strength plays self-play hands of 2–4 seats
(``games.rules.simulate.play_hand``): a player of strength ``s`` plays the heuristic bot's move
with probability ``s`` and a uniformly random legal move otherwise (``s`` from 0, the random bot,
to 1, the heuristic bot). Before each hand every system predicts each seat's chance to win; after
it, each is updated with the result (the winner first, the others tied; a draw: all tied). We
report, over the hands that had a winner after a warm-up, the log loss of the predicted winner's
probability, the accuracy of the favourite and Spearman's ρ between final rating and true
strength.

* openskill: Plackett–Luce (Weng–Lin), ``predict_win`` for the prediction.
* TrueSkill (``trueskill``): ``rate`` with ranks; prediction ∝ Π_j P(i beats j).
* Glicko-2 (Glickman's algorithm, written out below: the ``glicko2`` package ships a top-level
  ``tests`` package that shadows ours): one rating period per hand, the winner beating each other seat (a
  draw: 0.5 each); prediction ∝ Π_j E(i beats j).
* uniform: 1/n (the floor any system must beat).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import trueskill  # noqa: E402
from openskill.models import PlackettLuce  # noqa: E402

from games.rules.bots import HeuristicBot, RandomBot  # noqa: E402
from games.rules.ruleset import build_ruleset  # noqa: E402
from games.rules.simulate import play_hand  # noqa: E402
from games.rules.state import HandConfig, Mode  # noqa: E402


class MixedBot:
    """The heuristic bot's move with probability ``strength``, else a random legal move."""

    def __init__(self, strength: float, rng: random.Random) -> None:
        self.strength, self.rng = strength, rng
        self.good, self.bad = HeuristicBot(rng), RandomBot(rng)

    def choose(self, state, seat):  # type: ignore[no-untyped-def]
        bot = self.good if self.rng.random() < self.strength else self.bad
        return bot.choose(state, seat)


def _norm(ps: list[float]) -> list[float]:
    total = sum(ps)
    return [p / total for p in ps] if total > 0 else [1 / len(ps)] * len(ps)


def _pairwise(win: list[list[float]]) -> list[float]:
    return _norm([math.prod(win[i][j] for j in range(len(win)) if j != i) for i in range(len(win))])


class OpenSkill:
    name = "openskill (Plackett–Luce)"

    def __init__(self, n: int) -> None:
        self.model = PlackettLuce()
        self.r = [self.model.rating() for _ in range(n)]

    def predict(self, ids: list[int]) -> list[float]:
        return list(self.model.predict_win([[self.r[i]] for i in ids]))

    def update(self, ids: list[int], ranks: list[int]) -> None:
        out = self.model.rate([[self.r[i]] for i in ids], ranks=ranks)
        for i, team in zip(ids, out, strict=True):
            self.r[i] = team[0]

    def score(self, i: int) -> float:
        return self.r[i].ordinal()


class TrueSkill:
    name = "TrueSkill"

    def __init__(self, n: int) -> None:
        self.env = trueskill.TrueSkill(draw_probability=0.05)
        self.r = [self.env.create_rating() for _ in range(n)]

    def predict(self, ids: list[int]) -> list[float]:
        b2 = self.env.beta**2
        cdf = self.env.cdf
        win = [
            [
                cdf(
                    (self.r[a].mu - self.r[b].mu)
                    / math.sqrt(2 * b2 + self.r[a].sigma ** 2 + self.r[b].sigma ** 2)
                )
                for b in ids
            ]
            for a in ids
        ]
        return _pairwise(win)

    def update(self, ids: list[int], ranks: list[int]) -> None:
        out = self.env.rate([(self.r[i],) for i in ids], ranks=ranks)
        for i, team in zip(ids, out, strict=True):
            self.r[i] = team[0]

    def score(self, i: int) -> float:
        return self.r[i].mu - 3 * self.r[i].sigma


G2_SCALE, G2_TAU = 173.7178, 0.5


class G2Player:
    """One Glicko-2 rating (Glickman, "Example of the Glicko-2 system", 2013)."""

    def __init__(self, rating: float = 1500.0, rd: float = 350.0, vol: float = 0.06) -> None:
        self.rating, self.rd, self.vol = rating, rd, vol

    def update_player(self, ratings: list[float], rds: list[float], scores: list[float]) -> None:
        mu, phi = (self.rating - 1500) / G2_SCALE, self.rd / G2_SCALE
        mus = [(r - 1500) / G2_SCALE for r in ratings]
        phis = [d / G2_SCALE for d in rds]
        gs = [1 / math.sqrt(1 + 3 * p**2 / math.pi**2) for p in phis]
        es = [1 / (1 + math.exp(-g * (mu - m))) for g, m in zip(gs, mus, strict=True)]
        v = 1 / sum(g**2 * e * (1 - e) for g, e in zip(gs, es, strict=True))
        delta = v * sum(g * (s - e) for g, s, e in zip(gs, scores, es, strict=True))
        a = math.log(self.vol**2)

        def f(x: float) -> float:
            ex = math.exp(x)
            return (
                ex * (delta**2 - phi**2 - v - ex) / (2 * (phi**2 + v + ex) ** 2)
                - (x - a) / G2_TAU**2
            )

        lo = a
        if delta**2 > phi**2 + v:
            hi = math.log(delta**2 - phi**2 - v)
        else:
            k = 1
            while f(a - k * G2_TAU) < 0:
                k += 1
            hi = a - k * G2_TAU
        lo, hi = a, hi
        f_lo, f_hi = f(lo), f(hi)
        while abs(hi - lo) > 1e-6:
            c = lo + (lo - hi) * f_lo / (f_hi - f_lo)
            f_c = f(c)
            if f_c * f_hi <= 0:
                lo, f_lo = hi, f_hi
            else:
                f_lo /= 2
            hi, f_hi = c, f_c
        vol = math.exp(lo / 2)
        phi_star = math.sqrt(phi**2 + vol**2)
        phi_new = 1 / math.sqrt(1 / phi_star**2 + 1 / v)
        mu_new = mu + phi_new**2 * sum(g * (s - e) for g, s, e in zip(gs, scores, es, strict=True))
        self.rating, self.rd, self.vol = 1500 + G2_SCALE * mu_new, G2_SCALE * phi_new, vol


class Glicko2:
    name = "Glicko-2"

    def __init__(self, n: int) -> None:
        self.r = [G2Player() for _ in range(n)]

    def predict(self, ids: list[int]) -> list[float]:
        return _pairwise([[_expect(self.r[a], self.r[b]) for b in ids] for a in ids])

    def update(self, ids: list[int], ranks: list[int]) -> None:
        snap = [(self.r[i].rating, self.r[i].rd) for i in ids]
        for k, i in enumerate(ids):
            others = [j for j in range(len(ids)) if j != k]
            outcome = [
                1.0 if ranks[k] < ranks[j] else 0.0 if ranks[k] > ranks[j] else 0.5 for j in others
            ]
            self.r[i].update_player(
                [snap[j][0] for j in others], [snap[j][1] for j in others], outcome
            )

    def score(self, i: int) -> float:
        return self.r[i].rating - 2 * self.r[i].rd


def _expect(a: G2Player, b: G2Player) -> float:
    q = math.log(10) / 400
    rd = math.sqrt(a.rd**2 + b.rd**2)
    g = 1 / math.sqrt(1 + 3 * q**2 * rd**2 / math.pi**2)
    return 1 / (1 + 10 ** (-g * (a.rating - b.rating) / 400))


class Uniform:
    name = "uniform (1/n)"

    def __init__(self, n: int) -> None:
        self.n = n

    def predict(self, ids: list[int]) -> list[float]:
        return [1 / len(ids)] * len(ids)

    def update(self, ids: list[int], ranks: list[int]) -> None:
        pass

    def score(self, i: int) -> float:
        return 0.0


def _spearman(xs: list[float], ys: list[float]) -> float:
    def ranks(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for pos, i in enumerate(order):
            r[i] = pos
        return r

    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    sy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return cov / (sx * sy) if sx and sy else 0.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--players", type=int, default=24)
    p.add_argument("--hands", type=int, default=3000)
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--seed", default="1")
    p.add_argument("--ruleset", default="chan_van_van")
    args = p.parse_args(argv)

    rng = random.Random(args.seed)
    strength = [i / (args.players - 1) for i in range(args.players)]
    ruleset = build_ruleset({"preset": args.ruleset})
    systems = [OpenSkill(args.players), TrueSkill(args.players), Glicko2(args.players)]
    systems.append(Uniform(args.players))
    loss = {s.name: 0.0 for s in systems}
    hits = {s.name: 0 for s in systems}
    spent = {s.name: 0.0 for s in systems}
    scored = draws = 0
    started = time.perf_counter()
    for h in range(args.hands):
        n = rng.choice((2, 3, 4))
        ids = rng.sample(range(args.players), n)
        bots = {seat: MixedBot(strength[pid], rng) for seat, pid in enumerate(ids)}
        config = HandConfig(n_seats=n, mode=Mode.BASIC, ruleset=ruleset)
        final = play_hand(config, f"{args.seed}:{h}".encode(), bots).final
        winner = final.win.seat if final.win is not None else None
        ranks = [0 if winner is None or s == winner else 1 for s in range(n)]
        if winner is None:
            draws += 1
        for s in systems:
            t0 = time.perf_counter()
            probs = s.predict(ids)
            if winner is not None and h >= args.warmup:
                loss[s.name] -= math.log(max(probs[winner], 1e-12))
                best = max(probs)
                hits[s.name] += 1 if probs[winner] == best and probs.count(best) == 1 else 0
            s.update(ids, ranks)
            spent[s.name] += time.perf_counter() - t0
        if winner is not None and h >= args.warmup:
            scored += 1
    elapsed = time.perf_counter() - started
    print(
        f"players {args.players}  hands {args.hands} (draws {draws}, scored {scored} after "
        f"{args.warmup} warm-up)  seed {args.seed}  {elapsed:.1f} s"
    )
    print(f"{'system':28} {'log loss':>9} {'accuracy':>9} {'rho':>6} {'µs/hand':>8}")
    for s in systems:
        rho = _spearman([s.score(i) for i in range(args.players)], strength)
        rho_text = "-" if isinstance(s, Uniform) else f"{rho:6.3f}"
        print(
            f"{s.name:28} {loss[s.name] / max(scored, 1):9.4f} "
            f"{hits[s.name] / max(scored, 1):9.3f} {rho_text:>6} "
            f"{1e6 * spent[s.name] / args.hands:8.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
