"""Detecting the true cước of a win (RULES.md §6), independent of how the hand was played.

:class:`WinFacts` holds everything detection needs; :func:`facts_from_state` reads it from a hand
in the declare phase and the calculator builds it from JSON. :func:`detect_cuoc` applies every
subsumption of §6, so its result is exactly what a correct declaration (xướng đúng) contains.

"The 20 cards" of a win are the winner's hand, the winning card and every card on its mat. A chíu
is four cards that count as two chắn (two of the ten pairs), so hand + mat is always 19 cards and
the win 20: colours (Bạch định, Tám đỏ, Kính tứ chi) and sets (Tôm, Lèo) are counted over the
cards the winner holds and shows, as the seeds do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from games.rules.cards import CC, COPIES, KIND_OF, LEO, N_KINDS, RED, TOM, Counts, add
from games.rules.ruleset import (
    CUOC_SLUGS,
    DEFAULT_PRESET,
    NAMED_HANDS,
    PRESETS,
    Ruleset,
    build_ruleset,
)
from games.rules.scoring import score
from games.rules.shape import best_chan, is_bach_thu
from games.rules.state import HandState, MatGroup, SeatState, WinInfo

__all__ = [
    "BACH_THU_CUOC",
    "NAMED_HAND_RULES",
    "OWN_DOOR_SOURCES",
    "WIN_SOURCES",
    "WinFacts",
    "detect_cuoc",
    "facts_from_state",
    "ruleset_of",
    "tied_readings",
    "true_total",
    "win_facts",
]

# Where the winning card came from (the calculator's words; the engine uses all but the two
# that can only be a chíu ù: ``discard`` and ``returned``).
WIN_SOURCES: tuple[str, ...] = (
    "own_draw",
    "other_draw",
    "discard",
    "returned",
    "chiu",
    "chiu_own_door",
    "dealt",
)
# Chì: the winning card lay in the winner's own door (its own stock draw, or a card returned
# into its door by another seat's trả cửa and won by chíu ù). Never a discard.
OWN_DOOR_SOURCES = frozenset({"own_draw", "chiu_own_door"})

# Named hands: the eaten chắn they need on the mat and the card of the chì bạch thủ (§6).
NAMED_HAND_RULES: dict[str, tuple[tuple[int, ...], int]] = {
    "hoa_roi_cua_phat": ((KIND_OF["5V"],), KIND_OF["2V"]),
    "ca_loi_san_dinh": ((KIND_OF["5V"],), KIND_OF["8V"]),
    "ca_nhay_dau_thuyen": ((KIND_OF["5S"],), KIND_OF["8V"]),
    "chua_do_nat_hoa": ((KIND_OF["2V"],), KIND_OF["5V"]),
    "nha_lau_xe_hoi": ((KIND_OF["5V"], KIND_OF["4V"]), KIND_OF["2V"]),
    "ngu_ong_bat_ca": ((CC, KIND_OF["5S"]), KIND_OF["8V"]),
}
# The cước a bạch-thủ win is declared under (for ``bach_thu_must_be_declared``).
BACH_THU_CUOC = frozenset({"bach_thu", "bach_thu_chi", *NAMED_HANDS})


@dataclass(frozen=True, slots=True)
class WinFacts:
    """What a win is made of, as far as cước are concerned.

    ``hand`` is the winner's hand before the winning card (for Thiên ù the dealer's 20 and
    ``card`` None); ``by_chiu`` says the winner held three of ``card`` (a chíu ù, not on the mat);
    ``dealt`` is the winner's dealt hand when known (Thiên khai, Phá thiên need it).
    """

    hand: Counts
    mat: tuple[MatGroup, ...]
    card: int | None
    source: str
    by_chiu: bool = False
    first_draw: bool = False
    previous_winner: bool = False
    dealt: Counts | None = None

    @property
    def mat_chan(self) -> int:
        return sum(g.chan_count for g in self.mat)

    @property
    def chiu_count(self) -> int:
        """Chíus laid on the mat this hand (a chíu ù never reaches the mat)."""
        return sum(1 for g in self.mat if g.kind == "chiu")

    def winning_cards(self) -> Counts:
        """Counts of the 20 cards: hand + winning card + every mat card."""
        c = list(self.hand)
        if self.card is not None:
            c[self.card] += 1
        for g in self.mat:
            for k in g.cards:
                c[k] += 1
        return tuple(c)

    def eaten_chan(self, kind: int) -> int:
        """Eaten chắn of ``kind`` on the mat; a chíu is not an eaten chắn."""
        return sum(1 for g in self.mat if g.kind == "chan" and g.cards[0] == kind)

    def has_chan_on_mat(self, kind: int) -> bool:
        """A chắn of ``kind`` on the mat, eaten or as part of a chíu (named hands, seed 003)."""
        return any(g.kind in ("chan", "chiu") and g.cards[0] == kind for g in self.mat)


def ruleset_of(ruleset: Any) -> Ruleset:
    """The ruleset itself, the ruleset of a spec mapping, or the default preset for None."""
    if ruleset is None:
        return PRESETS[DEFAULT_PRESET]
    if isinstance(ruleset, Mapping):
        return build_ruleset(ruleset)
    return ruleset


def win_facts(win: WinInfo, seat: SeatState, previous_winner: bool) -> WinFacts:
    """The facts of ``win`` by the seat ``seat`` (as it was before the winning card)."""
    return WinFacts(
        hand=seat.hand,
        mat=seat.mat,
        card=win.card,
        source=win.source,
        by_chiu=win.by_chiu,
        first_draw=win.first_draw,
        previous_winner=previous_winner,
        dealt=seat.dealt,
    )


def facts_from_state(state: HandState) -> WinFacts:
    """The facts of the win of a hand in the declare phase (``state.win`` set)."""
    win = state.win
    if win is None:
        raise ValueError("the hand has no win")
    return win_facts(win, state.seats[win.seat], state.config.previous_winner == win.seat)


def _is_u_bon(facts: WinFacts) -> bool:
    """The winning card is the 4th copy of a kind with an eaten chắn on the mat, the 3rd in hand.

    A chíu ù is never ù bòn: the winner then holds three copies, so no chắn of it is on the mat.
    """
    card = facts.card
    return (
        card is not None
        and not facts.by_chiu
        and facts.hand[card] == 1
        and facts.eaten_chan(card) == 1
    )


def _named_hands(ruleset: Ruleset, facts: WinFacts, chi_bach_thu: bool) -> list[str]:
    """The enabled named hands that hold, the best first: highest (điểm, dịch), then the one
    needing more chắn (nhà lầu xe hơi over hoa rơi cửa phật, ngư ông bắt cá over cá nhảy đầu
    thuyền), then the rules' order; the others in the rules' order."""
    if not chi_bach_thu:
        return []
    held = [
        slug
        for slug in NAMED_HANDS
        if ruleset.cuoc[slug].enabled
        and facts.card == NAMED_HAND_RULES[slug][1]
        and all(facts.has_chan_on_mat(k) for k in NAMED_HAND_RULES[slug][0])
    ]
    if not held:
        return []
    best = max(held, key=lambda s: (*_points(ruleset, s), len(NAMED_HAND_RULES[s][0])))
    return [best, *(slug for slug in held if slug != best)]


def _points(ruleset: Ruleset, slug: str) -> tuple[int, int]:
    """A cước's (điểm, dịch) at the table: what a tie of named hands is judged on (§6)."""
    return ruleset.cuoc[slug].diem, ruleset.cuoc[slug].dich


