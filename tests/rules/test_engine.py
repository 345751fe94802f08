"""RULES.md §2–4: dealing, turns, eat/draw/pass, chíu and trả cửa, ù priority, the last card."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from rules_builders import accounted, make_deck, play, start
from test_shape import BA_DAU_2, BACH_THU_2V, BACH_THU_CHI

from games.rules.cards import CODES, KIND_OF, codes_of
from games.rules.engine import apply, legal_moves, new_hand
from games.rules.errors import FaultRefused, IllegalMove
from games.rules.moves import Chiu, Discard, Draw, Eat, Pass, TraCua, U, move_from_dict
from games.rules.payments import POT, settle
from games.rules.results import Outcome, Result
from games.rules.ruleset import build_ruleset
from games.rules.state import HandConfig, MissedWin, Mode, Phase
from games.rules.views import effects_for, full_view, missed_wins_of, view_for

K = KIND_OF
# Seat 1 waits bạch thủ on 9N and holds three 9N: a 9N completes it by chíu (chíu ù).
CHIU_U_9N = "CC CC 4V 4V 5V 5V 6N 6N 9N 9N 9N 3N 3S 7N 7S 8N 8V 6V 6S"
# Nineteen cards with no pair, no 8S and no 9N, and sixteen more with no 8S.
X = "2V 2N 2S 3V 3N 3S 4V 4N 4S 5V 5N 5S 6V 6N 6S 7V 7N 7S 8V"
Y = "2V 3V 4V 5V 6V 7V 8N 9N 9V 9S CC CC 2N 3N 4N 5N"


def dealer_discard(state, code: str):
    return apply(state, Discard(state.dealer, K[code]))


@pytest.mark.parametrize(("n", "stock"), [(2, 61), (3, 42), (4, 23)])
def test_dealing_sizes_for_2_3_4_seats(n: int, stock: int) -> None:
    deck = make_deck({}, n=n, dealer=1 % n)
    state = new_hand(HandConfig(n_seats=n), deck, 1 % n)
    sizes = [sum(st.hand) for st in state.seats]
    assert sizes == [20 if s == 1 % n else 19 for s in range(n)]
    assert len(state.stock) == stock
    assert accounted(state) == 100


def test_dealing_gives_each_seat_its_slice_in_play_order() -> None:
    deck = list(range(25)) * 4
    state = new_hand(HandConfig(n_seats=4), deck, 2)
    # seat 2 (the dealer) gets deck[0:19] + deck[76], seat 3 deck[19:38], seat 0 deck[38:57] …
    assert sorted(k for k in range(25) for _ in range(state.seats[2].hand[k])) == sorted(
        deck[0:19] + [deck[76]]
    )
    assert state.seats[3].hand == new_hand(HandConfig(n_seats=4), deck, 2).seats[3].hand
    assert state.stock == tuple(deck[77:])


def test_turn_order_dealer_discards_then_next_seat_is_offered() -> None:
    state = start({}, dealer=3)
    assert state.phase is Phase.DEALER_START and state.turn == 3
    card = next(k for k in range(25) if state.seats[3].hand[k])
    state = apply(state, Discard(3, card))
    assert state.phase is Phase.OFFER and state.turn == 0
    assert state.doors[3] == (card,)
    assert state.exposed is not None and state.exposed.door == 3


def test_not_your_turn_and_wrong_phase_are_refused() -> None:
    state = start({})
    with pytest.raises(IllegalMove) as e:
        apply(state, Draw(1))
    assert e.value.code == "not_your_turn"
    with pytest.raises(IllegalMove) as e:
        apply(state, Draw(0))
    assert e.value.code == "wrong_phase"


def test_card_not_in_hand_is_refused() -> None:
    state = start({0: BACH_THU_2V + " 2V"})
    with pytest.raises(IllegalMove) as e:
        apply(state, Discard(0, K["2S"]))
    assert e.value.code == "card_not_in_hand"


def test_eat_pair_goes_to_mat_then_discard() -> None:
    state = start({0: Y + " 9S 8S 8S CC", 1: X})
    state = dealer_discard(state, "7V")
    assert Eat(1, K["7V"], K["7V"]) in legal_moves(state, 1)
    state = apply(state, Eat(1, K["7V"], K["7V"]))
    assert state.phase is Phase.DISCARD and state.turn == 1
    assert [codes_of_group(g) for g in state.seats[1].mat] == [["7V", "7V"]]
    assert state.seats[1].mat[0].kind == "chan"
    assert state.doors[0] == ()
    state = apply(state, Discard(1, K["2S"]))
    assert state.turn == 2 and state.phase is Phase.OFFER
    assert sum(state.seats[1].hand) + state.seats[1].mat_cards == 19


def codes_of_group(g) -> list[str]:
    return [CODES[k] for k in g.cards]


def test_eat_needs_a_chan_or_ca() -> None:
    state = start({0: BACH_THU_2V + " 9V", 1: BA_DAU_2})
    state = dealer_discard(state, "9V")
    with pytest.raises(IllegalMove) as e:
        apply(state, Eat(1, K["9V"], K["4V"]))
    assert e.value.code == "not_a_pair"
    with pytest.raises(IllegalMove) as e:
        apply(state, Eat(1, K["8V"], K["8N"]))
    assert e.value.code == "card_not_offered"


def test_draw_turns_stock_card_onto_own_door_then_pass_offers_it_down() -> None:
    state = start({}, stock="5N")
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    state = apply(state, Draw(1))
    assert state.phase is Phase.AFTER_DRAW and state.turn == 1
    assert state.doors[1] == (K["5N"],)
    assert state.exposed.source == "stock"
    assert Pass(1) in legal_moves(state, 1)
    state = apply(state, Pass(1))
    assert state.phase is Phase.OFFER and state.turn == 2
    assert state.exposed.card == K["5N"] and state.exposed.door == 1


def test_draw_records_the_declined_card() -> None:
    state = start({0: BACH_THU_2V + " 9V", 1: BA_DAU_2})
    state = dealer_discard(state, "9V")
    state = apply(state, Draw(1))
    assert [d.card for d in state.seats[1].declined] == [K["9V"]]


def test_own_draw_wins_u_chi() -> None:
    state = start({1: BACH_THU_2V}, stock="2V")
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    state = apply(state, Draw(1))
    assert U(1) in legal_moves(state, 1)
    state = apply(state, U(1))
    assert state.phase is Phase.DECLARE
    assert state.win.seat == 1 and state.win.source == "own_draw" and state.win.bach_thu
    assert state.win.first_draw
    assert accounted(state) == 100


def test_u_priority_drawer_first_then_nearest_seat() -> None:
    # seat 1 (drawer) and seat 2 both win on 2V: seat 1 decides first
    state = start({1: BACH_THU_2V, 2: BA_DAU_2}, stock="2V")
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    state = apply(state, Draw(1))
    assert state.phase is Phase.AFTER_DRAW and state.pending_u == 2
    won = apply(state, U(1))
    assert won.win.seat == 1
    # any other move by the drawer is replaced by seat 2's win, and the drawer bỏ ù
    passed = apply(state, Pass(1))
    assert passed.win.seat == 2 and passed.win.source == "other_draw"
    assert passed.win.replaced == 1
    assert passed.seats[1].missed_win


def _drawer_could_win_and_passes(mode: Mode):
    """Seats 1 (the drawer) and 2 both win on the stock's first card, 2V; seat 1 passes."""
    state = start({1: BACH_THU_2V, 2: BA_DAU_2}, stock="2V", mode=mode)
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    state = apply(state, Draw(1))
    return state, apply(state, Pass(1))


