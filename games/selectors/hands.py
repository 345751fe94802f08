"""Reading hands for one viewer: the hand itself, a player's or a spectator's view, the events,
the version a conditional or long-polling read needs, and the full replay (the state of a hand
comes from ``games.hand_store``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.db import connection, connections, router
from django.utils.translation import gettext_lazy as _

from accounts.selectors import user_is_auditor
from core.errors import InvalidInput, Message, NotFound, PermissionDenied
from core.rows import row_values
from games.hand_store import (
    hand_deck,
    hand_last_hash_keep,
    hand_last_hash_kept,
    hand_replay,
    hand_seats_load,
    hand_state,
)
from games.models import Hand, HandEvent, HandSeat, Table
from games.rules import HandState
from games.rules.analysis import analysis_for
from games.rules.cards import CODES, codes_of
from games.rules.records import is_record
from games.rules.replay import upcast
from games.rules.views import effects_for, full_view, view_for

EVENTS_PAGE_MAX = 100


def utc_iso(moment: datetime) -> str:
    """An aware datetime as ISO 8601 in UTC, ``Z``-suffixed (as DRF renders them under UTC)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


# Every render of a view reads its hand with this fixed statement: the ORM's compilation of
# ``Hand.objects.select_related("table").filter(pk=…)`` cost more than the query itself (a third
# of a state read's time in a cProfile of bench/api_bench.py's reads; docs/decisions/
# fixed-statements.md). The rows become models exactly as the ORM makes them: each column through its field's
# converters (the JSON columns' decoding), then ``Model.from_db``, the table cached on the hand
# as ``select_related`` caches it.
_HAND_FIELDS = tuple(Hand._meta.concrete_fields)
_TABLE_FIELDS = tuple(Table._meta.concrete_fields)


def hand_row_sql(*, more: str = "", tail: str = "") -> str:
    """The fixed statement reading a hand (``%s``: its id) with its table, and ``more`` columns
    after theirs; ``tail`` after the WHERE (``FOR NO KEY UPDATE OF h``)."""
    columns = [f"h.{connection.ops.quote_name(f.column)}" for f in _HAND_FIELDS] + [
        f"t.{connection.ops.quote_name(f.column)}" for f in _TABLE_FIELDS
    ]
    return (
        f"SELECT {', '.join(columns)}{', ' + more if more else ''}"
        f" FROM {Hand._meta.db_table} h JOIN {Table._meta.db_table} t ON t.id = h.table_id"
        f" WHERE h.id = %s {tail}"
    )


_HAND_GET_SQL = hand_row_sql()


def hand_from_row(alias: str, row: tuple[Any, ...]) -> tuple[Hand, tuple[Any, ...]]:
    """The hand (its table cached on it as ``select_related`` caches it) from a row of
    :func:`hand_row_sql` read on ``alias``, and the row's ``more`` columns."""
    values = row_values(alias, _HAND_FIELDS + _TABLE_FIELDS, row)
    n, m = len(_HAND_FIELDS), len(_HAND_FIELDS) + len(_TABLE_FIELDS)
    hand = Hand.from_db(alias, None, values[:n])
    Hand.table.field.set_cached_value(hand, Table.from_db(alias, None, values[n:m]))
    return hand, tuple(values[m:])


def hand_get(*, hand_id: int) -> Hand:
    """The hand with its table, and its seats with their players' names."""
    alias = router.db_for_read(Hand)
    with connections[alias].cursor() as cursor:
        cursor.execute(_HAND_GET_SQL, [hand_id])
        row = cursor.fetchone()
    if row is None:
        raise NotFound(_("No such hand."))
    hand, _more = hand_from_row(alias, row)
    hand_seats_load(hand)
    return hand


def not_a_participant() -> PermissionDenied:
    return PermissionDenied(_("You are not playing in this hand."), code="not_a_participant")


def hand_seat_for_user(hand: Hand, user: Any) -> int:
    """The caller's seat in the hand; 403 ``not_a_participant`` otherwise."""
    seat = hand.seat_of(user.pk)
    if seat is None:
        raise not_a_participant()
    return seat


def hand_etag(hand_id: int, seq: int) -> str:
    return f'"{hand_id}-{seq}"'


