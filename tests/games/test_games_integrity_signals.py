"""The integrity signals' statistics (games.integrity.signals) and the log reading behind them
(games.integrity.facts): pure, no database."""

from __future__ import annotations

import random

from games.integrity.facts import HandFacts, Offer, Payment, WinChance, hand_facts
from games.integrity.signals import (
    FEEDING,
    SHARED_ADDRESS,
    SOFT_PLAY,
    TARGETED_PAYMENT,
    TIMING,
    coefficient_of_variation,
    compute,
    z_score,
)
from games.rules.bots import HeuristicBot
from games.rules.deck import shuffle
from games.rules.simulate import play_hand
from games.rules.state import HandConfig

A, B, C, D = 1, 2, 3, 4


def table(n: int, make, players=(A, B, C, D)) -> list[HandFacts]:
    return [make(HandFacts(i + 1, tuple(players)), i) for i in range(n)]


def signals_of(flags, players=None) -> set[str]:
    return {f.signal for f in flags if players is None or set(f.players) == set(players)}


# --------------------------------------------------------------------------- statistics


def test_z_score_and_cv_are_the_textbook_ones() -> None:
    assert z_score(50, 100, 0.5) == 0.0
    assert round(z_score(70, 100, 0.5), 6) == 4.0
    assert coefficient_of_variation([2.0, 2.0, 2.0]) == 0.0
    assert round(coefficient_of_variation([1.0, 3.0]), 6) == 0.5


# --------------------------------------------------------------------------- feeding


def _offers(f: HandFacts, i: int, *, feeder_rate: float) -> HandFacts:
    rng = random.Random(i)
    for _ in range(10):  # every seat offers the next one discards
        for by in range(4):
            rate = feeder_rate if by == 0 else 0.5
            f.offers.append(Offer(by, (by + 1) % 4, rng.random() < rate, False))
    return f


def test_feeding_flags_the_discarder_whose_partner_can_always_eat() -> None:
    hands = table(30, lambda f, i: _offers(f, i, feeder_rate=1.0))
    flags, rates = compute(hands)
    assert signals_of(flags) == {FEEDING}
    (flag,) = flags
    assert flag.players == (A, B) and flag.statistic >= flag.threshold
    assert flag.detail["offers"] == 300 and flag.hands
    assert 0.5 < rates["p_could_eat"] < 0.7


def test_feeding_spares_discarders_at_the_population_rate() -> None:
    flags, _ = compute(table(30, lambda f, i: _offers(f, i, feeder_rate=0.5)))
    assert FEEDING not in signals_of(flags)


def test_no_pair_is_judged_below_min_hands_together() -> None:
    flags, _ = compute(table(19, lambda f, i: _offers(f, i, feeder_rate=1.0)))
    assert flags == []


# --------------------------------------------------------------------------- targeted payments


def _wins(f: HandFacts, i: int, *, bao_every: int) -> HandFacts:
    winner = i % 4
    if bao_every and i % bao_every == 0 and winner == 1:  # A (position 0) báo pays B for all
        f.payments.append(Payment(0, 1, 9, "bao_den_lang"))
    else:
        f.payments += [Payment(o, winner, 3, "win") for o in range(4) if o != winner]
    return f


def test_targeted_payment_flags_a_seat_paying_one_partner_for_the_table() -> None:
    flags, _ = compute(table(200, lambda f, i: _wins(f, i, bao_every=5)))
    flagged = [f for f in flags if f.signal == TARGETED_PAYMENT]
    assert [f.players for f in flagged] == [(A, B)]
    assert flagged[0].detail["points_bao_den_lang"] > 0
    assert flagged[0].detail["targeted_hands"] >= 3


def test_even_wins_make_no_targeted_payment() -> None:
    flags, _ = compute(table(200, lambda f, i: _wins(f, i, bao_every=0)))
    assert TARGETED_PAYMENT not in signals_of(flags)


# --------------------------------------------------------------------------- soft play


def _chances(f: HandFacts, i: int, *, spares_partner: bool, manual: bool) -> HandFacts:
    # A (position 0) holds a win on each other seat's draw now and then
    by = 1 + i % 3
    taken = not manual and not (spares_partner and by == 1)
    if manual:
        taken = i % 2 == 0
    f.chances.append(WinChance(0, by, taken))
    return f