@pytest.mark.parametrize("mode", [Mode.BASIC, Mode.ADVANCED])
def test_drawer_bo_u_replaced_by_another_seats_win_is_recorded_in_both_modes(mode: Mode) -> None:
    # Given a drawer that could win on its own draw while seat 2 also could (RULES.md §4) …
    before, passed = _drawer_could_win_and_passes(mode)
    # … when it passes, seat 2's win replaces the move and the drawer's bỏ ù is recorded:
    assert passed.win.seat == 2 and passed.win.replaced == 1
    # on the seat (the card, the seq of the pass, who won on it) …
    assert passed.seats[1].missed_wins == (MissedWin(K["2V"], passed.n_moves, 2),)
    assert passed.n_moves == 3  # the deal is seq 0: the discard 1, the draw 2, the pass 3
    assert before.seats[1].missed_wins == () and passed.seats[2].missed_wins == ()
    # … and as an effect of the pass, before the win that replaced it.
    assert list(passed.events) == [
        {"type": "pass", "seat": 1},
        {"type": "bo_u", "seat": 1, "card": "2V", "replaced_by": 2},
        {"type": "win", "seat": 2, "card": "2V", "source": "other_draw"},
        # who won the card and why: seat 2's auto ù waited for the drawer's move other than ù
        {"type": "claim", "seat": 2, "card": "2V", "rule": "drawer_declined", "replaced": 1},
    ]
    # It changes no payment: the settlement is the one of the same win without it.
    ended = apply(passed, move_from_dict({"type": "declare", "auto": True}, seat=2))
    unmarked = replace(passed, seats=tuple(replace(st, missed_wins=()) for st in passed.seats))
    assert (
        ended.settlement
        == apply(unmarked, move_from_dict({"type": "declare", "auto": True}, seat=2)).settlement
    )


