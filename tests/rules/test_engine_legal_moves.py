"""``legal_moves`` and ``apply`` agree (STYLE.md: one rule, one answer): over random rulesets, seat
counts, preferences and both modes, in every reached state and for every seat, a move is accepted
by ``apply`` exactly when ``legal_moves`` lists it.

The candidates are every move of every type for every kind (eating the card on offer or another
one), plus the auto-declaration; left out are ``set_prefs`` (always accepted while the hand is
live) and declarations of a chosen cước map (free input, judged rather than refused)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.rules.bots import HeuristicBot
from games.rules.cards import N_KINDS
from games.rules.deck import first_dealer, shuffle
from games.rules.engine import apply, legal_moves, new_hand
from games.rules.errors import RuleError
from games.rules.moves import Chiu, Declare, Discard, Draw, Eat, Move, Pass, TraCua, U
from games.rules.ruleset import PRESETS, build_ruleset
from games.rules.state import HandConfig, HandState, Mode, Phase

MAX_MOVES = 400


def candidates(state: HandState, seat: int) -> list[Move]:
    offered = {state.exposed.card} if state.exposed is not None else set()
    eaten = offered | {(min(offered, default=0) + 1) % N_KINDS}
    out: list[Move] = [Draw(seat), Pass(seat), U(seat), Declare(seat, auto=True)]
    for k in range(N_KINDS):
        out += [Discard(seat, k), TraCua(seat, k), Chiu(seat, k)]
        out += [Eat(seat, c, k) for c in eaten]
    return out


def accepted(state: HandState, move: Move) -> bool:
    try:
        apply(state, move)
    except RuleError:
        return False
    return True


def assert_agree(state: HandState) -> None:
    for seat in range(state.n_seats):
        legal = legal_moves(state, seat)
        pool = candidates(state, seat)
        assert set(legal) <= set(pool), (state.phase, legal)
        taken = [m for m in pool if accepted(state, m)]
        assert sorted(map(repr, taken)) == sorted(map(repr, legal)), (
            f"phase {state.phase.value}, seat {seat}, turn {state.turn}, "
            f"accepted only: {set(map(repr, taken)) - set(map(repr, legal))}, "
            f"listed only: {set(map(repr, legal)) - set(map(repr, taken))}"
        )


rulesets = st.builds(
    lambda preset, four_eleven, ga_gop, declared, chiu_u_off: build_ruleset(
        {
            "preset": preset,
            "overrides": {
                "four_eleven": four_eleven,
                "ga_gop": ga_gop,
                "bach_thu_must_be_declared": declared,
                **({"cuoc": {"chiu_u": "off"}} if chiu_u_off else {}),
            },
        }
    ),
    st.sampled_from(list(PRESETS)),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ruleset=rulesets,
    n=st.integers(2, 4),
    mode=st.sampled_from(list(Mode)),
    seed=st.integers(0, 10**6),
    prefs=st.lists(st.tuples(st.booleans(), st.booleans()), min_size=4, max_size=4),
    wild=st.floats(0, 1),
)
def test_apply_accepts_exactly_the_listed_moves(ruleset, n, mode, seed, prefs, wild) -> None:
    rng = random.Random(seed)
    config = HandConfig(n_seats=n, mode=mode, ruleset=ruleset, prefs=tuple(prefs[:n]))
    deck_seed = f"agree:{seed}".encode()
    state = new_hand(config, shuffle(deck_seed), first_dealer(deck_seed, n))
    bot = HeuristicBot(rng)
    for _ in range(MAX_MOVES):
        assert_agree(state)
        if state.phase is Phase.ENDED:
            return
        moves = legal_moves(state, state.turn)
        # mostly sensible play (so hands reach wins and declarations), sometimes any legal move
        move = rng.choice(moves) if rng.random() < wild else bot.choose(state, state.turn)
        state = apply(state, move)
    raise AssertionError("the hand did not end")
