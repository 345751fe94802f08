"""Faults (lỗi, RULES.md §9): which faults a move commits, how each is judged, and its messages.

``faults_of(state, move)`` is called by ``engine.apply`` before every move: basic mode refuses a
move that has faults (the first slug is the error code), advanced mode records them on the seat.
Every check reads the seat's history kept in :class:`~games.rules.state.SeatState`; it relies on
one fact of the game: **a hand never grows** (drawn cards go to the door, eaten pairs to the mat),
so a card held now was held at every earlier decline or discard.

Decisions where RULES.md §9 or the seeds leave room (a seasoned player's reading):

* **Treo tranh names the eat.** Eating ``c`` as a cạ while holding ``c`` is ``treo_tranh``; the
  other cạ-shape faults of the same eat (``an_chon_ca``, ``co_chan_cau_ca``, ``an_ca_chuyen_cho``)
  are then not added. Seed 000 §IV.4: "đang chờ ù ba đầu cửu, lại lấy cửu vạn ăn cửu văn thì là
  phạm lỗi treo tranh" — the eat is judged as treo tranh (no-pay), not as đền làng.
* **``bo_u`` in basic mode is never reported.** Basic mode refuses faulty moves, so reporting it
  would forbid a beginner's later win because of an earlier missed one; a beginner table just lets
  the later win stand. In advanced mode it is reported on the ``u`` move and on a ``chiu`` that
  wins, when the seat has ``missed_win``. Wins the engine makes out of turn (auto ù, auto chíu ù)
  are not moves: :func:`winner_faults` adds ``bo_u`` for them at settlement.
* **``an_thuong_khi_chiu``** only when chíu was actually possible: three in hand and a card left
  to discard (or the chíu wins) — the engine's own chíu condition.
* **``an_chon_ca``**: the partner and the third suit of the rank are both held an odd number of
  times (seed 000 §IV.3: a kind held 2 or 4 times is in a chắn, so 1 cửu vạn + 2 cửu văn is no
  cạ). **``co_chan_cau_ca``**: the partner is held 2 or 4 times (3 = a chắn and a lone card: the
  lone one may eat).
* **``an_ca_chuyen_cho``**: W(S) of the 19-set before the eat is not empty, by shape alone (kinds
  whose four copies are all on this seat's hand and mat are excluded; cards visible elsewhere are
  not). Eating the winning card of one's own draw as a cạ is both this fault and a bỏ ù.
* **``cho_chi_rong``** on a discard or trả cửa that leaves a lone ``CC`` with every other hand card
  paired and ≥ 6 chắn (hand + mat), when discarding the ``CC`` instead would have been clean
  (seed 000 §IV.6 "nếu có cơ hội đánh được"); discarding one ``CC`` of a chắn into that shape is
  the fault too. Seed 004 "Lưu ý" 1: eating ``CC`` with the lone ``CC`` of a chờ-chi-rộng hand
  ("ăn chi chi vào để chờ ù cây khác") is also ``cho_chi_rong`` (đền làng).
* **``bo_ca_an_ca``**: a declined card of rank ``r`` while holding another suit of ``r``, then a
  cạ eaten in ``r`` with a partner of a different kind than the declined one (using the declined
  kind itself is ``bo_chan_an_ca``; seed 000 §IV.7–10 example).
* **``xe_ca_an_ca``**: eating a cạ in rank ``r`` after having discarded (or returned) any card of
  rank ``r``. When the partner's kind differs from the discarded one the seat held both then — the
  torn cạ of seed 000 §IV.12; when it is the same kind it is seed 004 B.13 "xé chắn ăn cạ (đã đánh
  1 cây rồi ăn cây cùng hàng khác để thành cạ)". Holdings at discard time need not be stored.
* **``danh_ca_an_ca`` / ``an_ca_danh_ca``**: two discarded cards of one rank in different suits
  (the same kind twice is ``danh_doi_chan``). Trả cửa counts as a discard everywhere.
* **Returned cards** (seed 004 "Lưu ý" 6): a card returned into one's own door after one's own
  discard was chíu'd is never offered to the seat, so it is not "declined" and discarding that
  kind is clean; every other card of the cửa trên or the own door was offered and declined.
* **Chíu is never a fault** (except ``bo_u`` when it wins): it is optional, often automatic, and
  the sources name no fault for it.
* **Draw and pass commit no fault**: declining is recorded, the faults come when the seat later
  eats or discards against it. ``u_lao`` stays with the engine (an invalid ``u``: refused with
  that slug in basic mode like every other fault, ù láo in advanced mode), ``xuong_sai`` with
  the declaration.
* **A báo seat commits no further faults**: the server plays it, and with ``bao_payer = "last"``
  a fault recorded by its auto-play would wrongly make it the last to fault.
* **Forced discards in basic mode**: when every card the seat could discard (or return) is a fault,
  basic mode accepts any of them, so a beginner is never stuck. Advanced mode records the fault
  (at a real table that seat is báo: it should not have eaten into that position).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from games.rules.cards import CC, CODES, N_KINDS, can_pair, rank, rank_kinds
from games.rules.errors import gettext_noop
from games.rules.moves import Chiu, Discard, Eat, TraCua, U
from games.rules.shape import best_chan, waiting_set
from games.rules.state import Fault, Mode, Phase
from games.rules.wins import chiu_possible, chiu_wins, only_chiu_u, u_wins

if TYPE_CHECKING:
    from games.rules.moves import Move
    from games.rules.state import HandState, SeatState


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """How a fault is judged: ``visible`` faults make the seat báo; ``category`` drives settlement.

    Categories: ``no_pay`` (a winner with it is paid nothing), ``den_lang`` (a winner with it pays
    every other seat), ``visible`` (báo: pays for the village), ``u_lao`` (ù láo / ù báo), and
    ``xuong_sai`` (a wrong declaration, RULES.md §8, §10.4).
    """

    visible: bool
    category: str


NO_PAY, DEN_LANG, VISIBLE, U_LAO, XUONG_SAI = "no_pay", "den_lang", "visible", "u_lao", "xuong_sai"

FAULTS: dict[str, FaultSpec] = {
    "treo_tranh": FaultSpec(False, NO_PAY),
    "an_thuong_khi_chiu": FaultSpec(False, NO_PAY),
    "bo_u": FaultSpec(False, NO_PAY),
    "an_chon_ca": FaultSpec(False, DEN_LANG),
    "co_chan_cau_ca": FaultSpec(False, DEN_LANG),
    "an_ca_chuyen_cho": FaultSpec(False, DEN_LANG),
    "cho_chi_rong": FaultSpec(False, DEN_LANG),
    "bo_chan_an_chan": FaultSpec(True, VISIBLE),
    "bo_chan_an_ca": FaultSpec(True, VISIBLE),
    "bo_ca_an_ca": FaultSpec(True, VISIBLE),
    "bo_roi_danh": FaultSpec(True, VISIBLE),
    "danh_ca_an_ca": FaultSpec(True, VISIBLE),
    "xe_ca_an_ca": FaultSpec(True, VISIBLE),
    "danh_roi_an": FaultSpec(True, VISIBLE),
    "danh_doi_chan": FaultSpec(True, VISIBLE),
    "an_roi_danh": FaultSpec(True, VISIBLE),
    "an_ca_an_chan_cung_hang": FaultSpec(True, VISIBLE),
    "an_ca_danh_ca": FaultSpec(True, VISIBLE),
    "an_ca_danh_cung_hang": FaultSpec(True, VISIBLE),
    "u_lao": FaultSpec(True, U_LAO),
    "xuong_sai": FaultSpec(False, XUONG_SAI),
}
_ORDER = {slug: i for i, slug in enumerate(FAULTS)}

MESSAGES: dict[str, str] = {
    "treo_tranh": gettext_noop(
        "Treo tranh: you hold this card's kind, so you must eat it as a chắn, not a cạ."
    ),
    "an_thuong_khi_chiu": gettext_noop(
        "You hold three of this card: you must chíu it, not eat it normally."
    ),
    "bo_u": gettext_noop("Bỏ ù: you passed over a card you could have won on, then won later."),
    "an_chon_ca": gettext_noop(
        "Ăn chọn cạ: this card is part of a cạ in your hand; do not use it to eat a cạ."
    ),
    "co_chan_cau_ca": gettext_noop(
        "Có chắn cấu cạ: this card belongs to a chắn in your hand; do not break it to eat a cạ."
    ),
    "an_ca_chuyen_cho": gettext_noop(
        "Ăn cạ chuyển chờ: your hand is waiting to win, so you may only eat a chắn."
    ),
    "cho_chi_rong": gettext_noop(
        "Chờ chi rộng: with 6 or more chắn a lone Chi Chi can never win; discard the Chi Chi."
    ),
    "bo_chan_an_chan": gettext_noop(
        "Bỏ chắn ăn chắn: you declined this card while holding its pair; you may not eat it now."
    ),
    "bo_chan_an_ca": gettext_noop(
        "Bỏ chắn ăn cạ: you declined a card of this kind as a chắn; do not use it to eat a cạ."
    ),
    "bo_ca_an_ca": gettext_noop(
        "Bỏ cạ ăn cạ: you declined a cạ in this rank earlier; you may only eat a chắn in it."
    ),
    "bo_roi_danh": gettext_noop(
        "Bỏ rồi đánh: you declined this card earlier, so you may not discard it."
    ),
    "danh_ca_an_ca": gettext_noop(
        "Đánh cạ ăn cạ: you discarded a whole cạ; from now on you may only eat a chắn."
    ),
    "xe_ca_an_ca": gettext_noop(
        "Xé cạ ăn cạ: you discarded a card of this rank; you may not eat a cạ in it."
    ),
    "danh_roi_an": gettext_noop(
        "Đánh rồi ăn: you discarded this card earlier, so you may not eat it."
    ),
    "danh_doi_chan": gettext_noop(
        "Đánh đôi chắn: you already discarded this card; do not discard both cards of a chắn."
    ),
    "an_roi_danh": gettext_noop("Ăn rồi đánh: this card is on your mat; you may not discard it."),
    "an_ca_an_chan_cung_hang": gettext_noop(
        "Ăn cạ ăn chắn cùng hàng: you ate a cạ in this rank; you may not eat a chắn in it."
    ),
    "an_ca_danh_ca": gettext_noop(
        "Ăn cạ đánh cạ: you ate a cạ, so you may not discard a second card of this rank."
    ),
    "an_ca_danh_cung_hang": gettext_noop(
        "Ăn cạ đánh cùng hàng: you ate a cạ in this rank; you may not discard a card of it."
    ),
    "u_lao": gettext_noop("Ù láo: this hand does not win (or you are báo and may not win)."),
    "xuong_sai": gettext_noop("Xướng sai: the declaration names a cước the hand does not have."),
}


def message(slug: str) -> str:
    """The English message template of a fault (translated by the Django layer)."""
    return MESSAGES.get(slug, slug)


# --------------------------------------------------------------------------- the check


def faults_of(state: HandState, move: Move) -> list[Fault]:
    """The faults ``move`` would commit in ``state`` (empty when the move is clean).

    A move the engine will refuse anyway (card not in hand, not on offer, not a pair …) has no
    faults here, so the engine reports the real reason.
    """
    if state.phase is Phase.ENDED or move.seat != state.turn:
        return []
    st = state.seats[move.seat]
    if st.bao:
        return []
    basic = state.config.mode is not Mode.ADVANCED
    detail = ""
    slugs: list[str] = []
    if isinstance(move, Eat):
        slugs = _eat_faults(state, st, move.card, move.with_)
        detail = f"{CODES[move.card]}+{CODES[move.with_]}"
    elif isinstance(move, Discard | TraCua):
        if st.hand[move.card] and state.phase in _DISCARD_PHASES[type(move)]:
            seen = discard_history(st)
            slugs = discard_faults(st, move.card, seen)
            if slugs and basic and not clean_discards(st, seen):
                slugs = []  # forced: every card it could discard is a fault (basic mode)
        detail = CODES[move.card]
    elif isinstance(move, U | Chiu) and not basic and st.missed_win and _wins_now(state, st, move):
        slugs = ["bo_u"]
    return [Fault(s, FAULTS[s].visible, state.n_moves, detail) for s in _ordered(slugs)]


_DISCARD_PHASES = {
    Discard: (Phase.DISCARD, Phase.DEALER_START),
    TraCua: (Phase.TRA_CUA,),
}


def _ordered(slugs: Iterable[str]) -> list[str]:
    return sorted(set(slugs), key=_ORDER.__getitem__)


def _held(st: SeatState) -> list[int]:
    held = list(st.hand)
    for g in st.mat:
        for k in g.cards:
            held[k] += 1
    return held


def _eat_faults(state: HandState, st: SeatState, c: int, p: int) -> list[str]:
    ex = state.exposed
    h = st.hand
    if state.phase not in (Phase.OFFER, Phase.AFTER_DRAW) or ex is None or ex.card != c:
        return []
    if only_chiu_u(ex, state.turn):
        return []  # the engine refuses this eat (RULES.md §4)
    if not h[p] or sum(h) < 2:
        return []
    pair = can_pair(c, p)
    if pair is None:
        return []
    out: list[str] = []
    chan = pair == "chan"
    r = rank(c)
    if chiu_possible(st, c):
        out.append("an_thuong_khi_chiu")
    if not chan:
        if h[c]:
            out.append("treo_tranh")
        else:
            third = next(k for k in rank_kinds(r) if k not in (c, p))
            if h[p] % 2 and h[third] % 2:
                out.append("an_chon_ca")
            if h[p] in (2, 4):
                out.append("co_chan_cau_ca")
            if waiting_set(h, st.mat_chan, _held(st)):
                out.append("an_ca_chuyen_cho")
    if chan and c == CC and _cho_chi_rong_shape(h, st.mat_chan):
        out.append("cho_chi_rong")  # seed 004 "Lưu ý" 1: ăn chi chi để chờ ù cây khác
    # B. cards the seat declined
    if chan and any(d.card == c and d.held_same for d in st.declined):
        out.append("bo_chan_an_chan")
    if not chan:
        if any(d.card == p and d.held_same for d in st.declined):
            out.append("bo_chan_an_ca")
        if any(
            d.card != CC and d.card != p and rank(d.card) == r and d.held_other_suits
            for d in st.declined
        ):
            out.append("bo_ca_an_ca")
    # C. cards the seat discarded
    if not chan:
        if _discarded_a_ca(st.discarded):
            out.append("danh_ca_an_ca")
        if any(d != CC and rank(d) == r for d in st.discarded):
            out.append("xe_ca_an_ca")
    if c in st.discarded:
        out.append("danh_roi_an")
    # D. cards the seat ate
    if chan and c != CC and r in _ca_ranks(st):
        out.append("an_ca_an_chan_cung_hang")
    return out


def discard_faults(st: SeatState, kind: int, history: DiscardHistory | None = None) -> list[str]:
    """The fault slugs of discarding (or returning) ``kind`` from ``st``'s hand, in table order.
    ``history``: :func:`discard_history` of ``st``, when the caller judges many kinds of it."""
    seen = history if history is not None else discard_history(st)
    out = _history_discard_faults(seen, kind)
    if _leaves_cho_chi_rong(st, seen, kind):
        out.append("cho_chi_rong")
    return _ordered(out)


def clean_discards(st: SeatState, history: DiscardHistory | None = None) -> list[int]:
    """The kinds in ``st``'s hand it may discard without a fault (``history``: as for
    :func:`discard_faults`)."""
    seen = history if history is not None else discard_history(st)
    return [k for k in range(N_KINDS) if st.hand[k] and not discard_faults(st, k, seen)]


class DiscardHistory(NamedTuple):
    """What a seat's history says about its discards, gathered once to judge each kind of its
    hand (a view judges them all on every move: the scans of the seat's declined, discarded and
    eaten cards were most of its analysis)."""

    declined: frozenset[int]  # kinds it declined to eat
    discarded: frozenset[int]
    eaten: frozenset[int]  # kinds on its mat
    ca_ranks: frozenset[int]  # ranks of the cạ on its mat
    discarded_by_rank: dict[int, frozenset[int]]  # rank → the kinds (not Chi Chi) discarded
    mat_chan: int


def discard_history(st: SeatState) -> DiscardHistory:
    """:class:`DiscardHistory` of ``st``."""
    by_rank: dict[int, set[int]] = {}
    for d in st.discarded:
        if d != CC:
            by_rank.setdefault(rank(d), set()).add(d)
    return DiscardHistory(
        declined=frozenset(d.card for d in st.declined),
        discarded=frozenset(st.discarded),
        eaten=frozenset(k for g in st.mat for k in g.cards),
        ca_ranks=frozenset(_ca_ranks(st)),
        discarded_by_rank={r: frozenset(kinds) for r, kinds in by_rank.items()},
        mat_chan=st.mat_chan,
    )


def _history_discard_faults(seen: DiscardHistory, kind: int) -> list[str]:
    out: list[str] = []
    if kind in seen.declined:
        out.append("bo_roi_danh")
    if kind in seen.discarded:
        out.append("danh_doi_chan")
    if kind in seen.eaten:
        out.append("an_roi_danh")
    if kind != CC:
        r = rank(kind)
        if seen.ca_ranks and any(d != kind for d in seen.discarded_by_rank.get(r, ())):
            out.append("an_ca_danh_ca")
        if r in seen.ca_ranks:
            out.append("an_ca_danh_cung_hang")
    return out


def _leaves_cho_chi_rong(st: SeatState, seen: DiscardHistory, kind: int) -> bool:
    if (st.hand[CC] - (kind == CC)) % 2 == 0:
        return False  # no lone Chi Chi left (_cho_chi_rong_shape), without the hand's copy
    h = list(st.hand)
    h[kind] -= 1
    if not _cho_chi_rong_shape(h, seen.mat_chan):
        return False
    # Discarding the Chi Chi itself into this shape is the fault; otherwise only when the Chi
    # Chi could have been discarded cleanly instead ("nếu có cơ hội đánh được", seed 000 §IV.6).
    return kind == CC or not _history_discard_faults(seen, CC)


def _cho_chi_rong_shape(hand: Iterable[int], mat_chan: int) -> bool:
    """A lone Chi Chi, every other hand card paired, and at least 6 chắn: it can never win."""
    h = list(hand)
    if h[CC] % 2 == 0:
        return False
    h[CC] -= 1
    b = best_chan(h)
    return b >= 0 and b + mat_chan >= 6


def _ca_ranks(st: SeatState) -> set[int]:
    return {rank(g.cards[0]) for g in st.mat if g.kind == "ca"}


def _discarded_a_ca(discarded: Iterable[int]) -> bool:
    seen: dict[int, int] = {}
    for k in discarded:
        if k == CC:
            continue
        r = rank(k)
        if r in seen and seen[r] != k:
            return True
        seen.setdefault(r, k)
    return False


def _wins_now(state: HandState, st: SeatState, move: U | Chiu) -> bool:
    """Whether this ``u`` or ``chiu`` is a real win, by the engine's own predicates."""
    ex = state.exposed
    if state.phase not in (Phase.OFFER, Phase.AFTER_DRAW) or ex is None:
        return False
    if isinstance(move, Chiu):
        return move.card == ex.card and chiu_wins(st, ex.card)
    return u_wins(state.phase, ex, state.n_seats, st, move.seat)