def test_drawer_bo_u_is_in_its_own_view_and_the_auditors_never_in_another_seats_live() -> None:
    _, passed = _drawer_could_win_and_passes(Mode.BASIC)
    mine = {"card": "2V", "seq": 3, "replaced_by": 2}
    assert view_for(passed, 1)["my_bo_u"] == [mine]
    assert full_view(passed)["seats"][1]["bo_u"] == [mine]
    # While the hand is live another seat sees no one's bỏ ù (it tells what a hand waits on).
    for seat in (0, 2, 3):
        view = view_for(passed, seat)
        assert view["my_bo_u"] == []
        assert all("bo_u" not in s for s in view["seats"])
        assert "bo_u" not in json.dumps(view["seats"])
    # After the end every hand is revealed, and with them each seat's bỏ ù.
    ended = apply(passed, move_from_dict({"type": "declare", "auto": True}, seat=2))
    assert ended.phase is Phase.ENDED
    assert view_for(ended, 0)["seats"][1]["bo_u"] == [mine]
    assert missed_wins_of(ended) == [{"seat": 1, **mine}]


def test_bo_u_effects_are_private_to_their_seat_until_the_end_and_from_spectators() -> None:
    _, passed = _drawer_could_win_and_passes(Mode.BASIC)
    effects = list(passed.events)
    bo_u = effects[1]
    assert bo_u in effects_for(effects, 1, ended=False)
    assert bo_u not in effects_for(effects, 0, ended=False)
    assert bo_u in effects_for(effects, 0, ended=True)
    assert bo_u not in effects_for(effects, None, ended=True)
    assert effects_for(effects, 0, ended=False) == [effects[0], effects[2], effects[3]]


def test_drawer_bo_u_without_another_winner_is_recorded_and_play_goes_on() -> None:
    # Nobody else waits on 2V: the drawer passes its own winning draw, a bỏ ù with no winner.
    state = start({1: BACH_THU_2V}, stock="2V")
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    state = apply(apply(state, Draw(1)), Pass(1))
    assert state.phase is Phase.OFFER and state.turn == 2
    assert state.seats[1].missed_wins == (MissedWin(K["2V"], 3, None),)
    assert {"type": "bo_u", "seat": 1, "card": "2V", "replaced_by": None} in state.events
    assert view_for(state, 1)["my_bo_u"] == [{"card": "2V", "seq": 3, "replaced_by": None}]
    assert "bo_u" not in json.dumps(view_for(state, 2)["seats"])