def detect_cuoc(ruleset: Ruleset | None, facts: WinFacts) -> dict[str, int]:
    """The true cước of a win (slug → count, in declaration order) under ``ruleset``.

    Cước the ruleset turns off are not detected, except that a chíu ù counts as a chíu (``chiu``)
    and an ù bòn as an ăn bòn (``an_bon``) where ``chiu_u`` / ``u_bon`` are off. ``xuong`` only
    when nothing else holds.
    """
    rs = ruleset_of(ruleset)
    on = {slug: rs.cuoc[slug].enabled for slug in CUOC_SLUGS}
    found: dict[str, int] = {}
    twenty = facts.winning_cards()
    card = facts.card

    found["thong"] = int(facts.previous_winner)
    chi = facts.source in OWN_DOOR_SOURCES and card is not None
    found["thien_u"] = int(facts.source == "dealt")
    found["dia_u"] = int(facts.first_draw and facts.source != "dealt")

    chiu = facts.chiu_count
    if facts.by_chiu:
        if on["chiu_u"]:
            found["chiu_u"] = 1
        else:
            chiu += 1
    an_bon = sum(1 for k in range(N_KINDS) if facts.eaten_chan(k) >= 2)
    if _is_u_bon(facts):
        if on["u_bon"]:
            found["u_bon"] = 1
        else:
            an_bon += 1

    bach_thu = is_bach_thu(facts.hand, facts.mat_chan, card)
    named = next(iter(_named_hands(rs, facts, chi and bach_thu)), None)
    if named is not None:
        found[named] = 1  # replaces chì and bạch thủ
    else:
        found["chi"] = int(chi)
        if bach_thu:
            found["bach_thu_chi" if card == CC else "bach_thu"] = 1

    in_hand = facts.hand if card is None else add(facts.hand, card)
    found["thap_thanh"] = int(best_chan(in_hand) + facts.mat_chan == 10)
    red = sum(twenty[k] for k in RED)
    found["bach_dinh"] = int(red == 0)
    found["tam_do"] = int(red == 8)
    found["kinh_tu_chi"] = int(twenty[CC] == COPIES and red == COPIES)
    found["tom"] = min(twenty[k] for k in TOM)
    found["leo"] = min(twenty[k] for k in LEO)
    if facts.dealt is not None:
        dealt = facts.dealt
        found["thien_khai"] = sum(
            1 for k in range(N_KINDS) if dealt[k] == COPIES and twenty[k] == COPIES
        )
        found["pha_thien"] = int(all(n < 2 for n in dealt))
    found["chiu"] = chiu
    found["an_bon"] = an_bon

    cuoc = {slug: found.get(slug, 0) for slug in CUOC_SLUGS}
    cuoc = {slug: n for slug, n in cuoc.items() if n and on[slug]}
    if not cuoc:
        cuoc = {"xuong": 1}
    return cuoc


