"""The cước calculator (RULES.md §5–7): is this a win, with which cước, for how many points?

:func:`evaluate` takes kind codes as the API speaks them and returns the JSON the REST endpoint
renders as is; :func:`score_dict` scores a cước map under a ruleset spec. Malformed input raises
:class:`InvalidField` (an :class:`~games.rules.errors.InvalidInput`) with a stable code, a message
naming the problem and the request fields at fault (``hand``, ``mat``, ``context.dealt_hand`` …).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.rules.cards import (
    CC,
    CODES,
    COPIES,
    N_KINDS,
    can_pair,
    counts_of,
    parse_kind,
    parse_kinds,
)
from games.rules.cuoc import WIN_SOURCES, WinFacts, detect_cuoc, tied_readings
from games.rules.errors import InvalidField, InvalidInput, gettext_noop, shown
from games.rules.ruleset import Ruleset, RulesetError, build_ruleset
from games.rules.scoring import normalize_cuoc, score
from games.rules.shape import best_chan, is_bach_thu, waiting_set, wins_with
from games.rules.state import MatGroup

__all__ = [
    "CONTEXT_KEYS",
    "NO_WIN_REASONS",
    "InvalidField",
    "evaluate",
    "parse_ruleset",
    "score_dict",
]

SET_SIZE = 19  # a seat's 19-set: hand + mat, a chíu counted as its four cards (two pairs)
DEALT_SIZE = 20  # the dealer's dealt hand (Thiên ù)
# ``nhai`` (the winner's nhái: a count, or true for "some") only matter for the gà góp pot, which
# is settled at the table, never for cước or points: it is accepted and changes nothing here.
CONTEXT_KEYS = ("first_draw", "previous_winner", "dealt_hand", "nhai")
MAX_NHAI = 100
# Sources on which a win is only possible by chíu ù (three copies of the card in hand).
_CHIU_ONLY = frozenset({"discard", "returned", "chiu", "chiu_own_door"})

_REASONS: dict[str, tuple[str, str]] = {
    "not_a_winning_shape": (
        "These cards do not split into 10 pairs with at least 6 chắn.",
        "Bài không thành 10 cặp chắn/cạ với ít nhất 6 chắn.",
    ),
    "chi_chi_must_be_bach_thu": (
        "A win on Chi chi must be bạch thủ chi: exactly 6 chắn + 4 cạ, pairing a lone Chi chi.",
        "Ù Chi chi phải là bạch thủ chi: đúng 6 chắn 4 cạ, chờ một quân Chi chi lẻ.",
    ),
    "cannot_win_on_discard": (
        "A discarded card can only be won on by chíu ù (three of it in hand).",
        "Không được ù quân đánh ra, trừ khi chíu ù (có ba quân trên tay).",
    ),
    "cannot_win_on_returned_card": (
        "A returned card (trả cửa) can only be won on by chíu ù (three of it in hand).",
        "Không được ù quân trả cửa, trừ khi chíu ù (có ba quân trên tay).",
    ),
}


NO_WIN_REASONS = tuple(_REASONS)


def _reason(code: str) -> dict[str, str]:
    message, message_vi = _REASONS[code]
    return {"code": code, "message": message, "message_vi": message_vi}


def _bad(field: str | Sequence[str], code: str, template: str, /, **params: object) -> InvalidField:
    return InvalidField(field, code, template, **params)


def _kinds(values: object, field: str) -> list[int]:
    """``parse_kinds`` naming the field when a code (or the list itself) is malformed."""
    try:
        return parse_kinds(values)
    except InvalidInput as exc:
        raise _bad(field, exc.code, exc.template, **exc.params) from exc


def _kind(value: object, field: str) -> int:
    try:
        return parse_kind(value)
    except InvalidInput as exc:
        raise _bad(field, exc.code, exc.template, **exc.params) from exc


def parse_ruleset(ruleset: Ruleset | Mapping[str, Any] | None) -> Ruleset:
    """A Ruleset, or one built from a spec ``{"preset", "overrides"}`` (None: the default)."""
    if isinstance(ruleset, Ruleset):
        return ruleset
    try:
        return build_ruleset(ruleset)
    except RulesetError as exc:
        raise _bad(
            f"ruleset.{exc.key}",
            "invalid_ruleset",
            gettext_noop("Invalid ruleset: %(problem)s"),
            problem=str(exc),
        ) from exc


def _parse_mat(mat: object) -> tuple[MatGroup, ...]:
    if mat is None:
        return ()
    if not isinstance(mat, list | tuple):
        raise _bad(
            "mat", "invalid_mat", gettext_noop("'mat' must be a list of groups of card codes.")
        )
    groups = []
    for i, raw in enumerate(mat):
        if not isinstance(raw, list | tuple):
            raise _bad(
                "mat", "invalid_mat", gettext_noop("mat[%(i)s] must be a list of card codes."), i=i
            )
        cards = tuple(_kinds(list(raw), "mat"))
        shown = "+".join(CODES[k] for k in cards)
        if len(cards) == 2 and (kind := can_pair(*cards)) is not None:
            groups.append(MatGroup(kind, cards, cards[0], "discard", -1))
        elif len(cards) == COPIES and len(set(cards)) == 1:
            groups.append(MatGroup("chiu", cards, cards[0], "discard", -1))
        else:
            raise _bad(
                "mat",
                "invalid_mat_group",
                gettext_noop(
                    "mat[%(i)s] (%(cards)s) is not a chắn, a cạ or a chíu (four of a kind)."
                ),
                i=i,
                cards=shown,
            )
    return tuple(groups)


def _parse_bool(context: Mapping[str, Any], key: str) -> bool:
    value = context.get(key, False)
    if not isinstance(value, bool):
        raise _bad(
            f"context.{key}",
            "invalid_context",
            gettext_noop("context.%(key)s must be true or false."),
            key=key,
        )
    return value


def _check_nhai(context: Mapping[str, Any]) -> None:
    """``nhai``: a count of nhái (0…MAX_NHAI) or a bool; validated, then ignored (gà góp only)."""
    value = context.get("nhai", 0)
    if isinstance(value, bool):
        return
    if not isinstance(value, int) or not 0 <= value <= MAX_NHAI:
        raise _bad(
            "context.nhai",
            "invalid_context",
            gettext_noop(
                "context.nhai must be a count of nhái from 0 to %(most)s, or true or false."
            ),
            most=MAX_NHAI,
        )


def _parse_context(context: object) -> tuple[bool, bool, list[int] | None]:
    if context is None:
        return False, False, None
    if not isinstance(context, Mapping):
        raise _bad("context", "invalid_context", gettext_noop("'context' must be an object."))
    unknown = sorted(str(k) for k in context if k not in CONTEXT_KEYS)
    if unknown:
        raise _bad(
            [f"context.{key}" for key in unknown],
            "invalid_context",
            gettext_noop("Unknown context key(s) %(keys)s; use %(known)s."),
            keys=", ".join(unknown),
            known=", ".join(CONTEXT_KEYS),
        )
    _check_nhai(context)
    dealt = context.get("dealt_hand")
    dealt_kinds = None if dealt is None else _kinds(dealt, "context.dealt_hand")
    if dealt_kinds is not None and len(dealt_kinds) not in (SET_SIZE, DEALT_SIZE):
        raise _bad(
            "context.dealt_hand",
            "invalid_context",
            gettext_noop("context.dealt_hand must hold 19 or 20 cards, not %(count)s."),
            count=len(dealt_kinds),
        )
    return _parse_bool(context, "first_draw"), _parse_bool(context, "previous_winner"), dealt_kinds


def _check_copies(counts: Sequence[int], what: str, fields: Sequence[str]) -> None:
    over = [CODES[k] for k in range(N_KINDS) if counts[k] > COPIES]
    if over:
        raise _bad(
            fields,
            "too_many_copies",
            gettext_noop("%(what)s hold more than four %(cards)s."),
            what=what,
            cards=", ".join(over),
        )


def evaluate(
    ruleset: Ruleset | Mapping[str, Any] | None,
    *,
    mat: object,
    hand: object,
    card: object,
    source: object,
    context: object = None,
) -> dict[str, Any]:
    """Whether ``hand`` + ``mat`` (the 19-set S) wins on ``card`` from ``source``, and its cước.

    ``card`` None is Thiên ù: ``hand`` is the dealer's 20 and ``source`` must be ``dealt``.
    ``source`` ``returned`` is a trả cửa card in another seat's door (into the winner's own door
    it is ``chiu_own_door``). ``bach_thu`` in the answer is true for any bạch-thủ win, bạch thủ chi
    included; ``waiting`` is W(S), empty for Thiên ù; ``equally_right``, only where named hands
    tie in (điểm, dịch), the other readings as right as ``cuoc`` (§6). ``context`` may hold
    ``first_draw``, ``previous_winner``, ``dealt_hand`` and ``nhai`` (accepted, never changes
    the answer); any other key is refused.
    """
    rs = parse_ruleset(ruleset)
    if not isinstance(source, str) or source not in WIN_SOURCES:
        raise _bad(
            "source",
            "unknown_source",
            gettext_noop("Unknown source %(source)s; use one of %(sources)s."),
            source=shown(source),
            sources=", ".join(WIN_SOURCES),
        )
    groups = _parse_mat(mat)
    hand_counts = counts_of(_kinds(hand, "hand"))
    kind = None if card is None else _kind(card, "card")
    first_draw, previous_winner, dealt_kinds = _parse_context(context)

    mat_cards = sum(len(g.cards) for g in groups)
    n_hand = sum(hand_counts)
    if kind is None:
        if source != "dealt":
            raise _bad(
                "card",
                "missing_card",
                gettext_noop("'card' is required unless the source is 'dealt'."),
            )
        if groups:
            raise _bad(
                "mat",
                "invalid_mat",
                gettext_noop("A Thiên ù (source 'dealt') has nothing on the mat."),
            )
        if n_hand != DEALT_SIZE:
            raise _bad(
                "hand",
                "wrong_card_count",
                gettext_noop("A Thiên ù needs the dealer's 20 cards in 'hand', not %(count)s."),
                count=n_hand,
            )
    else:
        if source == "dealt":
            raise _bad(
                "card", "unexpected_card", gettext_noop("Source 'dealt' (Thiên ù) takes no 'card'.")
            )
        if n_hand + mat_cards != SET_SIZE:
            raise _bad(
                ("hand", "mat") if groups else "hand",
                "wrong_card_count",
                gettext_noop(
                    "hand + mat must hold 19 cards (a chíu counts its four), not %(count)s."
                ),
                count=n_hand + mat_cards,
            )
    all_cards = list(hand_counts)
    for g in groups:
        for k in g.cards:
            all_cards[k] += 1
    held = tuple(all_cards)
    if kind is not None:
        all_cards[kind] += 1
    held_in = ("hand", "mat") if groups else ("hand",)
    _check_copies(all_cards, "hand, mat and card", held_in if kind is None else (*held_in, "card"))
    dealt = None
    if dealt_kinds is not None:
        dealt = counts_of(dealt_kinds)
        _check_copies(dealt, "context.dealt_hand", ("context.dealt_hand",))
        if kind is None and dealt != hand_counts:
            raise _bad(
                "context.dealt_hand",
                "invalid_context",
                gettext_noop("For a Thiên ù, context.dealt_hand must equal 'hand'."),
            )
    elif kind is None:
        dealt = hand_counts

    mat_chan = sum(g.chan_count for g in groups)
    three = kind is not None and hand_counts[kind] == 3
    if source in ("chiu", "chiu_own_door") and not three:
        raise _bad(
            "source",
            "chiu_needs_three",
            gettext_noop("A chíu ù needs three %(card)s in hand."),
            card=CODES[kind] if kind is not None else "",
        )
    waiting = [] if kind is None else waiting_set(hand_counts, mat_chan, held)
    answer: dict[str, Any] = {
        "win": False,
        "waiting": [CODES[k] for k in waiting],
        "bach_thu": False,
        "cuoc": {},
        "base": 0,
        "ga": 0,
        "total": 0,
    }
    if not wins_with(hand_counts, mat_chan, kind):
        answer["reason"] = _reason(_shape_failure(hand_counts, mat_chan, kind))
        return answer
    if source in _CHIU_ONLY and not three:
        code = "cannot_win_on_returned_card" if source == "returned" else "cannot_win_on_discard"
        answer["reason"] = _reason(code)
        return answer

    facts = WinFacts(
        hand=hand_counts,
        mat=groups,
        card=kind,
        source=source,
        by_chiu=three,
        first_draw=first_draw,
        previous_winner=previous_winner,
        dealt=dealt,
    )
    cuoc = detect_cuoc(rs, facts)
    answer.update(
        win=True,
        bach_thu=is_bach_thu(hand_counts, mat_chan, kind),
        cuoc=cuoc,
        **score(rs, cuoc).to_dict(),
    )
    tied = tied_readings(rs, facts)
    if tied:
        answer["equally_right"] = list(tied)
    return answer


def _shape_failure(hand: Sequence[int], mat_chan: int, card: int | None) -> str:
    """Why S + card is no win: a Chi chi that is not bạch thủ chi, or simply not a win shape."""
    if card == CC and hand[card] < COPIES:
        h = list(hand)
        h[card] += 1
        b = best_chan(h)
        if b >= 0 and b + mat_chan >= 6:
            return "chi_chi_must_be_bach_thu"
    return "not_a_winning_shape"


def score_dict(ruleset: Ruleset | Mapping[str, Any] | None, cuoc: object) -> dict[str, int]:
    """``{"base", "ga", "total"}`` of a cước map (slug → count) under a ruleset or its spec."""
    rs = parse_ruleset(ruleset)
    if not isinstance(cuoc, Mapping):
        raise _bad(
            "cuoc", "invalid_cuoc", gettext_noop("'cuoc' must be an object of slug → count.")
        )
    try:
        normalize_cuoc(cuoc)
    except InvalidField as exc:
        raise _bad(
            exc.fields, "invalid_cuoc", gettext_noop("%(problem)s"), problem=str(exc)
        ) from exc
    return score(rs, cuoc).to_dict()
