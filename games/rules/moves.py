"""Moves as immutable values, each round-tripping the exact JSON the API speaks.

Every move carries the acting ``seat``; moves the server makes itself (auto-play, timeouts) have
``system=True``. ``to_dict()`` gives ``{"type": …, <fields>, "seat": n}`` (plus ``"system": true``
for the server's own moves); :func:`move_from_dict` parses that form and refuses anything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from games.rules.cards import CODES, parse_kind
from games.rules.errors import InvalidInput, gettext_noop, shown


@dataclass(frozen=True, slots=True)
class _MoveBase:
    seat: int
    system: bool = field(default=False, kw_only=True)
    type: ClassVar[str] = ""

    def _fields(self) -> dict[str, Any]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type, **self._fields(), "seat": self.seat}
        if self.system:
            d["system"] = True
        return d


@dataclass(frozen=True, slots=True)
class Discard(_MoveBase):
    card: int = 0
    type: ClassVar[str] = "discard"

    def _fields(self) -> dict[str, Any]:
        return {"card": CODES[self.card]}


@dataclass(frozen=True, slots=True)
class Eat(_MoveBase):
    card: int = 0
    with_: int = 0
    type: ClassVar[str] = "eat"

    def _fields(self) -> dict[str, Any]:
        return {"card": CODES[self.card], "with": CODES[self.with_]}


@dataclass(frozen=True, slots=True)
class Draw(_MoveBase):
    type: ClassVar[str] = "draw"


@dataclass(frozen=True, slots=True)
class Pass(_MoveBase):
    type: ClassVar[str] = "pass"


@dataclass(frozen=True, slots=True)
class Chiu(_MoveBase):
    card: int = 0
    type: ClassVar[str] = "chiu"

    def _fields(self) -> dict[str, Any]:
        return {"card": CODES[self.card]}


@dataclass(frozen=True, slots=True)
class TraCua(_MoveBase):
    card: int = 0
    type: ClassVar[str] = "tra_cua"

    def _fields(self) -> dict[str, Any]:
        return {"card": CODES[self.card]}


@dataclass(frozen=True, slots=True)
class U(_MoveBase):
    type: ClassVar[str] = "u"


@dataclass(frozen=True, slots=True)
class Declare(_MoveBase):
    """A declaration (xướng): ``cuoc`` as sorted (slug, count) pairs, or ``auto`` for the server's."""

    cuoc: tuple[tuple[str, int], ...] = ()
    auto: bool = False
    type: ClassVar[str] = "declare"

    def _fields(self) -> dict[str, Any]:
        if self.auto:
            return {"auto": True}
        return {"cuoc": dict(self.cuoc)}


@dataclass(frozen=True, slots=True)
class SetPrefs(_MoveBase):
    auto_u: bool | None = None
    auto_chiu: bool | None = None
    type: ClassVar[str] = "set_prefs"

    def _fields(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.auto_u is not None:
            d["auto_u"] = self.auto_u
        if self.auto_chiu is not None:
            d["auto_chiu"] = self.auto_chiu
        return d


Move = Discard | Eat | Draw | Pass | Chiu | TraCua | U | Declare | SetPrefs
MOVE_TYPES: dict[str, type] = {
    cls.type: cls for cls in (Discard, Eat, Draw, Pass, Chiu, TraCua, U, Declare, SetPrefs)
}
_FIELDS: dict[str, frozenset[str]] = {
    "discard": frozenset({"card"}),
    "eat": frozenset({"card", "with"}),
    "draw": frozenset(),
    "pass": frozenset(),
    "chiu": frozenset({"card"}),
    "tra_cua": frozenset({"card"}),
    "u": frozenset(),
    "declare": frozenset({"cuoc", "auto"}),
    "set_prefs": frozenset({"auto_u", "auto_chiu"}),
}
MAX_SEATS = 4


def _bad(template: str, *, at: str | None = None, **params: object) -> InvalidInput:
    """``invalid_move``; ``at``: the field at fault."""
    error = InvalidInput("invalid_move", template, **params)
    if at is not None:
        error.fields = (at,)
    return error


def _missing(key: str) -> InvalidInput:
    return _bad(gettext_noop("Field '%(field)s' is required."), at=key, field=key)


def _card(d: Mapping[str, Any], key: str) -> int:
    if key not in d:
        raise _missing(key)
    try:
        return parse_kind(d[key])
    except InvalidInput as exc:
        exc.fields = (key,)
        raise


def _opt_bool(d: Mapping[str, Any], key: str) -> bool | None:
    v = d.get(key)
    if v is not None and not isinstance(v, bool):
        raise _bad(gettext_noop("Field '%(field)s' must be true or false."), at=key, field=key)
    return v


def _cuoc(value: Any) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, Mapping):
        raise _bad(gettext_noop("Field 'cuoc' must be an object of slug → count."), at="cuoc")
    out = []
    for slug, n in value.items():
        if not isinstance(slug, str) or len(slug) > 40:
            raise _bad(gettext_noop("Cước slugs must be short strings."))
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 10:
            raise _bad(gettext_noop("Count of '%(slug)s' must be an integer 0…10."), slug=slug)
        if n:
            out.append((slug, n))
    return tuple(sorted(out))


