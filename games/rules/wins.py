"""When a seat may really win (RULES.md §4–5), shared by the engine and the fault checks.

A ``u`` wins on a stock card only: the seat's own draw, or the card its cửa trên just drew and
passed down; any exposed card may be won by chíu ù. A báo seat never wins. The returned card
that replaced a seat's own discard (or own trả cửa) may be taken by that seat only by chíu ù.
"""

from __future__ import annotations

from games.rules.shape import wins_with
from games.rules.state import SRC_STOCK, Exposed, Phase, SeatState

_OFFERED = (Phase.OFFER, Phase.AFTER_DRAW)


def dealt_wins(st: SeatState) -> bool:
    """Thiên ù: the dealer's 20 dealt cards already win."""
    return not st.bao and wins_with(st.hand, 0, None)


def u_wins(phase: Phase, ex: Exposed | None, n_seats: int, st: SeatState, seat: int) -> bool:
    """Whether ``seat`` wins now with the ``u`` move on the exposed card (not Thiên ù)."""
    if phase not in _OFFERED or ex is None or ex.source != SRC_STOCK or st.bao:
        return False
    if phase is Phase.OFFER and ex.by != (seat - 1) % n_seats:
        return False
    return wins_with(st.hand, st.mat_chan, ex.card)


def chiu_wins(st: SeatState, card: int) -> bool:
    """Whether chíu-ing ``card`` completes a win (chíu ù): three in hand and the four win."""
    return not st.bao and st.hand[card] == 3 and wins_with(st.hand, st.mat_chan, card)


def chiu_possible(st: SeatState, card: int) -> bool:
    """Three in hand, and a fourth card left to discard or return unless the chíu wins."""
    if st.hand[card] != 3:
        return False
    return sum(st.hand) >= 4 or wins_with(st.hand, st.mat_chan, card)


def only_chiu_u(ex: Exposed | None, seat: int) -> bool:
    """The exposed card may be taken by ``seat`` only by chíu ù (no eat, no plain chíu): it was
    returned in place of the seat's own discard or own trả cửa (§4, seed 004 Lưu ý 5)."""
    return ex is not None and ex.barred == seat
