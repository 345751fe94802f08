"""RULES.md §9 (ngồi im) and §12 (deadlines): the server's own moves are legal, clean when a clean
one exists, and play any hand to its end."""

from __future__ import annotations

import pytest
from rules_builders import start
from test_shape import BACH_THU_2V

from games.rules import faults as fault_rules
from games.rules.autoplay import auto_move
from games.rules.deck import shuffle
from games.rules.engine import apply, new_hand
from games.rules.moves import Declare, Discard, Draw, Pass, U
from games.rules.ruleset import build_ruleset
from games.rules.state import HandConfig, Mode, Phase


@pytest.mark.parametrize("mode", [Mode.BASIC, Mode.ADVANCED])
@pytest.mark.parametrize("seed", range(40))
def test_auto_moves_alone_play_any_hand_to_its_end_without_a_fault(mode, seed) -> None:
    # Given a shuffled hand where nobody ever moves but the server,
    n = 2 + seed % 3
    state = new_hand(
        HandConfig(n, mode=mode, ruleset=build_ruleset({})), shuffle(f"auto:{seed}".encode()), 0
    )
    for _ in range(400):
        if state.phase is Phase.ENDED:
            break
        # every automatic move is a system move of the seat to act, and clean,
        move = auto_move(state)
        assert move.system and move.seat == state.turn
        if fault_rules.faults_of(state, move):  # only when every alternative is a fault too
            kind = type(move)
            alternatives = [kind(move.seat, k) for k in range(25) if state.seats[move.seat].hand[k]]
            assert all(fault_rules.faults_of(state, m) for m in alternatives)
        state = apply(state, move)
    # and the hand ends (a win the seats asked for with auto_u, or hòa).
    assert state.phase is Phase.ENDED


def test_the_dealer_discards_trash_then_the_next_seat_draws_and_passes() -> None:
    state = start({}, stock="5N 5N")
    move = auto_move(state)
    assert isinstance(move, Discard) and move.seat == 0
    state = apply(state, move)
    assert (state.phase, auto_move(state)) == (Phase.OFFER, Draw(1, system=True))
    state = apply(state, auto_move(state))
    assert (state.phase, auto_move(state)) == (Phase.AFTER_DRAW, Pass(1, system=True))


def test_declare_phase_declares_the_true_cuoc() -> None:
    # Seat 1 waits bạch thủ on 2V; the dealer discards nothing it can use, seat 1 draws 2V.
    state = start({1: BACH_THU_2V}, stock="2V")
    state = apply(state, auto_move(state))  # the dealer's discard
    state = apply(state, auto_move(state))  # seat 1 draws the 2V
    assert state.phase is Phase.AFTER_DRAW and state.turn == 1
    move = auto_move(state)
    assert move == U(1, system=True)  # auto_u is on by default
    state = apply(state, move)
    assert state.phase is Phase.DECLARE
    assert auto_move(state) == Declare(1, auto=True, system=True)
    state = apply(state, auto_move(state))
    assert state.phase is Phase.ENDED and state.declaration["verdict"] == "dung"


def test_without_auto_u_the_server_passes_a_win_by() -> None:
    state = start({1: BACH_THU_2V}, stock="2V", prefs=((True, True), (False, True)) * 2)
    state = apply(state, auto_move(state))
    state = apply(state, auto_move(state))
    assert state.phase is Phase.AFTER_DRAW and state.turn == 1
    assert auto_move(state) == Pass(1, system=True)


def test_a_finished_hand_has_no_auto_move() -> None:
    state = new_hand(HandConfig(2), shuffle(b"x"), 0)
    state = apply(state, auto_move(state))
    for _ in range(400):
        if state.phase is Phase.ENDED:
            break
        state = apply(state, auto_move(state))
    with pytest.raises(ValueError):
        auto_move(state)