def test_u_priority_between_two_other_seats_nearest_wins_at_once() -> None:
    state = start({2: BACH_THU_2V, 3: BA_DAU_2}, stock="2V")
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    state = apply(state, Draw(1))  # seat 1 cannot win on 2V
    assert state.phase is Phase.DECLARE
    assert state.win.seat == 2 and state.win.source == "other_draw"


def test_auto_u_off_seat_is_skipped_and_may_claim_on_its_turn() -> None:
    prefs = ((True, True), (True, True), (False, True), (True, True))
    state = start({2: BACH_THU_2V}, stock="2V", prefs=prefs)
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    state = apply(state, Draw(1))
    assert state.phase is Phase.AFTER_DRAW  # nobody claimed
    state = apply(state, Pass(1))
    assert state.turn == 2 and U(2) in legal_moves(state, 2)
    state = apply(state, U(2))
    assert state.win.seat == 2 and state.win.source == "other_draw"


def test_set_prefs_is_recorded_and_changes_claims() -> None:
    state = start({2: BACH_THU_2V}, stock="2V")
    state = play(state, (2, {"type": "set_prefs", "auto_u": False}))
    assert not state.seats[2].auto_u
    assert state.events[0] == {"type": "set_prefs", "auto_u": False, "seat": 2}


def test_no_win_on_a_discard() -> None:
    state = start({0: "2V " + X, 1: BACH_THU_2V})
    state = dealer_discard(state, "2V")
    assert U(1) not in legal_moves(state, 1)
    with pytest.raises(FaultRefused) as e:  # a false ù: the fault u_lao (RULES.md §9)
        apply(state, U(1))
    assert e.value.code == "u_lao"


def test_chiu_by_the_turn_seat_then_discard_without_tra_cua() -> None:
    state = start({0: "8S " + X, 1: "8S 8S 8S " + Y})
    state = dealer_discard(state, "8S")
    assert Chiu(1, K["8S"]) in legal_moves(state, 1)
    state = apply(state, Chiu(1, K["8S"]))
    assert state.phase is Phase.DISCARD and state.turn == 1
    assert state.seats[1].mat[-1].kind == "chiu" and state.seats[1].mat_chan == 2


def test_chiu_out_of_turn_then_tra_cua_and_play_resumes() -> None:
    state = start({0: "8S " + X, 2: "8S 8S 8S " + Y})
    state = dealer_discard(state, "8S")
    assert state.phase is Phase.TRA_CUA and state.turn == 2
    assert state.seats[2].mat[-1].kind == "chiu"
    assert {"type": "chiu", "seat": 2, "card": "8S", "auto": True} in state.events
    state = apply(state, TraCua(2, K["2V"]))
    assert state.phase is Phase.OFFER and state.turn == 1
    assert state.exposed.card == K["2V"] and state.exposed.source == "returned"
    assert state.doors[0] == (K["2V"],)
    assert accounted(state) == 100


def test_returned_card_is_eatable_but_not_winnable() -> None:
    state = start({0: "8S " + X, 1: BACH_THU_2V, 2: "8S 8S 8S " + Y})
    state = dealer_discard(state, "8S")
    state = apply(state, TraCua(2, K["2V"]))
    moves = legal_moves(state, 1)
    assert U(1) not in moves
    assert Eat(1, K["2V"], K["2V"]) in moves


def test_auto_chiu_off_means_no_out_of_turn_chiu() -> None:
    prefs = ((True, True), (True, True), (True, False), (True, True))
    state = start({0: "8S " + X, 2: "8S 8S 8S " + Y}, prefs=prefs)
    state = dealer_discard(state, "8S")
    assert state.phase is Phase.OFFER and state.turn == 1


def test_cannot_chiu_own_discard() -> None:
    state = start({0: "9N 9N 9N 9N " + " ".join(X.split()[:16])})
    state = dealer_discard(state, "9N")
    assert state.phase is Phase.OFFER and state.turn == 1
    assert state.seats[0].mat == ()