class HandVersion(NamedTuple):
    """What a conditional or long-polling read needs to know of a hand before building a view."""

    etag: str
    seq: int
    ended: bool
    seat: int | None  # the caller's seat; None for a spectator
    settled: bool = False  # its settlement is booked (the ``settled`` record is in its log)
    seats_version: int = 0  # ``Hand.seats_version``: with seq, what a kept render is keyed by

    @property
    def final(self) -> bool:
        """Ended and settled: nothing more comes to its log but a void by staff (rare, and it
        moves the ETag like any event). An ended hand not settled yet still gains its
        ``settled`` record: a long poll waits for it."""
        return self.ended and self.settled


# The long poll and the 304 answer from this fixed statement (no ORM compilation on the
# hottest path): the hand's seq, status, whether its settlement is booked and its seats'
# version, the caller's seat in it (NULL: none) and whether its table takes spectators.
_HAND_VERSION_SQL = f"""
    SELECT h.seq, h.status, h.settled_at IS NOT NULL, h.seats_version, (
        SELECT s.position FROM {HandSeat._meta.db_table} s
        WHERE s.hand_id = h.id AND s.user_id = %s
    ), t.id, t.spectators
    FROM {Hand._meta.db_table} h JOIN {Table._meta.db_table} t ON t.id = h.table_id
    WHERE h.id = %s
"""


def hand_etag_for_user(*, hand_id: int, user: Any) -> HandVersion:
    """The ETag, seq and end of a hand for a participant, in one query (no state, no view)."""
    with connection.cursor() as cursor:
        cursor.execute(_HAND_VERSION_SQL, [user.pk, hand_id])
        row = cursor.fetchone()
    if row is None:
        raise NotFound(_("No such hand."))
    seq, status, settled, seats_version, seat, table_id, spectators = row
    if seat is None and not hand_spectators_allowed(Table(pk=table_id, spectators=spectators)):
        raise not_a_participant()
    ended = status == Hand.Status.ENDED
    return HandVersion(hand_etag(hand_id, seq), seq, ended, seat, settled, seats_version)


def _deadline(hand: Hand) -> str | None:
    return None if hand.deadline_at is None else utc_iso(hand.deadline_at)


def _players(hand: Hand) -> list[dict[str, Any]]:
    return [
        {
            "seat": s.position,
            "user_id": s.user_id,
            "username": s.user.username,
            "table_seat": s.table_seat,
            "left": s.left,
        }
        for s in hand.seat_list()
    ]


def hand_spectators_allowed(table: Table) -> bool:
    """Whether non-participants may watch the table's hands (its option ``spectators``)."""
    return table.spectators


def _hand_fields(hand: Hand, view: dict[str, Any]) -> dict[str, Any]:
    """What every viewer's view of a hand adds to the rules core's: the hand's row and seats."""
    return {
        "hand_id": hand.pk,
        "table_id": hand.table_id,
        "number": hand.number,
        "room": hand.room_id,
        "stake": hand.stake,
        "seq": hand.seq,
        "status": hand.status,
        "mats": [s["mat"] for s in view["seats"]],
        "players": _players(hand),
        "deadline": _deadline(hand),
        "seed_hash": hand.seed_hash,
        "next_seed_hash": hand.next_seed_hash or None,
        "head_hash": hand_head_hash(hand) if hand.status == Hand.Status.ENDED else None,
        "fixed_deck": hand.deck is not None,
    }


def hand_head_hash(hand: Hand) -> str | None:
    """The hash of the hand's last event (seq ``hand.seq``): the head of its hash chain. Kept
    on the instance: the views of several seats rendered from one read ask once."""
    kept = hand_last_hash_kept(hand)
    if kept is not None:
        return kept
    digest = (
        HandEvent.objects.of_hand(hand).filter(seq=hand.seq).values_list("hash", flat=True).first()
    )
    hand_last_hash_keep(hand, hand.seq, digest)
    return digest


def hand_view_for_user(*, hand: Hand, user: Any, state: HandState | None = None) -> dict[str, Any]:
    """The caller's view of the hand (rules view_for) plus seq, deadline, seed hash, players;
    after the end also the result and the revealed seed. A non-participant gets the
    spectator's view (:func:`hand_view_for_spectator`) where the table allows spectators."""
    return hand_view_for_seat(hand=hand, seat=hand.seat_of(user.pk), state=state)


