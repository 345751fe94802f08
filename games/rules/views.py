"""What each seat may see of a hand (RULES.md §2: hands are private, doors and mats public).

``view_for`` never contains another seat's hand, hidden faults or bỏ ù, or the stock order before
the hand ends; ``full_view`` is the auditor's view with everything.
"""

from __future__ import annotations

from typing import Any

from games.rules.cards import CODES, codes_of
from games.rules.engine import legal_moves
from games.rules.errors import InvalidInput, gettext_noop
from games.rules.state import HandState, MatGroup, MissedWin, Phase, SeatState, WinInfo


def _group(g: MatGroup) -> dict[str, Any]:
    return {
        "kind": g.kind,
        "cards": [CODES[k] for k in g.cards],
        "taken": CODES[g.taken],
        "source": g.source,
        "from_door": g.from_door,
    }


# Effects of a move that tell something about one seat's hand: shown to that seat, to the other
# players once the hand has ended, never to spectators (auditors read the replay and export).
# Besides these types, every effect flagged ``"hidden": true`` (a hidden fault, a claim that
# waits for the drawer or lost the card) is private in the same way.
PRIVATE_EFFECTS = frozenset({"bo_u"})


def is_private_effect(effect: Any) -> bool:
    """Whether an effect tells something of one seat's hidden information."""
    return isinstance(effect, dict) and (
        effect.get("type") in PRIVATE_EFFECTS or effect.get("hidden") is True
    )


def _missed(m: MissedWin) -> dict[str, Any]:
    return {"card": CODES[m.card], "seq": m.seq, "replaced_by": m.replaced_by}


def missed_wins_of(state: HandState) -> list[dict[str, Any]]:
    """Every bỏ ù of the hand (RULES.md §4, §9) in play order: ``{"seat", "card", "seq",
    "replaced_by"}``, as the export lists them and the verifier recomputes them."""
    found = [{"seat": i, **_missed(m)} for i, st in enumerate(state.seats) for m in st.missed_wins]
    return sorted(found, key=lambda m: (m["seq"], m["seat"]))


def effects_for(effects: list[Any], seat: int | None, ended: bool) -> list[Any]:
    """A move's effects as ``seat`` (None: a spectator) may read them: another seat's private
    effect (a ``bo_u`` reveals what its hand waits on, a hidden fault or claim what it holds)
    only to players after the end."""
    return [
        e
        for e in effects
        if not (is_private_effect(e) and e.get("seat") != seat and (seat is None or not ended))
    ]


def _public_seat(i: int, st: SeatState, reveal: bool) -> dict[str, Any]:
    d: dict[str, Any] = {
        "seat": i,
        "mat": [_group(g) for g in st.mat],
        "hand_count": sum(st.hand),
        "bao": st.bao,
        "auto_u": st.auto_u,
        "auto_chiu": st.auto_chiu,
    }
    if reveal:
        d["hand"] = codes_of(st.hand)
        d["dealt"] = codes_of(st.dealt)
        d["faults"] = [
            {"slug": f.slug, "visible": f.visible, "move": f.move_index} for f in st.faults
        ]
        d["bo_u"] = [_missed(m) for m in st.missed_wins]
    else:
        d["faults"] = [
            {"slug": f.slug, "visible": True, "move": f.move_index} for f in st.faults if f.visible
        ]
    return d


def _win(win: WinInfo | None) -> dict[str, Any] | None:
    if win is None:
        return None
    return {
        "seat": win.seat,
        "card": CODES[win.card] if win.card is not None else None,
        "source": win.source,
        "by_chiu": win.by_chiu,
        "bach_thu": win.bach_thu,
        "first_draw": win.first_draw,
    }


def _common(state: HandState, reveal: bool) -> dict[str, Any]:
    ex = state.exposed
    return {
        "phase": state.phase.value,
        "turn_seat": state.actor(),
        "dealer": state.dealer,
        "n_seats": state.n_seats,
        "mode": state.config.mode.value,
        "moves_played": state.n_moves,
        "stock_count": len(state.stock),
        "doors": [[CODES[k] for k in d] for d in state.doors],
        "offer": (
            {"card": CODES[ex.card], "door": ex.door, "source": ex.source, "by": ex.by}
            if ex
            else None
        ),
        "seats": [_public_seat(i, st, reveal) for i, st in enumerate(state.seats)],
        **result_of(state),
    }


def result_of(state: HandState) -> dict[str, Any]:
    """How the hand ended, as stored in ``Hand.result``: outcome, win, declaration and the
    settlement computed when the hand ended (all None while it is live)."""
    return {
        "outcome": state.outcome.to_dict() if state.outcome else None,
        "win": _win(state.win),
        "declaration": state.declaration.to_dict() if state.declaration else None,
        "settlement": state.settlement.to_dict() if state.settlement else None,
    }


def view_for(state: HandState, seat: int) -> dict[str, Any]:
    """One seat's view: its own hand and legal moves, plus everything public."""
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state.n_seats:
        raise InvalidInput("no_such_seat", gettext_noop("There is no seat %(seat)s."), seat=seat)
    ended = state.phase is Phase.ENDED
    view = _common(state, reveal=ended)
    st = state.seats[seat]
    view["my_seat"] = seat
    view["hand"] = codes_of(st.hand)
    view["legal_moves"] = [m.to_dict() for m in legal_moves(state, seat)]
    if not ended:
        view["my_faults"] = [{"slug": f.slug, "visible": f.visible} for f in st.faults]
        view["my_bo_u"] = [_missed(m) for m in st.missed_wins]
    else:
        view["stock"] = [CODES[k] for k in state.stock]
    return view


def full_view(state: HandState) -> dict[str, Any]:
    """The auditor's view: every hand and the stock order."""
    view = _common(state, reveal=True)
    view["stock"] = [CODES[k] for k in state.stock]
    view["pending_u"] = state.pending_u
    return view