def test_chiu_u_out_of_turn_on_a_discard() -> None:
    state = start({0: "9N " + X, 2: CHIU_U_9N})
    state = dealer_discard(state, "9N")
    assert state.phase is Phase.DECLARE
    assert state.win.seat == 2 and state.win.by_chiu and state.win.source == "chiu"


def test_chiu_u_by_the_turn_seat() -> None:
    state = start({0: "9N " + X, 1: CHIU_U_9N})
    state = dealer_discard(state, "9N")
    state = apply(state, Chiu(1, K["9N"]))
    assert state.win.seat == 1 and state.win.by_chiu


def test_thien_u_for_the_dealer() -> None:
    state = start({0: BACH_THU_2V + " 2V"})
    assert U(0) in legal_moves(state, 0)
    state = apply(state, U(0))
    assert state.win.source == "dealt" and state.win.card is None and state.win.bach_thu


def test_dealer_without_a_win_cannot_claim_thien_u() -> None:
    state = start({})
    assert U(0) not in legal_moves(state, 0)
    with pytest.raises(IllegalMove):
        apply(state, U(0))


def test_chi_chi_drawn_wins_bach_thu_chi() -> None:
    state = start({1: BACH_THU_CHI}, stock="CC")
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    state = apply(state, Draw(1))
    state = apply(state, U(1))
    assert state.win.card == K["CC"] and state.win.bach_thu


def test_last_stock_card_is_never_drawn_and_the_hand_is_hoa() -> None:
    state = start({})
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    draws = 0
    while state.phase is not Phase.ENDED:
        seat = state.turn
        if state.phase is Phase.OFFER:
            state = apply(state, Draw(seat))
            draws += state.phase is Phase.AFTER_DRAW
        else:
            state = apply(state, Pass(seat))
    assert draws == 22
    assert len(state.stock) == 1
    assert state.outcome.to_dict() == {"result": "hoa"}
    assert {"type": "hoa"} in state.events
    with pytest.raises(IllegalMove) as e:
        apply(state, Draw(state.turn))
    assert e.value.code == "hand_over"


def test_eat_is_refused_when_no_card_would_be_left_to_discard() -> None:
    state = start({})
    st = state.seats[1]
    assert sum(st.hand) == 19  # sanity: a full hand may eat
    assert all(m.type != "eat" or sum(st.hand) >= 2 for m in legal_moves(state, 1))


def test_move_json_round_trip_through_apply() -> None:
    state = start({1: BACH_THU_2V}, stock="2V")
    card = CODES[next(k for k in range(25) if state.seats[0].hand[k])]
    state = play(state, (0, {"type": "discard", "card": card}), (1, {"type": "draw"}))
    assert move_from_dict({"type": "u"}, seat=1) in legal_moves(state, 1)
    assert codes_of(state.seats[1].hand) == sorted(BACH_THU_2V.split(), key=K.get)


def test_drawer_chiu_u_on_its_own_draw_keeps_its_priority() -> None:
    other_wins_on_9n = "2V 2V 2N 2N 4V 4V 5V 5V 6N 6N 8S 8S 3N 3S 7N 7S 6V 6S 9V"
    state = start({1: CHIU_U_9N, 2: other_wins_on_9n}, stock="9N")
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    state = apply(state, Draw(1))
    assert state.pending_u == 2
    state = apply(state, Chiu(1, K["9N"]))
    assert state.win.seat == 1 and state.win.by_chiu and state.win.source == "own_draw"
    assert not state.seats[1].missed_win


def test_letting_a_winnable_passed_down_card_go_is_a_missed_win() -> None:
    prefs = ((True, True), (True, True), (False, True), (True, True))
    state = start({2: BACH_THU_2V}, stock="2V", prefs=prefs)
    state = dealer_discard(state, CODES[next(k for k in range(25) if state.seats[0].hand[k])])
    state = apply(state, Draw(1))
    state = apply(state, Pass(1))
    assert U(2) in legal_moves(state, 2)
    state = apply(state, Draw(2))
    assert state.seats[2].missed_win


