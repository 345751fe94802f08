"""Builders for hand-made positions: decks with chosen hands and stock, and apply-by-JSON."""

from __future__ import annotations

from games.rules.cards import COPIES, KIND_OF, N_KINDS, Counts, counts_of, parse_kind
from games.rules.engine import apply, new_hand
from games.rules.moves import move_from_dict
from games.rules.shape import is_bach_thu
from games.rules.state import SRC_DISCARD, HandConfig, HandState, MatGroup, Mode


def kinds(text: str) -> list[int]:
    return [parse_kind(c) for c in text.split()]


def make_deck(hands: dict[int, str], *, n: int = 4, dealer: int = 0, stock: str = "") -> list[int]:
    """A deck that deals ``hands`` (seat → codes; 20 for the dealer) and starts the stock with
    ``stock``. Unnamed hands and the rest of the stock get leftover cards dealt round-robin over
    kinds, so they hold as few pairs as possible."""
    left = [COPIES] * N_KINDS
    for text in [*hands.values(), stock]:
        for k in kinds(text):
            left[k] -= 1
            assert left[k] >= 0, f"too many {k}"

    def take(count: int) -> list[int]:
        out: list[int] = []
        k = 0
        while len(out) < count:
            if left[k]:
                left[k] -= 1
                out.append(k)
            k = (k + 1) % N_KINDS
        return out

    dealt: dict[int, list[int]] = {}
    for seat in range(n):
        size = 20 if seat == dealer else 19
        dealt[seat] = kinds(hands[seat]) if seat in hands else []
        assert len(dealt[seat]) in (0, size), f"seat {seat}: {len(dealt[seat])} cards"
    for seat in range(n):
        if not dealt[seat]:
            dealt[seat] = take(20 if seat == dealer else 19)
    deck: list[int] = []
    for i in range(n):
        deck.extend(dealt[(dealer + i) % n][:19])
    deck.append(dealt[dealer][19])
    deck.extend(kinds(stock))
    deck.extend(take(sum(left)))
    assert len(deck) == 100
    return deck


def start(
    hands: dict[int, str],
    *,
    n: int = 4,
    dealer: int = 0,
    stock: str = "",
    mode: Mode = Mode.BASIC,
    prefs: tuple[tuple[bool, bool], ...] = (),
) -> HandState:
    deck = make_deck(hands, n=n, dealer=dealer, stock=stock)
    return new_hand(HandConfig(n_seats=n, mode=mode, prefs=prefs), deck, dealer)


def play(state: HandState, *moves: tuple[int, dict]) -> HandState:
    """Apply moves given as (seat, move JSON)."""
    for seat, body in moves:
        state = apply(state, move_from_dict(body, seat=seat))
    return state


def accounted(state: HandState) -> int:
    total = len(state.stock) + sum(len(d) for d in state.doors)
    for st in state.seats:
        total += sum(st.hand) + st.mat_cards
    if state.win is not None and state.win.card is not None:
        total += 1
    return total


# Four cạ in ranks no named hand uses, and kinds to fill the remaining chắn from.
_BACH_THU_CA = ("3N 3S", "6N 6S", "7N 7S", "9N 9S")
_BACH_THU_CHAN_FILL = ("4N", "8N", "5N", "4S", "2N", "2S", "8S")


def bach_thu_seat(mat_kinds: tuple[int, ...], card: int) -> tuple[Counts, tuple[MatGroup, ...]]:
    """A 19-set waiting bạch thủ on ``card`` alone: an eaten chắn of each of ``mat_kinds`` on the
    mat, the rest of its 5 chắn and 4 cạ in hand with a lone ``card`` (the named hands' shape)."""
    fill = [
        KIND_OF[c]
        for c in _BACH_THU_CHAN_FILL
        if KIND_OF[c] // 3 != card // 3 and KIND_OF[c] not in mat_kinds
    ]
    chan = fill[: 5 - len(mat_kinds)]
    ca = [KIND_OF[c] for pair in _BACH_THU_CA for c in pair.split()]
    hand = counts_of([k for k in chan for _ in (0, 1)] + ca + [card])
    mat = tuple(MatGroup("chan", (k, k), k, SRC_DISCARD, 0) for k in mat_kinds)
    assert sum(hand) + 2 * len(mat) == 19
    assert is_bach_thu(hand, sum(g.chan_count for g in mat), card)
    return hand, mat


# Two named hands tied in (điểm, dịch) (RULES.md §6), thapthanh: seat 1 eats chắn 5V on the
# dealer's discard and chắn 5S on a card the dealer drew and passed, then wins chì bạch thủ on its
# own draw of 8V, so cá lội sân đình and cá nhảy đầu thuyền (24/21, 1 gà each) both hold.
NAMED_TIE_HANDS = {
    0: "5V 2V 3V 3V 5N 5N 7N 7N 8S 9V 9V CC CC 2N 4N 6N 6N 8N 9N 2S",
    1: "5V 5S 4V 4V 4S 4S 9S 9S 7V 7S 3N 3S 2N 2S 6V 6S 8V 9N 8N",
}
NAMED_TIE_STOCK = "7V 7V 5S 9V 4N 4N 8V"
_DRAW_PASS = ({"type": "draw"}, {"type": "pass"})
# The moves (seat, move JSON) from the deal to seat 1's ù; its declaration comes next.
NAMED_TIE_MOVES: tuple[tuple[int, dict], ...] = (
    (0, {"type": "discard", "card": "5V"}),
    (1, {"type": "eat", "card": "5V", "with": "5V"}),
    (1, {"type": "discard", "card": "9N"}),
    *((seat, move) for seat in (2, 3, 0) for move in _DRAW_PASS),
    (1, {"type": "eat", "card": "5S", "with": "5S"}),
    (1, {"type": "discard", "card": "8N"}),
    *((seat, move) for seat in (2, 3, 0) for move in _DRAW_PASS),
    (1, {"type": "draw"}),
    (1, {"type": "u"}),
)
