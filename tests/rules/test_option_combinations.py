"""Where two options or rules meet: 4-11 with the automatic claims (§10.6), gà góp with
the named hands (§10.10), the discarder's own door (§4, seed 004 Lưu ý 5) and a báo seat's ù
(§9, §10.5). The first test of each group is the issue's reproduction."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rules_builders import bach_thu_seat, make_deck, play, start

from games.rules.cards import KIND_OF, code
from games.rules.cuoc import NAMED_HAND_RULES
from games.rules.engine import apply, legal_moves, new_hand
from games.rules.errors import IllegalMove
from games.rules.moves import Chiu, Declare, Eat, U
from games.rules.payments import settle
from games.rules.ruleset import NAMED_HANDS, PRESETS, build_ruleset
from games.rules.state import HandConfig, HandState, Mode, Phase, WinInfo

K = KIND_OF
ON_OFF = (True, False)

# --- 4-11 and the automatic claims (RULES.md §10.6) -------------------------------------------

# Seat 2 holds three 4N; the third stock card is the fourth 4N, drawn by seat 3. Its win on it
# (a chíu ù, or an ù on another seat's draw holding three) truly scores 3: Chíu ù alone.
FOUR_N = "4N 4N 4N 2V 2V 5N 5N 6S 6S 9V 9V 8N 8N 2N 2S 5V 5S 6V 6N"


def _seat_3_draws_the_fourth_4n(overrides: dict, auto_u: bool, auto_chiu: bool) -> HandState:
    rs = build_ruleset({"overrides": overrides})
    prefs = ((True, True), (True, True), (auto_u, auto_chiu), (True, True))
    deck = make_deck({2: FOUR_N}, stock="7V 7S 4N")
    st = new_hand(HandConfig(n_seats=4, ruleset=rs, prefs=prefs), deck, 0)
    junk = next(
        code(m.card)
        for m in legal_moves(st, 0)
        if getattr(m, "card", None) is not None and code(m.card) not in ("4N", "5N")
    )
    return play(
        st,
        (0, {"type": "discard", "card": junk}),
        (1, {"type": "draw"}),
        (1, {"type": "pass"}),
        (2, {"type": "draw"}),
        (2, {"type": "pass"}),
        (3, {"type": "draw"}),
    )


def test_four_eleven_the_server_never_takes_a_win_under_4_by_an_automatic_chiu_u() -> None:
    # Given 4-11 and seat 2 whose chíu ù on seat 3's draw would score 3 (and cost it 11 each),
    st = _seat_3_draws_the_fourth_4n({"four_eleven": True}, auto_u=True, auto_chiu=True)
    # the server takes no win for it: the card goes by as it does for auto_u.
    assert st.phase is Phase.AFTER_DRAW and st.turn == 3
    assert st.win is None
    assert [e["type"] for e in st.events] == ["draw", "drawn"]
    assert st.seats[2].hand[K["4N"]] == 3 and not st.seats[2].missed_win


@pytest.mark.parametrize("auto_chiu", ON_OFF)
@pytest.mark.parametrize("auto_u", ON_OFF)
@pytest.mark.parametrize("four_eleven", ON_OFF)
def test_four_eleven_auto_u_auto_chiu_combinations(
    four_eleven: bool, auto_u: bool, auto_chiu: bool
) -> None:
    st = _seat_3_draws_the_fourth_4n({"four_eleven": four_eleven}, auto_u, auto_chiu)
    if four_eleven or not (auto_u or auto_chiu):
        # no automatic win: under 4 in 4-11 mode, or the seat asked for no automatic claim
        assert st.phase is Phase.AFTER_DRAW and st.win is None
        assert st.exposed is not None and st.exposed.card == K["4N"]
        return
    # otherwise seat 2 wins on the drawn 4N (by auto ù or by automatic chíu ù), holding three
    assert st.phase is Phase.DECLARE and st.win is not None
    assert (st.win.seat, st.win.source, st.win.by_chiu) == (2, "other_draw", True)
    ended = apply(st, Declare(2, auto=True))
    assert ended.declaration is not None and ended.declaration.true_score.total == 3


@pytest.mark.parametrize("auto_chiu", ON_OFF)
@pytest.mark.parametrize("auto_u", ON_OFF)
def test_four_eleven_a_win_worth_4_is_still_taken_automatically(
    auto_u: bool, auto_chiu: bool
) -> None:
    overrides = {"four_eleven": True, "cuoc": {"chiu_u": {"diem": 4, "dich": 1}}}
    st = _seat_3_draws_the_fourth_4n(overrides, auto_u, auto_chiu)
    if auto_u or auto_chiu:
        assert st.win is not None and st.win.seat == 2
        ended = apply(st, Declare(2, auto=True))
        assert ended.settlement is not None and ended.settlement.facts is not None
        assert ended.settlement.facts.true_score == 4
        assert {t.reason for t in ended.settlement.transfers} == {"win"}
    else:
        assert st.win is None


# --- gà góp and the named hands (RULES.md §10.10) -----------------------------------------

SEAT1 = "5V 4V 6V 6V 7V 7V 9N 9N 3V 3N 4N 4S 6N 6S 7N 7S 2V 9S 8N"
DEALER = "5V 2S 3S 5N 5S 8S 8V 9V CC 2N 3N 4N 5S 6S 7S 8N 9S CC 2S 6N"


def _nha_lau_xe_hoi_hand(preset: str) -> HandState:
    rs = build_ruleset({"preset": preset, "overrides": {"ga_gop": True}})
    deck = make_deck({0: DEALER, 1: SEAT1}, stock="2N 3S 4V 8S 9V 5S 2V")
    st = new_hand(HandConfig(n_seats=4, ruleset=rs), deck, 0)
    st = play(
        st,
        (0, {"type": "discard", "card": "5V"}),
        (1, {"type": "eat", "card": "5V", "with": "5V"}),
        (1, {"type": "discard", "card": "9S"}),
    )
    for s in (2, 3, 0):
        st = play(st, (s, {"type": "draw"}), (s, {"type": "pass"}))
    st = play(
        st, (1, {"type": "eat", "card": "4V", "with": "4V"}), (1, {"type": "discard", "card": "8N"})
    )
    for s in (2, 3, 0):
        st = play(st, (s, {"type": "draw"}), (s, {"type": "pass"}))
    return play(
        st, (1, {"type": "draw"}), (1, {"type": "u"}), (1, {"type": "declare", "auto": True})
    )


def test_ga_gop_the_pot_goes_to_a_chi_bach_thu_declared_under_a_named_hand() -> None:
    # Given seat 1's chì bạch thủ on 2V with eaten chắn 5V and 4V: thapthanh names it nhà lầu
    # xe hơi, replacing chi and bach_thu in the declaration:
    st = _nha_lau_xe_hoi_hand("thapthanh")
    # the winner takes the gà góp pot,
    assert settle(st).to_dict()["facts"].get("takes_pot") is True
    assert st.declaration is not None and st.declaration.declared("nha_lau_xe_hoi") == 1
    assert st.declaration.declared("chi") == st.declaration.declared("bach_thu") == 0
    # chan_van_van names the same win hoa rơi cửa phật: the pot too.
    assert settle(_nha_lau_xe_hoi_hand("chan_van_van")).to_dict()["facts"].get("takes_pot") is True


def _named_hand_winner(slug: str, preset: str, source: str) -> HandState:
    """Seat 1 in the declare phase, having won ``slug``'s card from ``source`` (chì or not)."""
    mat_kinds, card = NAMED_HAND_RULES[slug]
    hand, mat = bach_thu_seat(mat_kinds, card)
    rs = build_ruleset({"preset": preset, "overrides": {"ga_gop": True}})
    st = new_hand(HandConfig(n_seats=4, ruleset=rs), make_deck({}), 0)
    seats = list(st.seats)
    seats[1] = replace(seats[1], hand=hand, mat=mat)
    win = WinInfo(1, card, source, False, False, True, 1 if source == "own_draw" else 0)
    return replace(st, seats=tuple(seats), phase=Phase.DECLARE, turn=1, win=win, exposed=None)


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("slug", NAMED_HANDS)
def test_ga_gop_every_named_hand_in_every_preset_takes_the_pot(slug: str, preset: str) -> None:
    ended = apply(_named_hand_winner(slug, preset, "own_draw"), Declare(1, auto=True))
    decl = ended.declaration
    assert decl is not None and decl.verdict == "dung"
    named = [s for s in NAMED_HANDS if decl.declared(s)]
    if named:  # the preset plays a named hand here: it replaces chi and bach_thu
        assert not decl.declared("chi") and not decl.declared("bach_thu")
    else:  # no named hand played: a plain chì bạch thủ
        assert decl.declared("chi") and decl.declared("bach_thu")
    assert ended.settlement is not None and ended.settlement.facts is not None
    assert ended.settlement.facts.takes_pot
    assert ended.settlement == settle(ended)


