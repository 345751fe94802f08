"""The integrity signals: statistics over many hands' facts, thresholds, flags (pure).

Each signal has one statistic and a documented threshold (``THRESHOLDS``; settings
``CHAN_INTEGRITY_THRESHOLDS`` overrides them; docs/audit.md "Integrity signals"):

``feeding`` (directed pair A→B, chip dumping through discards)
    Of A's discards offered to B, the share B could eat, against the rate of every
    discarder→next-seat pair in the window: a binomial z-score. An honest discarder does not see
    B's hand, so its rate is the population's.
``targeted_payment`` (directed pair A→B, chip dumping through the settlement)
    Hands where A paid B more than another loser paid B (báo đền làng, báo xướng sai: one seat
    pays for the table), counted against the population's rate per pair-hand: z-score.
``soft_play`` (directed pair A spares B)
    The share of the real wins A held on B's stock cards that A let go (its automatic ù off, or a
    ``u`` in its legal moves not taken), minus the share it let go on everybody else's: a player
    who plays by hand misses wins on every seat alike, a soft player on its partner's alone.
``shared_address`` (pair)
    The two accounts signed up or logged in from one address (HMAC digests, never addresses).
``timing`` (player)
    The coefficient of variation of the player's think times (std / mean): a bot's is near 0.

``hands_together`` is the context of every pair signal: a pair needs ``min_hands`` hands
together before any of its statistics is judged.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from games.integrity.facts import HandFacts

FEEDING = "feeding"
TARGETED_PAYMENT = "targeted_payment"
SOFT_PLAY = "soft_play"
SHARED_ADDRESS = "shared_address"
TIMING = "timing"
SIGNALS = (FEEDING, TARGETED_PAYMENT, SOFT_PLAY, SHARED_ADDRESS, TIMING)

# The default thresholds (bench/integrity_bench.py measures them; docs/audit.md explains them).
THRESHOLDS: dict[str, float] = {
    "min_hands": 20,  # hands together before a pair is judged
    "feeding_z": 4.0,  # binomial z-score of "B could eat A's discard"
    "feeding_min_offers": 30,
    "targeted_z": 4.0,
    "targeted_min": 3,  # hands with a targeted payment
    "soft_play_min": 3,  # wins declined on the partner's cards
    "soft_play_share": 0.5,  # let go on the partner's cards, minus on the others' cards
    "timing_cv": 0.15,  # a CV of think times under this is a bot's
    "timing_min_moves": 50,
    "shared_address": 1,
}

EVIDENCE_HANDS = 20  # hand ids kept as evidence in a flag


@dataclass
class Flag:
    """One flag: the signal, its players (one, or a pair: the acting one first), the statistic
    and the threshold it crossed, the numbers behind it, and its evidence hands."""

    signal: str
    players: tuple[int, ...]
    statistic: float
    threshold: float
    detail: dict[str, float] = field(default_factory=dict)
    hands: list[int] = field(default_factory=list)


@dataclass
class _Directed:
    hands: set[int] = field(default_factory=set)
    offers: int = 0
    could_eat: int = 0
    ate: int = 0
    feed_hands: list[int] = field(default_factory=list)
    chances: int = 0
    declined: int = 0
    declined_hands: list[int] = field(default_factory=list)
    targeted: int = 0
    targeted_points: int = 0
    targeted_hands: list[int] = field(default_factory=list)
    points: int = 0  # every point A paid B, by any reason
    by_reason: dict[str, int] = field(default_factory=dict)


def z_score(k: int, n: int, p: float) -> float:
    """How far ``k`` successes in ``n`` trials lie above ``n·p``, in standard deviations."""
    if n == 0 or p <= 0.0 or p >= 1.0:
        return 0.0
    return (k - n * p) / math.sqrt(n * p * (1.0 - p))


def coefficient_of_variation(xs: list[float]) -> float:
    """std / mean of ``xs`` (population std); 0 for fewer than two values or a zero mean."""
    if len(xs) < 2:
        return 0.0
    mean = sum(xs) / len(xs)
    if mean <= 0.0:
        return 0.0
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    return math.sqrt(var) / mean


def _excess_payers(facts: HandFacts) -> list[tuple[int, int, int]]:
    """(payer, payee, points) where the payer paid the payee more than another loser did."""
    paid: dict[tuple[int, int], int] = defaultdict(int)
    for p in facts.payments:
        paid[(p.payer, p.payee)] += p.points
    out = []
    n = len(facts.players)
    for payee in range(n):
        others = [s for s in range(n) if s != payee]
        for payer in others:
            mine = paid.get((payer, payee), 0)
            least = min(paid.get((o, payee), 0) for o in others if o != payer) if n > 2 else mine
            if mine > least:
                out.append((payer, payee, mine - least))
    return out


def compute(
    hands: Iterable[HandFacts],
    *,
    addresses: Mapping[int, str | Collection[str]] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> tuple[list[Flag], dict[str, float]]:
    """The flags over ``hands`` (and the players' address digests), and the population
    rates the z-scores were measured against."""
    th = {**THRESHOLDS, **(thresholds or {})}
    pairs: dict[tuple[int, int], _Directed] = defaultdict(_Directed)
    think: dict[int, list[float]] = defaultdict(list)
    think_hands: dict[int, list[int]] = defaultdict(list)
    pair_hands = 0
    held: dict[int, list[int]] = defaultdict(lambda: [0, 0])  # player -> [wins held, let go]
    for f in hands:
        pl = f.players
        for a in range(len(pl)):
            for b in range(len(pl)):
                if a != b:
                    pairs[(pl[a], pl[b])].hands.add(f.hand_id)
                    pair_hands += 1
        for o in f.offers:
            d = pairs[(pl[o.by], pl[o.to])]
            d.offers += 1
            d.could_eat += o.could_eat
            d.ate += o.ate
            if o.could_eat and (not d.feed_hands or d.feed_hands[-1] != f.hand_id):
                d.feed_hands.append(f.hand_id)
        for c in f.chances:
            if c.by is None or c.by == c.seat:
                continue
            d = pairs[(pl[c.seat], pl[c.by])]
            d.chances += 1
            held[pl[c.seat]][0] += 1
            if not c.taken:
                d.declined += 1
                held[pl[c.seat]][1] += 1
                d.declined_hands.append(f.hand_id)
        for p in f.payments:
            d = pairs[(pl[p.payer], pl[p.payee])]
            d.points += p.points
            d.by_reason[p.reason] = d.by_reason.get(p.reason, 0) + p.points
        for payer, payee, points in _excess_payers(f):
            d = pairs[(pl[payer], pl[payee])]
            d.targeted += 1
            d.targeted_points += points
            d.targeted_hands.append(f.hand_id)
        for pos, times in f.think.items():
            think[pl[pos]].extend(times)
            think_hands[pl[pos]].append(f.hand_id)

    offers = sum(d.offers for d in pairs.values())
    p_eat = sum(d.could_eat for d in pairs.values()) / offers if offers else 0.0
    targeted = sum(d.targeted for d in pairs.values())
    p_targeted = max(targeted / pair_hands, 1e-4) if pair_hands else 0.0
    rates = {"p_could_eat": p_eat, "p_targeted": p_targeted, "offers": float(offers)}

    flags: list[Flag] = []
    for (a, b), d in sorted(pairs.items()):
        n_hands = len(d.hands)
        if n_hands < th["min_hands"]:
            continue
        back = pairs.get((b, a))
        base = {
            "hands_together": float(n_hands),
            "points_paid": float(d.points),  # A to B, every reason
            "points_received": float(back.points if back is not None else 0),  # B to A
            **{f"points_{r}": float(v) for r, v in sorted(d.by_reason.items())},
        }
        if d.offers >= th["feeding_min_offers"]:
            z = z_score(d.could_eat, d.offers, p_eat)
            if z >= th["feeding_z"]:
                detail = {**base, "offers": d.offers, "could_eat": d.could_eat, "ate": d.ate}
                flags.append(
                    Flag(FEEDING, (a, b), round(z, 3), th["feeding_z"], detail, _ev(d.feed_hands))
                )
        z = z_score(d.targeted, n_hands, p_targeted)
        if d.targeted >= th["targeted_min"] and z >= th["targeted_z"]:
            detail = {
                **base,
                "targeted_hands": d.targeted,
                "targeted_points": d.targeted_points,
            }
            flags.append(
                Flag(
                    TARGETED_PAYMENT,
                    (a, b),
                    round(z, 3),
                    th["targeted_z"],
                    detail,
                    _ev(d.targeted_hands),
                )
            )
        if d.chances and d.declined >= th["soft_play_min"]:
            share = d.declined / d.chances
            rest_held = held[a][0] - d.chances
            rest_share = (held[a][1] - d.declined) / rest_held if rest_held else 0.0
            if share - rest_share >= th["soft_play_share"]:
                detail = {
                    **base,
                    "wins_held": d.chances,
                    "declined": d.declined,
                    "declined_share": round(share, 3),
                    "declined_share_others": round(rest_share, 3),
                }
                flags.append(
                    Flag(
                        SOFT_PLAY,
                        (a, b),
                        round(share - rest_share, 3),
                        th["soft_play_share"],
                        detail,
                        _ev(d.declined_hands),
                    )
                )
    if addresses:
        by_address: dict[str, set[int]] = defaultdict(set)
        for player, digests in addresses.items():
            for digest in {digests} if isinstance(digests, str) else digests:
                if digest:
                    by_address[digest].add(player)
        shared: dict[tuple[int, int], int] = {}
        for members in by_address.values():
            ordered = sorted(members)
            for i, a in enumerate(ordered):
                for b in ordered[i + 1 :]:
                    shared[(a, b)] = max(shared.get((a, b), 0), len(ordered))
        for (a, b), n_accounts in sorted(shared.items()):
            together = sorted(pairs[(a, b)].hands) if (a, b) in pairs else []
            flags.append(
                Flag(
                    SHARED_ADDRESS,
                    (a, b),
                    float(n_accounts),
                    th["shared_address"],
                    {"accounts_at_address": float(n_accounts)},
                    together[:EVIDENCE_HANDS],
                )
            )
    for player, times in sorted(think.items()):
        if len(times) < th["timing_min_moves"]:
            continue
        cv = coefficient_of_variation(times)
        if cv < th["timing_cv"]:
            mean = sum(times) / len(times)
            detail = {"moves": float(len(times)), "mean_seconds": round(mean, 3)}
            flags.append(
                Flag(
                    TIMING,
                    (player,),
                    round(cv, 4),
                    th["timing_cv"],
                    detail,
                    _ev(think_hands[player]),
                )
            )
    return flags, rates


def _ev(hand_ids: list[int]) -> list[int]:
    return sorted(set(hand_ids))[:EVIDENCE_HANDS]