def tied_readings(ruleset: Ruleset | None, facts: WinFacts) -> tuple[dict[str, int], ...]:
    """The other readings of a win that are as right as its true cước (§6: where two named
    hands tie in (điểm, dịch), declaring either one is đúng): the true cước with its named hand
    replaced by each other named hand that holds with the same điểm and dịch, in the rules'
    order; empty when there is no such tie.

    Every named hand earns the same gà (the ``named_hands`` pattern) and replaces the same
    ``chi`` and ``bach_thu``, so each reading scores exactly what the true cước scores."""
    rs = ruleset_of(ruleset)
    card = facts.card
    chi = facts.source in OWN_DOOR_SOURCES and card is not None
    named = _named_hands(rs, facts, chi and is_bach_thu(facts.hand, facts.mat_chan, card))
    if len(named) < 2:
        return ()
    best, others = named[0], named[1:]
    tied = [slug for slug in others if _points(rs, slug) == _points(rs, best)]
    if not tied:
        return ()
    true = detect_cuoc(rs, facts)
    readings = []
    for alt in tied:
        swapped = {alt if slug == best else slug: n for slug, n in true.items()}
        readings.append({slug: swapped[slug] for slug in CUOC_SLUGS if slug in swapped})
    return tuple(readings)


def true_total(ruleset: Ruleset, facts: WinFacts) -> int:
    """The total score (base + gà) of the cước this win truly holds."""
    return score(ruleset, detect_cuoc(ruleset, facts)).total