# --------------------------------------------------------------------------- settlement


def winner_faults(state: HandState) -> tuple[Fault, ...]:
    """The faults the winner is judged on: its recorded faults, plus ``bo_u`` (advanced mode) if
    it had missed a win and won out of turn (auto ù / auto chíu ù are not moves, so no check ran).

    A win on the seat's own draw (``own_draw``) is always its own move, already checked before
    the move; the engine may set ``missed_win`` during that very move (a chíu ù on its own draw),
    which must not count.
    """
    win = state.win
    if win is None:
        return ()
    st = state.seats[win.seat]
    found = st.faults
    advanced = state.config.mode is Mode.ADVANCED
    checked = win.source == "own_draw" or any(f.slug == "bo_u" for f in found)
    if advanced and st.missed_win and not checked:
        found = found + (Fault("bo_u", False, max(state.n_moves - 1, 0), "out of turn"),)
    return found


def hidden_penalty(faults: Iterable[Fault]) -> str | None:
    """``den_lang`` if any hidden đền-làng fault, else ``no_pay`` if any no-pay fault, else None.

    Đền làng wins over no-pay when a winner has both (seed 004: "ù đúng hoặc sai đều bị đền làng").
    """
    cats = {FAULTS[f.slug].category for f in faults if f.slug in FAULTS}
    if DEN_LANG in cats:
        return DEN_LANG
    if NO_PAY in cats:
        return NO_PAY
    return None
