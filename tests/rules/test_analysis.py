"""Basic-mode helpers ("Find Trash" / "Quick Select"): grouping, trash order, waiting set."""

from __future__ import annotations

from dataclasses import replace

from games.rules import engine
from games.rules.analysis import analyse, analysis_for
from games.rules.cards import CC, KIND_OF, counts_of
from games.rules.deck import CANONICAL_DECK
from games.rules.moves import Discard
from games.rules.state import (
    SRC_DISCARD,
    Declined,
    Exposed,
    HandConfig,
    HandState,
    MatGroup,
    Mode,
    Phase,
    SeatState,
)

BACH_THU_9V = "2V 2V 3V 3V 4V 4V 5V 5V 6V 6V 2N 2S 3N 3S 4N 4S 5N 5S 9V"
CHO_CHI_RONG = "2V 2V 3V 3V 4V 4V 5V 5V 6V 6V 7V 7V 2N 2S 3N 3S 4N 4S CC"


def K(code: str) -> int:
    return KIND_OF[code]


def H(codes: str) -> tuple[int, ...]:
    return counts_of(K(c) for c in codes.split())


def mat_group(kind: str, taken: str, with_: str) -> MatGroup:
    return MatGroup(kind, (K(taken), K(with_)), K(taken), SRC_DISCARD, 1)


def seated(mode: Mode, seat_state: SeatState, phase: Phase, card: str | None = None) -> HandState:
    base = engine.new_hand(HandConfig(n_seats=2, mode=mode), CANONICAL_DECK, 0)
    empty = SeatState(hand=(0,) * 25, dealt=(0,) * 25)
    exposed: Exposed | None = None
    doors: tuple[tuple[int, ...], ...] = ((), ())
    if card is not None:
        exposed, doors = Exposed(K(card), 1, SRC_DISCARD, 1), ((), (K(card),))
    return replace(
        base, seats=(seat_state, empty), phase=phase, turn=0, exposed=exposed, doors=doors
    )


def test_grouping_into_chan_ca_ba_dau_que() -> None:
    a = analyse(H("9V 9V 9N 3V 3N 3S 4N 4S 2V CC 6S"))
    assert a["chan"] == [["9V", "9V"]]
    assert a["ca"] == [["4N", "4S"]]
    assert a["ba_dau"] == [["3V", "3N", "3S"]]
    assert a["que"] == ["2V", "6S", "9N", "CC"]
    assert (a["chan_count"], a["ca_count"]) == (1, 1)


def test_counts_include_the_mat() -> None:
    mat = (mat_group("chan", "7V", "7V"), mat_group("ca", "8V", "8N"))
    a = analyse(H("9V 9V 2N 2S 5S"), mat)
    assert (a["chan_count"], a["ca_count"]) == (2, 2)


def test_trash_que_first_then_cards_that_keep_the_most_pairs() -> None:
    a = analyse(H("9V 9V 9N 4N 4S 2V"))
    # què 2V and 9N first; then 9V (9V 9N stay a cạ: two pairs kept) before 4N (one pair kept).
    assert a["trash"] == ["2V", "9N", "9V", "4N", "4S"]
    assert a["quick_select"] == "2V"


def test_trash_equal_pairs_keeps_the_chan() -> None:
    # Dropping 4N or 9V both keep one pair; dropping 4N keeps the chắn.
    a = analyse(H("9V 9V 4N 4S 2V 7S"))
    assert a["trash"].index("4N") < a["trash"].index("9V")


def test_trash_with_twenty_cards_prefers_a_discard_that_leaves_it_waiting() -> None:
    # 5 chắn + 4 cạ + 9V + 7S: dropping either què leaves a bạch thủ wait.
    a = analyse(H(BACH_THU_9V + " 7S"))
    assert set(a["trash"][:2]) == {"7S", "9V"}
    assert a["waiting"] == []  # 20 cards: not waiting until it discards


def test_waiting_set_of_a_19_set() -> None:
    assert analyse(H(BACH_THU_9V))["waiting"] == ["9V"]
    assert analyse(H("2V 2V 3V 3V 4V 4V 5V 5V 6V 6V 2N 2S 3N 3S 4N 4S 9V 9N 9S"))["waiting"] == [
        "9V",
        "9N",
        "9S",
    ]


def test_waiting_set_counts_the_mat_and_excludes_exhausted_kinds() -> None:
    # 4 chắn on the mat (one of them 9V) + 1 chắn, 4 cạ and a lone 9V in hand: bạch thủ 9V.
    mat = tuple(mat_group("chan", k, k) for k in ("2V", "3V", "4V", "9V"))
    assert analyse(H("6V 6V 2N 2S 3N 3S 4N 4S 5N 5S 9V"), mat)["waiting"] == ["9V"]
    # Bạch thủ on 9V with the fourth 9V already on its own mat (cạ 9V 9N): no card left to win.
    hand = H("9V 9V 9V 2V 2V 3V 3V 4V 4V 5V 5V 2N 2S 3N 3S 4N 4S")
    assert analyse(hand, (mat_group("ca", "9N", "9V"),))["waiting"] == []