def move_from_dict(data: object, *, seat: int | None = None) -> Move:
    """Parse a move from its JSON form. ``seat`` (from the caller's identity) overrides the body."""
    if not isinstance(data, Mapping):
        raise _bad(gettext_noop("A move must be a JSON object."))
    if "type" not in data:  # named as missing, under the code of a bad type (stable)
        error = InvalidInput(
            "unknown_move_type", gettext_noop("Field '%(field)s' is required."), field="type"
        )
        error.fields = ("type",)
        raise error
    mtype = data["type"]
    if not isinstance(mtype, str) or mtype not in MOVE_TYPES:
        error = InvalidInput(
            "unknown_move_type",
            gettext_noop("Unknown move type %(type)s; expected one of %(types)s."),
            type=shown(mtype),
            types=", ".join(MOVE_TYPES),
        )
        error.fields = ("type",)
        raise error
    # ``v``: the schema version a stored event's payload carries (games.rules.replay); not
    # part of the move, so a payload read back from the log parses as it was submitted.
    extra = set(data) - _FIELDS[mtype] - {"type", "seat", "system", "v"}
    if extra:
        raise _bad(
            gettext_noop("Unexpected field(s) for '%(type)s': %(fields)s."),
            type=mtype,
            fields=", ".join(sorted(map(str, extra))),
        )
    if seat is None:
        seat = data.get("seat")
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < MAX_SEATS:
        raise _bad(gettext_noop("Field 'seat' must be a seat number 0…3."), at="seat")
    system = data.get("system", False) is True
    if mtype == "discard":
        return Discard(seat, _card(data, "card"), system=system)
    if mtype == "eat":
        return Eat(seat, _card(data, "card"), _card(data, "with"), system=system)
    if mtype == "chiu":
        return Chiu(seat, _card(data, "card"), system=system)
    if mtype == "tra_cua":
        return TraCua(seat, _card(data, "card"), system=system)
    if mtype == "draw":
        return Draw(seat, system=system)
    if mtype == "pass":
        return Pass(seat, system=system)
    if mtype == "u":
        return U(seat, system=system)
    if mtype == "declare":
        auto = data.get("auto", False)
        if auto is not False and auto is not True:
            raise _bad(gettext_noop("Field 'auto' must be true or false."), at="auto")
        if auto:
            if "cuoc" in data:
                raise _bad(gettext_noop("Give either 'cuoc' or 'auto', not both."))
            return Declare(seat, auto=True, system=system)
        if "cuoc" not in data:
            raise _bad(gettext_noop("A declaration needs 'cuoc' (slug → count) or 'auto': true."))
        return Declare(seat, _cuoc(data["cuoc"]), system=system)
    auto_u, auto_chiu = _opt_bool(data, "auto_u"), _opt_bool(data, "auto_chiu")
    if auto_u is None and auto_chiu is None:
        raise _bad(gettext_noop("set_prefs needs 'auto_u' and/or 'auto_chiu'."))
    return SetPrefs(seat, auto_u, auto_chiu, system=system)