@pytest.mark.parametrize("slug", NAMED_HANDS)
def test_ga_gop_a_bach_thu_that_is_not_chi_does_not_take_the_pot(slug: str) -> None:
    ended = apply(_named_hand_winner(slug, "thapthanh", "other_draw"), Declare(1, auto=True))
    assert ended.declaration is not None and not ended.declaration.declared("chi")
    assert ended.settlement is not None and ended.settlement.facts is not None
    assert not ended.settlement.facts.takes_pot


# --- the discarder's own door (RULES.md §4, seed 004 Lưu ý 5) -------------------------------

OWN_DOOR_SEAT2 = "2V 2V 2V 4S 7V 9V 3N 5N 7S 8V 2S 6S 5S 6V 7N 8N 9S 5V 6N"
OWN_DOOR_PLAIN = "2V 4S 4S 4S 6S 9N 3V 5N 7S 8V 2S 3N 5S 6V 7N 8N 9S 5V 6N 3S"
# The same discarder, with a hand that the fourth 4S completes (chíu ù: 6 chắn + 4 cạ).
OWN_DOOR_WINS = "2V 4S 4S 4S 3V 3V 5N 5N 6S 6S 9N 9N 7V 7N 8N 8S 2N 2S 6V 6N"


def _seat_2_chius_the_discard(dealer_hand: str, auto_chiu: bool) -> HandState:
    prefs = ((True, auto_chiu), (True, True), (True, True), (True, True))
    st = start({0: dealer_hand, 2: OWN_DOOR_SEAT2}, prefs=prefs)
    # seat 0 discards 2V; seat 2 chíus it at once and returns 4S into seat 0's door
    return play(st, (0, {"type": "discard", "card": "2V"}), (2, {"type": "tra_cua", "card": "4S"}))