def test_never_suggests_a_discard_that_is_a_fault_from_hand_and_mat() -> None:
    mat = (mat_group("ca", "4V", "4N"), mat_group("chan", "8V", "8V"))
    a = analyse(H("8V 4S 2V 3N 3S"), mat)
    assert a["blocked"] == {"8V": "an_roi_danh", "4S": "an_ca_danh_cung_hang"}
    assert set(a["trash"]) == {"2V", "3N", "3S"}


def test_cho_chi_rong_suggests_the_chi_chi() -> None:
    a = analyse(H(CHO_CHI_RONG + " 9S"))
    assert a["quick_select"] == "CC"
    assert a["blocked"] == {"9S": "cho_chi_rong"}


def test_analysis_for_is_none_in_advanced_mode() -> None:
    st = SeatState(hand=H("9V 2V"), dealt=H("9V 2V"))
    assert analysis_for(seated(Mode.ADVANCED, st, Phase.DISCARD), 0) is None
    assert analysis_for(seated(Mode.BASIC, st, Phase.DISCARD), 0) is not None


def test_analysis_for_uses_the_seat_history() -> None:
    st = SeatState(
        hand=H("9V 2V 3N 5S"),
        dealt=H("9V 2V 3N 5S"),
        declined=(Declined(K("9V"), 1, 0),),
        discarded=(K("3N"),),
    )
    a = analysis_for(seated(Mode.BASIC, st, Phase.DISCARD), 0)
    assert a is not None
    assert a["blocked"] == {"9V": "bo_roi_danh", "3N": "danh_doi_chan"}
    assert set(a["trash"]) == {"2V", "5S"}


def test_analysis_for_quick_select_is_a_legal_discard() -> None:
    st = SeatState(hand=H("9V 9V 2V 3N 5S 5N"), dealt=H("9V 9V 2V 3N 5S 5N"))
    state = seated(Mode.BASIC, st, Phase.DISCARD)
    a = analysis_for(state, 0)
    assert a is not None
    assert Discard(0, K(a["quick_select"])) in engine.legal_moves(state, 0)


def test_analysis_for_forced_when_every_discard_is_a_fault() -> None:
    st = SeatState(
        hand=H("9V 2V"),
        dealt=H("9V 2V"),
        declined=(Declined(K("9V"), 1, 0), Declined(K("2V"), 1, 0)),
    )
    a = analysis_for(seated(Mode.BASIC, st, Phase.DISCARD), 0)
    assert a is not None
    assert a["forced"] and set(a["trash"]) == {"9V", "2V"}


def test_analysis_for_lists_clean_ways_to_eat_the_offered_card() -> None:
    # Offered 9V holding 9V and 9N: the chắn is clean, the cạ is treo tranh.
    st = SeatState(hand=H("9V 9N 2S 3S"), dealt=H("9V 9N 2S 3S"))
    a = analysis_for(seated(Mode.BASIC, st, Phase.OFFER, card="9V"), 0)
    assert a is not None and a["eat_with"] == ["9V"]
    a = analysis_for(seated(Mode.BASIC, st, Phase.DISCARD), 0)
    assert a is not None and a["eat_with"] == []


def test_chi_chi_is_a_que_never_a_ca() -> None:
    a = analyse(H("CC 9V 9N"))
    assert a["que"] == ["CC"] and a["ca"] == [["9V", "9N"]]
    assert K("CC") == CC


def test_kept_analyses_equal_fresh_ones_and_callers_cannot_change_them() -> None:
    # Analyses are kept per SeatState value (analysis._analysed_kept): along played hands, each
    # seat's kept answer equals one computed afresh, and a caller changing its copy (as
    # analysis_for does, adding eat_with) changes neither the kept answer nor the next copy.
    import random

    from games.rules import analysis
    from games.rules.bots import HeuristicBot
    from games.rules.deck import first_dealer, shuffle

    analysis._analysed_kept.cache_clear()
    hits = 0
    for seed in (b"a", b"b", b"c"):
        bot = HeuristicBot(random.Random(seed))
        state = engine.new_hand(HandConfig(n_seats=4), shuffle(seed), first_dealer(seed, 4))
        while state.phase is not Phase.ENDED:
            for seat in range(4):
                st = state.seats[seat]
                before = analysis._analysed_kept.cache_info().hits
                got = analysis._analysis(st)
                hits += analysis._analysed_kept.cache_info().hits - before
                assert got == analysis._analysed(st)
                got["trash"].append("XX")
                got["blocked"]["XX"] = "x"
                if got["chan"]:
                    got["chan"][0].append("XX")
                assert analysis._analysis(st) == analysis._analysed(st)
            state = engine.apply(state, bot.choose(state, state.turn))
    assert hits > 0  # the seats a move left alone were found, not recomputed