def test_soft_play_flags_wins_let_go_on_the_partners_draws_alone() -> None:
    hands = table(60, lambda f, i: _chances(f, i, spares_partner=True, manual=False))
    flags, _ = compute(hands)
    soft = [f for f in flags if f.signal == SOFT_PLAY]
    assert [f.players for f in soft] == [(A, B)]
    assert soft[0].detail["declined_share"] == 1.0
    assert soft[0].detail["declined_share_others"] == 0.0


def test_a_player_missing_wins_on_every_seat_alike_is_not_soft() -> None:
    hands = table(60, lambda f, i: _chances(f, i, spares_partner=False, manual=True))
    flags, _ = compute(hands)
    assert SOFT_PLAY not in signals_of(flags)


# --------------------------------------------------------------------------- address, timing


def test_shared_address_flags_each_pair_of_one_digest() -> None:
    flags, _ = compute([], addresses={A: "x" * 64, B: "x" * 64, C: "y" * 64, D: ""})
    assert [(f.signal, f.players) for f in flags] == [(SHARED_ADDRESS, (A, B))]


def _think(f: HandFacts, i: int, *, constant: bool) -> HandFacts:
    rng = random.Random(i)
    for pos in range(4):
        f.think[pos] = [
            2.0 if constant and pos == 0 else rng.lognormvariate(1.0, 0.6) for _ in range(10)
        ]
    return f


def test_timing_flags_the_player_with_a_constant_think_time() -> None:
    flags, _ = compute(table(10, lambda f, i: _think(f, i, constant=True)))
    assert [(f.signal, f.players) for f in flags] == [(TIMING, (A,))]
    assert flags[0].statistic == 0.0


def test_human_think_times_are_not_a_bot() -> None:
    flags, _ = compute(table(10, lambda f, i: _think(f, i, constant=False)))
    assert flags == []


# --------------------------------------------------------------------------- reading the log


def _log(played) -> list[dict]:
    events = [{"seq": 0, "type": "deal", "payload": {}}]
    events += [
        {"seq": i + 1, "type": m.type, "payload": m.to_dict()} for i, m in enumerate(played.moves)
    ]
    return events


def _facts_of_many(auto_u_seat1: bool, n: int = 120) -> list[HandFacts]:
    prefs = tuple((auto_u_seat1 if s == 1 else True, True) for s in range(4))
    config = HandConfig(n_seats=4, prefs=prefs)
    rng = random.Random(7)
    bots = {s: HeuristicBot(rng) for s in range(4)}
    out = []
    for i in range(n):
        seed = f"integrity:{i}".encode()
        played = play_hand(config, seed, bots, dealer=0)
        events = _log(played)
        out.append(
            hand_facts(
                hand_id=i,
                players=(A, B, C, D),
                config=config,
                deck=shuffle(seed),
                dealer=0,
                events=events,
                times={e["seq"]: float(e["seq"]) for e in events},
            )
        )
    return out


def test_the_log_shows_wins_let_go_by_a_seat_without_automatic_u() -> None:
    manual = _facts_of_many(auto_u_seat1=False)
    auto = _facts_of_many(auto_u_seat1=True)
    let_go = [c for f in manual for c in f.chances if c.seat == 1 and not c.taken]
    assert let_go and all(c.by not in (None, 1) for c in let_go)
    assert not [c for f in auto for c in f.chances if not c.taken]  # the heuristic takes them


def test_the_log_gives_offers_and_think_times_per_seat() -> None:
    facts = _facts_of_many(auto_u_seat1=True, n=5)
    for f in facts:
        assert all(o.to == (o.by + 1) % 4 for o in f.offers)
        assert all(t == 1.0 for times in f.think.values() for t in times)  # 1 s per seq
    assert any(o.could_eat for f in facts for o in f.offers)
    assert any(o.ate for f in facts for o in f.offers)


def test_shared_address_reads_every_digest_of_a_player() -> None:
    flags, _ = compute([], addresses={A: {"s" * 64, "l" * 64}, B: {"l" * 64}, C: {"s" * 64}})
    assert sorted(f.players for f in flags) == [(A, B), (A, C)]
