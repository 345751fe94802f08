"""One replay of a hand's log (RULES.md §13) and the events' schema versions.

``replay(config, deck, dealer, events)`` is the only loop that turns a hand's log into states:
the hand store, the admin replay viewer, the replay API, the export and the verifier all read a
hand through it. It yields every event of the log (upcast to the current schema) with the state
after it: the deal (seq 0) with the dealt state, each move with the state ``apply`` makes, and
each record after the end (``settled``, ``voided``: not moves) with the state unchanged.

Events carry a schema version ``v`` in their payload (``EVENT_VERSION``). Version 1 (no ``v``)
recorded, besides the move itself, only the visible faults, the draws, nhái, bỏ ù, automatic
chíu, wins and hòa; version 2 records every effect the server derives from a move (``effects``
below). A stored event is never rewritten (its hash covers it as stored): :func:`upcast` brings
an older event to the current shape in memory, on every read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from games.rules.engine import apply, new_hand
from games.rules.moves import move_from_dict
from games.rules.records import is_record
from games.rules.state import Event, HandConfig, HandState

EVENT_VERSION = 2

# Why the server played a seat's move (an effect ``{"type": "system", "seat", "cause"}`` of
# every system move): its deadline passed, it is báo (ngồi im, RULES.md §9), its player left the
# hand, or a server bot's own move was refused and the server's replaced it.
CAUSE_TIMEOUT, CAUSE_BAO, CAUSE_LEFT, CAUSE_BOT = "timeout", "bao", "left", "bot"
CAUSES = (CAUSE_TIMEOUT, CAUSE_BAO, CAUSE_LEFT, CAUSE_BOT)

# The effects version 2 added (version 1 never recorded them) and the fields it added to the
# effects version 1 had.
NEW_IN_V2 = frozenset({"bao", "claim", "claim_lost", "system"})


def event_version(event: Mapping[str, Any]) -> int:
    """The schema version an event was stored in (1 when its payload names none)."""
    payload = event.get("payload")
    if isinstance(payload, Mapping):
        v = payload.get("v", 1)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return 1


def upcast(event: Mapping[str, Any]) -> dict[str, Any]:
    """The event in the current schema, in memory: ``v`` moves from the payload to the event
    (version 1's effects are a subset of version 2's, in the same shape). What version 1 did not
    record (hidden faults, báo, claims, system causes) is not invented: ``stored_v`` keeps the
    version the event was stored in, so the verifier compares only what it recorded."""
    stored = event_version(event)
    out = dict(event)
    payload = event.get("payload")
    if isinstance(payload, Mapping):
        out["payload"] = {k: val for k, val in payload.items() if k != "v"}
    out["v"] = EVENT_VERSION
    out["stored_v"] = stored
    return out


def system_effect(seat: int, cause: str) -> Event:
    """The effect naming why the server played ``seat``'s move."""
    return {"type": "system", "seat": seat, "cause": cause}


def system_cause(state: HandState, seat: int, *, left: bool, bot: bool = False) -> str:
    """Why the server plays ``seat``'s move in ``state``: báo, a refused bot move, a player who
    left, else the deadline."""
    if state.seats[seat].bao:
        return CAUSE_BAO
    if bot:
        return CAUSE_BOT
    return CAUSE_LEFT if left else CAUSE_TIMEOUT


def causes_allowed(state: HandState, seat: int) -> tuple[str, ...]:
    """The causes a replay can confirm for a system move of ``seat`` in ``state``: báo exactly
    when the seat is báo; otherwise the log cannot tell a deadline from a player who left or a
    bot's refused move."""
    if state.seats[seat].bao:
        return (CAUSE_BAO,)
    return (CAUSE_TIMEOUT, CAUSE_LEFT, CAUSE_BOT)


def move_effects(after: HandState, cause: str | None = None) -> list[Event]:
    """What an event records of a move: the move and what the rules derived from it
    (``after.events``), then the system move's cause."""
    effects = list(after.events)
    if cause is not None:
        seat = effects[0].get("seat")
        assert isinstance(seat, int)
        effects.append(system_effect(seat, cause))
    return effects


def as_stored(effects: list[Any], version: int) -> list[Any]:
    """The effects ``effects`` (current schema) as an event of ``version`` recorded them once
    upcast: version 1 lacks the effects version 2 added and the hidden faults."""
    if version >= 2:
        return effects
    return [
        e
        for e in effects
        if not (
            isinstance(e, dict)
            and (e.get("type") in NEW_IN_V2 or (e.get("type") == "fault" and e.get("hidden")))
        )
    ]


def replay(
    config: HandConfig,
    deck: list[int],
    dealer: int,
    events: Iterable[Mapping[str, Any]],
    *,
    check: Callable[[HandState, dict[str, Any]], None] | None = None,
) -> Iterator[tuple[dict[str, Any], HandState]]:
    """Every event of the log (``seq``, ``type``, ``payload``, …; in seq order, the deal
    first), upcast, with the state after it. ``check(state, event)`` sees each event after the
    deal before it is applied (the verifier's checks); a refused move raises the rules core's
    error."""
    yield from replay_from(new_hand(config, deck, dealer), events, check=check)


def replay_from(
    state: HandState,
    events: Iterable[Mapping[str, Any]],
    *,
    check: Callable[[HandState, dict[str, Any]], None] | None = None,
) -> Iterator[tuple[dict[str, Any], HandState]]:
    """:func:`replay` carried on from ``state``, the state after the event just before
    ``events`` (the deal's state for a whole log): the same fold, so a replay cut anywhere and
    carried on gives the same states as one replay of the whole log."""
    for stored in events:
        event = upcast(stored)
        if event.get("seq", 0) > 0:
            if check is not None:
                check(state, event)
            if not is_record(event["type"]):
                state = apply(state, move_from_dict(event["payload"]))
        yield event, state
