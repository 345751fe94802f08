"""Scripted decks for four seats with the dealer at table seat 0, and the policy that plays them.

``deal()``: seat ``dealer + i`` gets ``deck[19i : 19i + 19]``, the dealer also ``deck[76]``, the
stock is ``deck[77:]``. Both decks give no seat three of a kind (so no chíu ever happens) and
leave the dealer waiting on nothing whatever it discards. Played with :func:`scripted_move`
(ù when legal, else draw or pass, else the first legal move: only the dealer's first discard):

* ``HOA_DECK``: no seat ever waits on a card, so the stock runs down to its last card: hòa after
  46 moves (the opening discard, 22 draws and passes, the draw that finds one card left).
* ``WIN_DECK``: seat 2 holds nine chắn and a lone 9S (it waits on the rank 9); the sixth stock
  card is 9V, which seat 2 draws itself on move 12; move 13 is its ù (own draw), 14 the
  declaration that ends the hand.
"""

from __future__ import annotations

from typing import Any


def _codes(text: str) -> list[str]:
    return text.split()


HOA_DECK = _codes(
    "4V 8S 7S 5V 9N 8V 6S 4V 5S 3S 7V 9V 9V 8N 2N 2S 8V 4N 4N "
    "8N 5S 9S 2V 3N 9N 9V 3S 2S 9N 3V 8V 4N 6N 7V 4S 8S 2S CC "
    "8N 2V 4S 7V 5S 3N 6S 9N 6N 6S 8N 4S 5N 6V 6N 3N 2V 2N 5V "
    "2S 3S 8S 2N 7S 9S CC 5S 4V 3S 5V 2V 7S 7N 8S 7N 6S CC 3V "
    "7V "
    "8V 6V 7N 5N 5N 4V 7S 7N 4N 6N 3V 5V 9V 3V 6V CC 3N 9S 5N 4S 9S 2N 6V"
)

WIN_DECK = _codes(
    "3N 6S 7N 8S 7V 2S 7N 8N 2N 8S 3V 5N 9N 3N 9V 6N CC 4S 9V "
    "3S 8V 2N 5S 9S 4S 5V 8V 4N 7N 9N 6S 4V 5N 8N 3V 5N CC 4N "
    "2V 2V 3N 3N 4S 4S 5V 5V 6N 6N 7S 7S 8V 8V 9N 9N 2S 2S 9S "
    "4V 2V 8S 7S 6S 7V 9S 3S 2N CC 7N 2V 3S 8N 8S 8N 7V 5S 9V "
    "4V "
    "5S 2S 4V 3S 6V 9V 6V 4N 6V 2N CC 7V 5V 6N 9S 7S 3V 5S 3V 6S 5N 4N 6V"
)


def _bo_u_deck() -> list[str]:
    from games.rules.cards import CODES
    from tests.rules.rules_builders import make_deck

    bach_thu_2v = "CC CC 4V 4V 5V 5V 6N 6N 9N 9N 3N 3S 7N 7S 8N 8V 6V 6S 2V"
    ba_dau_2 = "CC CC 4V 4V 5V 5V 6N 6N 9N 9N 3N 3S 7N 7S 6V 6S 2V 2N 2S"
    return [CODES[k] for k in make_deck({1: bach_thu_2v, 2: ba_dau_2}, stock="2V")]


# Seats 1 and 2 both win on the stock's first card, 2V, which seat 1 draws on move 2 (bỏ ù).
BO_U_DECK = _bo_u_deck()


def _named_tie_deck() -> list[str]:
    from games.rules.cards import CODES
    from tests.rules.rules_builders import NAMED_TIE_HANDS, NAMED_TIE_STOCK, make_deck

    return [CODES[k] for k in make_deck(NAMED_TIE_HANDS, stock=NAMED_TIE_STOCK)]


# Thapthanh: played with ``tests.rules.rules_builders.NAMED_TIE_MOVES``, seat 1 wins a chì bạch
# thủ on 8V that is both cá lội sân đình and cá nhảy đầu thuyền (tied in điểm and dịch).
NAMED_TIE_DECK = _named_tie_deck()

HOA_MOVES = 46
WIN_MOVES = 14
WIN_SEAT = 2


def scripted_move(legal_moves: list[dict[str, Any]]) -> dict[str, Any]:
    """The deterministic choice of the scripted hands (moves in the rules core's JSON)."""
    for wanted in ("u", "draw", "pass"):
        for move in legal_moves:
            if move["type"] == wanted:
                return move
    return legal_moves[0]
