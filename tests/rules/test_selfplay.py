"""Random self-play with invariants: every card accounted for, 19-sets, replay equality,
legal moves apply, and no seat ever sees another seat's hand or the stock."""

from __future__ import annotations

import functools
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rules_builders import accounted

from games.rules.bots import HeuristicBot, RandomBot
from games.rules.deck import first_dealer, shuffle
from games.rules.engine import apply, legal_moves, new_hand
from games.rules.errors import IllegalMove
from games.rules.moves import Draw, Pass, move_from_dict
from games.rules.state import HandConfig, Phase
from games.rules.views import view_for

settings.register_profile("ci", max_examples=1500, deadline=None)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def nineteen_sets_hold(state) -> bool:
    """Between turns every seat holds 19 cards counting hand + mat; the seat that must still
    discard or return a card holds 20."""
    for i, s in enumerate(state.seats):
        size = sum(s.hand) + s.mat_cards
        busy = i == state.turn and state.phase in (
            Phase.DEALER_START,
            Phase.DISCARD,
            Phase.TRA_CUA,
        )
        if state.phase is not Phase.ENDED and state.win is None and size != (20 if busy else 19):
            return False
    return True


def check_view_hides(state, seat: int) -> None:
    view = view_for(state, seat)
    assert "stock" not in view
    for other in view["seats"]:
        assert "hand" not in other and "dealt" not in other and "bo_u" not in other
    assert len(view["my_bo_u"]) == len(state.seats[seat].missed_wins)  # its own bỏ ù only
    assert view["hand"] == view_for(state, seat)["hand"]


@pytest.mark.slow(seconds=45)
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.binary(min_size=1, max_size=8),
    n=st.integers(min_value=2, max_value=4),
    bot=st.sampled_from(["random", "heuristic"]),
)
def test_random_self_play_keeps_every_invariant(seed: bytes, n: int, bot: str) -> None:
    rng = random.Random(seed)
    player = RandomBot(rng) if bot == "random" else HeuristicBot(rng)
    config = HandConfig(n_seats=n)
    deck = shuffle(seed)
    start = new_hand(config, deck, first_dealer(seed, n))
    state = start
    log = []
    while state.phase is not Phase.ENDED:
        seat = state.turn
        moves = legal_moves(state, seat)
        assert moves, f"no legal move in {state.phase}"
        for other in range(n):
            if other != seat:
                assert legal_moves(state, other) == []
        move = player.choose(state, seat)
        assert move in moves
        # every legal move applies (checked on a sample to keep the test fast)
        for m in rng.sample(moves, min(3, len(moves))):
            apply(state, m)
        state = apply(state, move_from_dict(move.to_dict()))
        log.append(move)
        assert accounted(state) == 100
        assert nineteen_sets_hold(state)
        if state.phase is not Phase.ENDED:
            check_view_hides(state, rng.randrange(n))
    assert functools.reduce(apply, log, start) == state


def test_a_move_not_in_legal_moves_is_refused() -> None:
    rng = random.Random(7)
    for i in range(40):
        seed = f"refuse:{i}".encode()
        state = new_hand(HandConfig(n_seats=4), shuffle(seed), 0)
        bot = RandomBot(rng)
        while state.phase is not Phase.ENDED:
            seat = state.turn
            legal = legal_moves(state, seat)
            for probe in (Draw(seat), Pass(seat)):
                if probe not in legal:
                    try:
                        apply(state, probe)
                    except IllegalMove:
                        pass
                    else:
                        raise AssertionError(f"{probe} applied in {state.phase}")
            state = apply(state, bot.choose(state, seat))


@pytest.mark.slow
def test_thousands_of_heuristic_hands_end_cleanly() -> None:
    rng = random.Random(3)
    endings = {"u": 0, "hoa": 0}
    for i in range(2000):
        seed = f"bulk:{i}".encode()
        n = 2 + i % 3
        bot = HeuristicBot(rng)
        state = new_hand(HandConfig(n_seats=n), shuffle(seed), first_dealer(seed, n))
        while state.phase is not Phase.ENDED:
            state = apply(state, bot.choose(state, state.turn))
        assert accounted(state) == 100
        endings[state.outcome.result.value] += 1
    assert endings["u"] > 0 and endings["hoa"] > 0