def hand_view_for_seat(
    *, hand: Hand, seat: int | None, state: HandState | None = None
) -> dict[str, Any]:
    """The view of the player at ``seat``, or the spectator's when ``seat`` is None."""
    if seat is None:
        return hand_view_for_spectator(hand=hand, state=state)
    if state is None:
        state = hand_state(hand)
    view = view_for(state, seat)
    ended = hand.status == Hand.Status.ENDED
    view.update(
        {
            **_hand_fields(hand, view),
            "spectator": False,
            "analysis": analysis_for(state, seat) if not ended else None,
            "result": hand.result if ended else None,
            "seed": hand.seed if ended else None,
            "client_seeds": hand.client_seeds if ended else None,
        }
    )
    if ended and view.get("settlement") is not None:
        view["settlement"] = {**view["settlement"], "quan": hand.quan}
    return view


def spectator_view(state: HandState) -> dict[str, Any]:
    """The public view of a hand's state: mats, doors, the card on offer, stock count, whose
    turn, hand counts, visible faults and, after the end, how it ended — never a seat's hand
    or dealt cards, its hidden faults, its bỏ ù or the stock, before or after the end."""
    view = view_for(state, 0)
    for key in ("my_faults", "my_bo_u", "stock"):
        view.pop(key, None)
    view.update({"my_seat": None, "hand": [], "legal_moves": []})
    view["seats"] = [
        {
            **{k: v for k, v in seat.items() if k not in ("hand", "dealt", "bo_u")},
            "faults": [{**f, "visible": True} for f in seat["faults"] if f.get("visible", True)],
        }
        for seat in view["seats"]
    ]
    return view


def hand_view_for_spectator(*, hand: Hand, state: HandState | None = None) -> dict[str, Any]:
    """A non-participant's view (:func:`spectator_view` plus the hand's public fields, the
    result after the end but never the seed); 403 ``not_a_participant`` where the table does
    not allow spectators."""
    if not hand_spectators_allowed(hand.table):
        raise not_a_participant()
    if state is None:
        state = hand_state(hand)
    view = spectator_view(state)
    ended = hand.status == Hand.Status.ENDED
    view.update(
        {
            **_hand_fields(hand, view),
            "spectator": True,
            "analysis": None,
            "result": hand.result if ended else None,
            "seed": None,
            "client_seeds": None,
        }
    )
    if ended and view.get("settlement") is not None:
        view["settlement"] = {**view["settlement"], "quan": hand.quan}
    return view


def _event_dict(event: HandEvent) -> dict[str, Any]:
    """An event as the API speaks it: a move in ``move``; a record after the end (``settled``,
    ``voided``: public, the same for every viewer) in ``record``; its schema version in ``v``
    (an older event upcast: ``games.rules.replay.upcast``)."""
    record = is_record(event.type)
    upcast_event = upcast({"payload": event.payload, "effects": event.effects})
    payload = upcast_event["payload"]
    return {
        "seq": event.seq,
        "type": event.type,
        "v": upcast_event["stored_v"],
        "actor_seat": event.actor_seat,
        "system": event.system,
        "bot": event.bot,
        # the deal is no move (its payload holds only the deal's deck_hash, for the export)
        "move": None if record or event.type == "deal" else (payload or None),
        "record": payload if record else None,
        "effects": upcast_event["effects"],
        "created_at": utc_iso(event.created_at),
    }


def _deal_effects(hand: Hand, seat: int | None, effects: list[dict[str, Any]]) -> list[Any]:
    """The deal as one viewer may see it: a player its own dealt cards, and every seat's after
    the end; a spectator (``seat`` None) none of them, ever."""
    if seat is None:
        return [dict(e) for e in effects]
    state = hand_state(hand)
    out = [dict(e) for e in effects]
    for e in out:
        if e.get("type") != "deal":
            continue
        e["hand"] = codes_of(state.seats[seat].dealt)
        if hand.status == Hand.Status.ENDED:
            e["hands"] = [codes_of(s.dealt) for s in state.seats]
            e["deck"] = [CODES[k] for k in hand_deck(hand)]
    return out