def test_own_door_the_discarder_may_only_chiu_u_the_card_returned_into_its_door() -> None:
    st = _seat_2_chius_the_discard(OWN_DOOR_PLAIN, auto_chiu=True)
    # Seat 0 holds three 4S, but the 4S replaced its own discard: no automatic plain chíu.
    assert [e["type"] for e in st.events] == ["tra_cua"]
    assert st.phase is Phase.OFFER and st.turn == 1
    assert st.exposed is not None and (st.exposed.card, st.exposed.door) == (K["4S"], 0)
    assert st.seats[0].hand[K["4S"]] == 3


@pytest.mark.parametrize("auto_chiu", ON_OFF)
def test_own_door_no_plain_chiu_with_either_auto_chiu(auto_chiu: bool) -> None:
    st = _seat_2_chius_the_discard(OWN_DOOR_PLAIN, auto_chiu)
    assert st.phase is Phase.OFFER and st.turn == 1 and st.seats[0].mat == ()
    # The returned card may still be eaten by the seat it is offered to.
    if st.seats[1].hand[K["4S"]]:
        assert Eat(1, K["4S"], K["4S"]) in legal_moves(st, 1)


@pytest.mark.parametrize("auto_chiu", ON_OFF)
def test_own_door_a_chiu_u_of_the_returned_card_is_allowed(auto_chiu: bool) -> None:
    st = _seat_2_chius_the_discard(OWN_DOOR_WINS, auto_chiu)
    if auto_chiu:  # the automatic chíu ù takes it: chì, as the card lay in its own door
        assert st.phase is Phase.DECLARE and st.win is not None
        assert (st.win.seat, st.win.source, st.win.by_chiu) == (0, "chiu_own_door", True)
    else:  # nothing automatic: the card is offered to seat 1
        assert st.phase is Phase.OFFER and st.turn == 1 and st.win is None


def test_own_door_the_engine_refuses_the_seat_eating_or_plainly_chiuing_it() -> None:
    # Not reachable in play (the card is offered to the next seat), but the engine and
    # legal_moves agree on the rule if the discarder were to face it.
    st = _seat_2_chius_the_discard(OWN_DOOR_PLAIN, auto_chiu=False)
    facing = replace(st, turn=0)
    assert not any(isinstance(m, Eat | Chiu) for m in legal_moves(facing, 0))
    for move in (Chiu(0, K["4S"]), Eat(0, K["4S"], K["4S"])):
        with pytest.raises(IllegalMove) as err:
            apply(facing, move)
        assert err.value.code == "only_chiu_u"


# --- a báo seat's ù (advanced mode, RULES.md §9, §10.5) ---------------------------------------


def test_bao_seat_u_is_listed_and_is_an_u_bao() -> None:
    st = start(
        {
            0: "2V 2V 3S 4N 5N 6S 7V 8N 9S CC 2S 3N 4S 5S 6V 7N 8S 9V 3V 5V",
            1: "2V 2V 4V 5V 6V 7V 8V 9V 2N 3N 4N 5N 6N 7N 8N 9N 2S 4S 6S",
        },
        mode=Mode.ADVANCED,
    )
    # seat 1 eats a 2V as a chắn and discards the other: đánh rồi ăn… it is báo
    st = play(
        st,
        (0, {"type": "discard", "card": "2V"}),
        (1, {"type": "eat", "card": "2V", "with": "2V"}),
        (1, {"type": "discard", "card": "2V"}),
    )
    for s in (2, 3, 0):
        st = play(st, (s, {"type": "draw"}), (s, {"type": "pass"}))
    assert st.seats[1].bao
    # legal_moves and apply agree: the u is listed, and it is an ù báo that ends the hand
    assert U(1) in legal_moves(st, 1)
    ended = apply(st, U(1))
    assert ended.ended and ended.win is None
    assert ended.outcome is not None and ended.outcome.to_dict() == {"result": "u_lao", "seat": 1}
    assert ended.seats[1].faults[-1].slug == "u_lao" and ended.seats[1].faults[-1].detail == "ù báo"
