"""Basic-mode helpers: the "Find Trash" and "Quick Select" of the online products (seed 002).

:func:`analyse` groups a hand into chắn, cạ, ba đầu and què, ranks the cards worth discarding and
gives the waiting set; :func:`analysis_for` adds what the seat's history forbids and is ``None``
in advanced mode (nobody is helped there). Everything speaks kind codes (``"9V"``) and is cheap:
a few hundred table lookups per call.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from games.rules import faults as fault_rules
from games.rules.cards import CC, CODES, N_KINDS, Counts, can_pair
from games.rules.moves import Eat
from games.rules.shape import group_hand, waiting_set
from games.rules.state import MatGroup, Mode, Phase, SeatState

if TYPE_CHECKING:
    from games.rules.state import HandState


def analyse(hand: Counts, mat: tuple[MatGroup, ...] = ()) -> dict[str, Any]:
    """Grouping, trash and waiting set of a hand, judging discards from the hand and mat alone.

    ``trash`` lists the cards it may discard, best first: què, then the cards whose discard keeps
    the most chắn + cạ (then the most chắn; with 20 cards, those that leave it waiting first).
    ``blocked`` maps the hand's cards whose discard is a fault to that fault's slug.
    """
    return _analysis(SeatState(hand=hand, dealt=hand, mat=mat))


def analysis_for(state: HandState, seat: int) -> dict[str, Any] | None:
    """:func:`analyse` for ``seat`` with its whole history (declined, discarded cards), plus the
    clean ways to eat the card it faces now (``eat_with``); ``None`` in advanced mode."""
    if state.config.mode is Mode.ADVANCED:
        return None
    st = state.seats[seat]
    out = _analysis(st)
    eat_with: list[str] = []
    ex = state.exposed
    if (
        ex is not None
        and seat == state.turn
        and state.phase in (Phase.OFFER, Phase.AFTER_DRAW)
        and not st.bao
    ):
        for k in range(N_KINDS):
            move = Eat(seat, ex.card, k)
            if st.hand[k] and can_pair(ex.card, k) and not fault_rules.faults_of(state, move):
                eat_with.append(CODES[k])
    out["eat_with"] = eat_with
    return out


# How many seats' analyses a process keeps (about 3 KB each with the SeatState kept as its key).
# A view is rendered for every seat at every seq, but a move changes one seat's state: the
# others' analyses are the same values as at the previous seq, and were 5 % of a web worker's
# time (docs/decisions/lean-stack-memory.md). A hit moves its entry to the front, so about five
# entries a hand in play are enough: 256 serve some fifty hands a process. The key is the whole
# SeatState (frozen, compared by value), so a field the analysis comes to depend on can never be
# left out of it.
_KEPT_ANALYSES = 256


def _analysis(st: SeatState) -> dict[str, Any]:
    """:func:`_analysed` of ``st``, kept per SeatState value; a new dict and lists each call,
    which the caller may change (``analysis_for`` adds ``eat_with``)."""
    kept = _analysed_kept(st)
    return {k: _copied(v) for k, v in kept.items()}


def _copied(value: Any) -> Any:
    if isinstance(value, list):
        return [list(v) if isinstance(v, list) else v for v in value]
    if isinstance(value, dict):
        return dict(value)
    return value


@lru_cache(maxsize=_KEPT_ANALYSES)
def _analysed_kept(st: SeatState) -> dict[str, Any]:
    return _analysed(st)


def _analysed(st: SeatState) -> dict[str, Any]:
    hand = st.hand
    groups = group_hand(hand)
    que = {g[0] for g in groups["que"]}
    n_cards = sum(hand)
    held = list(hand)
    for g in st.mat:
        for k in g.cards:
            held[k] += 1

    blocked: dict[str, str] = {}
    candidates: list[tuple[tuple[int, ...], int]] = []
    seen = fault_rules.discard_history(st)
    mat_chan = seen.mat_chan
    for k in range(N_KINDS):
        if not hand[k]:
            continue
        slugs = fault_rules.discard_faults(st, k, seen)
        if slugs:
            blocked[CODES[k]] = slugs[0]
        after = list(hand)
        after[k] -= 1
        pairs, chan = _pairs_and_chan(after)
        waits = 0
        if n_cards % 2 == 0:  # 20 cards: does the discard leave it waiting?
            waits = len(waiting_set(tuple(after), mat_chan, held))
        key = (0 if k in que else 1, -pairs, -chan, 0 if waits else 1, -waits, k)
        candidates.append((key, k))
    candidates.sort()
    ranked = [k for _, k in candidates]
    trash = [CODES[k] for k in ranked if CODES[k] not in blocked]
    forced = not trash and bool(ranked)
    if forced:  # every discard is a fault: basic mode accepts any (faults.py), best first
        trash = [CODES[k] for k in ranked]

    waiting: list[str] = []
    if n_cards % 2 == 1:
        waiting = [CODES[k] for k in waiting_set(hand, mat_chan, held)]

    def codes(groups_: list[list[int]]) -> list[list[str]]:
        return [[CODES[k] for k in g] for g in groups_]

    return {
        "chan": codes(groups["chan"]),
        "ca": codes(groups["ca"]),
        "ba_dau": codes(groups["ba_dau"]),
        "que": [CODES[g[0]] for g in groups["que"]],
        "chan_count": len(groups["chan"]) + mat_chan,
        "ca_count": len(groups["ca"]) + sum(1 for g in st.mat if g.kind == "ca"),
        "trash": trash,
        "quick_select": trash[0] if trash else None,
        "blocked": blocked,
        "forced": forced,
        "waiting": waiting,
    }


def _pairs_and_chan(hand: list[int]) -> tuple[int, int]:
    """Most pairs a hand can hold (any two cards of one rank pair) and the most chắn among them."""
    pairs = hand[CC] // 2
    chan = hand[CC] // 2
    for base in range(0, 24, 3):
        a, b, c = hand[base], hand[base + 1], hand[base + 2]
        pairs += (a + b + c) // 2
        chan += a // 2 + b // 2 + c // 2
    return pairs, chan
