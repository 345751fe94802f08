"""Self-play over thousands of hands: declarations judged against the true cước, and settlement
transfers that always balance with the pot."""

from __future__ import annotations

import random

import pytest

from games.rules.bots import HeuristicBot, RandomBot
from games.rules.deck import first_dealer, shuffle
from games.rules.declaring import auto_declaration, judge
from games.rules.engine import apply, can_win, legal_moves, new_hand
from games.rules.moves import Declare, Eat, U
from games.rules.payments import settle
from games.rules.ruleset import CUOC_SLUGS, build_ruleset
from games.rules.state import HandConfig, Mode, Phase


@pytest.mark.slow
def test_true_cuoc_is_dung_minus_one_is_thieu_plus_one_is_sai() -> None:
    rng = random.Random(11)
    checked = 0
    for preset in ("chan_van_van", "vinagames", "thapthanh"):
        ruleset = build_ruleset({"preset": preset})
        config = HandConfig(n_seats=4, ruleset=ruleset)
        bot = HeuristicBot(rng)
        for i in range(700):
            seed = f"{preset}:{i}".encode()
            state = new_hand(config, shuffle(seed), first_dealer(seed, 4))
            while state.phase not in (Phase.DECLARE, Phase.ENDED):
                state = apply(state, bot.choose(state, state.turn))
            if state.phase is Phase.ENDED:
                continue
            true = auto_declaration(state)
            assert judge(true, true, ruleset) == "dung"
            for slug in true:
                fewer = dict(true)
                fewer[slug] -= 1
                if any(fewer.values()):
                    assert judge(true, fewer, ruleset) == "thieu", (true, slug)
            for slug in CUOC_SLUGS:
                if slug not in true:
                    assert judge(true, {**true, slug: 1}, ruleset) == "sai", (true, slug)
            ended = apply(state, Declare(state.turn, tuple(sorted(true.items()))))
            assert ended.declaration.verdict == "dung"
            checked += 1
    assert checked > 1000


class RuleBreakingBot:
    """Plays like the heuristic bot but, one move in eight, picks any legal move (advanced mode
    offers faulty ones too), except an ù it does not hold."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.good = HeuristicBot(rng)
        self.bad = RandomBot(rng)

    def choose(self, state, seat):
        if self.rng.random() < 0.125:
            moves = [m for m in legal_moves(state, seat) if not isinstance(m, U)]
            if moves and not can_win(state, seat):
                return self.rng.choice(moves)
        return self.good.choose(state, seat)


@pytest.mark.slow
def test_advanced_self_play_with_rule_breakers_balances_and_bao_seats_sit_still() -> None:
    rng = random.Random(5)
    for preset in ("chan_van_van", "thapthanh"):
        ruleset = build_ruleset({"preset": preset, "overrides": {"ga_gop": True}})
        for i in range(400):
            n = 2 + i % 3
            config = HandConfig(n_seats=n, mode=Mode.ADVANCED, ruleset=ruleset)
            bot = RuleBreakingBot(rng)
            seed = f"adv:{preset}:{i}".encode()
            start = new_hand(config, shuffle(seed), first_dealer(seed, n))
            state, log = start, []
            bao_since: dict[int, int] = {}
            while state.phase is not Phase.ENDED:
                seat = state.turn
                move = bot.choose(state, seat)
                if state.seats[seat].bao:
                    assert not isinstance(move, Eat)
                    assert all(not isinstance(m, Eat) for m in legal_moves(state, seat))
                state = apply(state, move)
                log.append(move)
                for s, st in enumerate(state.seats):
                    if st.bao:
                        bao_since.setdefault(s, len(log))
            if state.win is not None:
                assert state.win.seat not in bao_since or state.outcome.result != "u"
            net = settle(state).net(n)
            assert sum(net.values()) == 0
            replay = start
            for m in log:
                replay = apply(replay, m)
            assert replay == state
