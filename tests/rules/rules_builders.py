"""Builders for hand-made positions: decks with chosen hands and stock, and apply-by-JSON."""

from __future__ import annotations

from games.rules.cards import COPIES, N_KINDS, parse_kind
from games.rules.engine import apply, new_hand
from games.rules.moves import move_from_dict
from games.rules.state import HandConfig, HandState, Mode


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