def ga_gop_hand(dealer_extra: str, stock: str):
    """Seats 1–3 hold X (no pair, no 9N, no 8S); the dealer Y plus ``dealer_extra``."""
    deck = make_deck({0: f"{Y} {dealer_extra}", 1: X, 2: X, 3: X}, stock=stock)
    ruleset = build_ruleset({"preset": "chan_van_van", "overrides": {"ga_gop": True}})
    return new_hand(HandConfig(4, mode=Mode.ADVANCED, ruleset=ruleset), deck, 0)


def test_nhai_drawing_the_card_just_let_go_by_pays_into_the_pot_in_runs() -> None:
    # Given a gà góp table where the dealer discards 9N and the stock starts 9N 9N 8S 8S,
    state = dealer_discard(ga_gop_hand("9N 9S 8N 8N", "9N 9N 8S 8S"), "9N")
    # when seat 1 lets the 9N go by and draws a 9N, then seat 2 does the same (a run of two),
    state = play(state, (1, {"type": "draw"}), (1, {"type": "pass"}), (2, {"type": "draw"}))
    assert [(n.seat, CODES[n.card], n.points) for n in state.nhai] == [(1, "9N", 1), (2, "9N", 2)]
    assert {"type": "nhai", "seat": 2, "card": "9N", "points": 2} in state.events
    # and seat 3 draws an 8S (no nhái: the run ends), then the dealer draws the other 8S,
    state = play(state, (2, {"type": "pass"}), (3, {"type": "draw"}), (3, {"type": "pass"}))
    state = play(state, (0, {"type": "draw"}))
    # then the dealer's nhái starts a new run at 1 point,
    assert [(n.seat, n.points) for n in state.nhai] == [(1, 1), (2, 2), (0, 1)]
    # and every other seat pays each nhái's points into the pot (settled as a hòa here).
    state = replace(state, phase=Phase.ENDED, outcome=Outcome(Result.HOA))
    paid = [t for t in settle(state).transfers if t.reason == "ga_gop_nhai"]
    assert sorted((t.payer, t.points) for t in paid) == sorted(
        [(s, 1) for s in (0, 2, 3)] + [(s, 2) for s in (0, 1, 3)] + [(s, 1) for s in (1, 2, 3)]
    )
    assert {t.payee for t in paid} == {POT}


def test_nhai_on_chi_chi_is_doubled() -> None:
    state = dealer_discard(ga_gop_hand("CC 9S 8N 8N", "CC"), "CC")
    state = play(state, (1, {"type": "draw"}))
    assert [(n.seat, n.points) for n in state.nhai] == [(1, 2)]


def test_an_eat_ends_a_run_of_nhai() -> None:
    # Given seat 1's nhái on 9N, passed down to seat 2, which holds a 9V,
    deck = make_deck({0: f"{Y} 9N 9S 8N 8N", 1: X, 2: X.replace("8V", "9V"), 3: X}, stock="9N 9N")
    ruleset = build_ruleset({"preset": "chan_van_van", "overrides": {"ga_gop": True}})
    state = new_hand(HandConfig(4, mode=Mode.ADVANCED, ruleset=ruleset), deck, 0)
    state = play(dealer_discard(state, "9N"), (1, {"type": "draw"}), (1, {"type": "pass"}))
    assert state.nhai_streak == 1
    # when seat 2 takes its turn by eating the 9N with its 9V, the run is over.
    state = apply(state, Eat(2, K["9N"], K["9V"]))
    assert state.nhai_streak == 0 and len(state.nhai) == 1


def test_no_nhai_is_counted_without_ga_gop() -> None:
    deck = make_deck({0: f"{Y} 9N 9S 8N 8N", 1: X, 2: X, 3: X}, stock="9N")
    state = dealer_discard(new_hand(HandConfig(4, mode=Mode.ADVANCED), deck, 0), "9N")
    state = play(state, (1, {"type": "draw"}))
    assert state.nhai == () and not any(e["type"] == "nhai" for e in state.events)