def hand_events_for_user(
    *, hand: Hand, user: Any, after_seq: int | None = None, limit: int = EVENTS_PAGE_MAX
) -> dict[str, Any]:
    """One page of the caller's events after ``after_seq`` (all from the deal when None); a
    spectator's where the table allows them (the deal then shows no cards)."""
    seat = hand.seat_of(user.pk)
    if seat is None and not hand_spectators_allowed(hand.table):
        raise not_a_participant()
    return hand_events_for_seat(hand=hand, seat=seat, after_seq=after_seq, limit=limit)


def hand_events_for_seat(
    *, hand: Hand, seat: int | None, after_seq: int | None = None, limit: int = EVENTS_PAGE_MAX
) -> dict[str, Any]:
    """One page of the events as the player at ``seat`` sees them (a spectator: None): another
    seat's ``bo_u`` and hidden effects only after the end, and never to a spectator
    (``effects_for``).

    The page's ``seq`` is the hand's seq as of the events query, never below its last event:
    ``hand`` was read before it, and moves appended since then are in the page.
    """
    limit = max(1, min(limit, EVENTS_PAGE_MAX))
    qs = HandEvent.objects.of_hand(hand).order_by("seq")
    if after_seq is not None:
        qs = qs.filter(seq__gt=after_seq)
    rows = list(qs[: limit + 1])
    # Events are appended in seq order under the hand's lock: the last row read is at most the
    # hand's seq when the query ran (equal to it when the page reaches the end of the log).
    seq = max([hand.seq, *(ev.seq for ev in rows)])
    has_more = len(rows) > limit
    rows = rows[:limit]
    events = []
    ended = hand.status == Hand.Status.ENDED
    for ev in rows:
        d = _event_dict(ev)
        if ev.seq == 0:
            d["effects"] = _deal_effects(hand, seat, ev.effects)
        else:
            d["effects"] = effects_for(ev.effects, seat, ended)
        events.append(d)
    return {
        "hand_id": hand.pk,
        "seq": seq,
        "events": events,
        "next_after_seq": rows[-1].seq if rows else after_seq,
        "has_more": has_more,
    }


def hand_check_full_read(hand: Hand, user: Any, before_the_end: Message) -> None:
    """Who may read every card of a hand (its replay, its export): auditors at any time; once it
    has ended, its players and, at a table open to spectators, anyone signed in."""
    if user_is_auditor(user):
        return
    participant = hand.seat_of(user.pk) is not None
    if hand.status != Hand.Status.ENDED:
        if participant:
            raise PermissionDenied(before_the_end, code="hand_not_ended")
        raise not_a_participant()
    if not participant and not hand_spectators_allowed(hand.table):
        raise not_a_participant()


def hand_replay_for_user(*, hand: Hand, user: Any, seq: int | None = None) -> dict[str, Any]:
    """The full state at ``seq`` (every hand and the stock): auditors (``accounts.audit_hands``)
    at any time; once the hand has ended, its players and — at a table open to spectators —
    anyone signed in (the seed is revealed then anyway)."""
    hand_check_full_read(hand, user, _("A participant may replay the hand only after it ends."))
    if seq is None:
        seq = hand.seq
    if not 0 <= seq <= hand.seq:
        raise InvalidInput(
            _("seq must be between 0 and %(last)s."),
            code="seq_out_of_range",
            errors={"seq": [_("must be between 0 and %(last)s") % {"last": hand.seq}]},
            last=hand.seq,
        )
    state = hand_state(hand) if seq == hand.seq else hand_replay(hand, upto=seq)
    view = full_view(state)
    view.update(
        {
            "hand_id": hand.pk,
            "table_id": hand.table_id,
            "room": hand.room_id,
            "stake": hand.stake,
            "seq": seq,
            "last_seq": hand.seq,
            "status": hand.status,
            "players": _players(hand),
            "seed_hash": hand.seed_hash,
            "seed": hand.seed,
            "client_seeds": hand.client_seeds,
            "next_seed_hash": hand.next_seed_hash or None,
            "fixed_deck": hand.deck is not None,
            "deck": [CODES[k] for k in hand_deck(hand)],
            "result": hand.result if hand.status == Hand.Status.ENDED else None,
        }
    )
    return view
