"""Everything that reads tables and hands for the API (the state of a hand comes from
``games.hand_store``; deadlines from ``games.clock``).

Views of a hand are built here for one viewer and never hold another seat's hand or the stock
order before the hand ends. Every timestamp is rendered in UTC.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import Count, F, Prefetch, Q, QuerySet
from django.utils.translation import gettext_lazy as _

from accounts.models import LedgerAccount
from accounts.selectors import user_is_auditor
from core.errors import InvalidInput, Message, NotFound, PermissionDenied
from games.clock import table_ready_deadline
from games.hand_store import hand_deck, hand_replay, hand_seats_load, hand_state
from games.models import Hand, HandEvent, HandSeat, Seat, Table
from games.rules import HandState
from games.rules.analysis import analysis_for
from games.rules.cards import CODES, codes_of
from games.rules.errors import RuleError
from games.rules.ruleset import Ruleset, RulesetError, build_ruleset, list_presets
from games.rules.scoring import score
from games.rules.views import full_view, view_for

logger = logging.getLogger(__name__)

EVENTS_PAGE_MAX = 100
TABLE_LIST_MAX = 100
TABLE_HANDS_MAX = 100


def utc_iso(moment: datetime) -> str:
    """An aware datetime as ISO 8601 in UTC, ``Z``-suffixed (as DRF renders them under UTC)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


# --------------------------------------------------------------------------- tables


def table_queryset() -> QuerySet[Table]:
    return Table.objects.select_related("owner").prefetch_related(
        Prefetch("seats", queryset=Seat.objects.select_related("player").order_by("number"))
    )


def table_list(
    *, room: str | None = None, stake: int | None = None, open_seats: int | None = None
) -> list[Table]:
    """Tables that are not closed, newest first (at most 100); ``open_seats``: at least that many
    free seats. The first page of :func:`table_page`."""
    return table_page(room=room, stake=stake, open_seats=open_seats, limit=TABLE_LIST_MAX).tables


TABLE_PAGE_DEFAULT = TABLE_LIST_MAX
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _table_cursor(table: Table) -> str:
    """An opaque keyset cursor: the table's creation time (µs since the epoch) and id."""
    return f"{(table.created_at - _EPOCH) // timedelta(microseconds=1)}.{table.pk}"


class TablePage(NamedTuple):
    tables: list[Table]
    next_cursor: str | None


def table_page(
    *,
    room: str | None = None,
    stake: int | None = None,
    open_seats: int | None = None,
    status: str | None = None,
    cursor: str | None = None,
    limit: int = TABLE_PAGE_DEFAULT,
) -> TablePage:
    """Tables that are not closed, newest first, one page after ``cursor`` (the ``next_cursor``
    of the page before); ``status``: ``open`` or ``playing`` only; ``open_seats``: at least that
    many free seats."""
    qs = table_queryset().exclude(status=Table.Status.CLOSED)
    if room is not None:
        qs = qs.filter(room_id=room)
    if stake is not None:
        qs = qs.filter(stake=stake)
    if status is not None:
        qs = qs.filter(status=status)
    if open_seats is not None:
        qs = qs.annotate(_seated=Count("seats")).filter(max_seats__gte=F("_seated") + open_seats)
    if cursor is not None:
        micros, _sep, pk = cursor.partition(".")
        created = _EPOCH + timedelta(microseconds=int(micros))
        qs = qs.filter(Q(created_at__lt=created) | Q(created_at=created, id__lt=int(pk)))
    limit = max(1, min(limit, TABLE_LIST_MAX))
    rows = list(qs.order_by("-created_at", "-id")[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return TablePage(rows, _table_cursor(rows[-1]) if more else None)


def table_hands(*, table_id: int) -> list[Hand]:
    """The table's hands, newest first (at most 100), with their frozen terms."""
    if not Table.objects.filter(pk=table_id).exists():
        raise NotFound(_("No such table."))
    return list(Hand.objects.filter(table_id=table_id).order_by("-number")[:TABLE_HANDS_MAX])


def table_get(*, table_id: int) -> Table:
    table = table_queryset().filter(pk=table_id).first()
    if table is None:
        raise NotFound(_("No such table."))
    return table


def table_current_hand_ids(table_ids: Iterable[int]) -> dict[int, int]:
    """table id → id of its playing hand, for tables that have one."""
    rows = Hand.objects.filter(table_id__in=list(table_ids), status=Hand.Status.PLAYING)
    return dict(rows.values_list("table_id", "id"))


def table_hand_for_redirect(*, table_id: int) -> int:
    """The table's playing hand, or else its latest hand (404 when it never dealt one)."""
    if not Table.objects.filter(pk=table_id).exists():
        raise NotFound(_("No such table."))
    hand_id = (
        Hand.objects.filter(table_id=table_id)
        .order_by("-status", "-number")  # descending, "playing" comes before "ended"
        .values_list("id", flat=True)
        .first()
    )
    if hand_id is None:
        raise NotFound(_("This table has not dealt a hand yet."), code="no_hand")
    return hand_id


# --------------------------------------------------------------------------- hands


def hand_get(*, hand_id: int) -> Hand:
    """The hand with its table, and its seats with their players' names."""
    hand = Hand.objects.select_related("table").filter(pk=hand_id).first()
    if hand is None:
        raise NotFound(_("No such hand."))
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
    ended: bool  # an ended hand never changes again
    seat: int | None  # the caller's seat; None for a spectator


# The long poll and the 304 answer from this fixed statement (no ORM compilation on the
# hottest path): the hand's seq and status, the caller's seat in it (NULL: none) and whether
# its table takes spectators.
_HAND_VERSION_SQL = f"""
    SELECT h.seq, h.status, (
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
    seq, status, seat, table_id, spectators = row
    if seat is None and not hand_spectators_allowed(Table(pk=table_id, spectators=spectators)):
        raise not_a_participant()
    return HandVersion(hand_etag(hand_id, seq), seq, status == Hand.Status.ENDED, seat)


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
        "fixed_deck": hand.deck is not None,
    }


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
        }
    )
    if ended and view.get("settlement") is not None:
        view["settlement"] = {**view["settlement"], "quan": hand.quan}
    return view


def spectator_view(state: HandState) -> dict[str, Any]:
    """The public view of a hand's state: mats, doors, the card on offer, stock count, whose
    turn, hand counts, visible faults and, after the end, how it ended — never a seat's hand
    or dealt cards, its hidden faults or the stock, before or after the end."""
    view = view_for(state, 0)
    for key in ("my_faults", "stock"):
        view.pop(key, None)
    view.update({"my_seat": None, "hand": [], "legal_moves": []})
    view["seats"] = [
        {
            **{k: v for k, v in seat.items() if k not in ("hand", "dealt")},
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
        }
    )
    if ended and view.get("settlement") is not None:
        view["settlement"] = {**view["settlement"], "quan": hand.quan}
    return view


def _event_dict(event: HandEvent) -> dict[str, Any]:
    return {
        "seq": event.seq,
        "type": event.type,
        "actor_seat": event.actor_seat,
        "system": event.system,
        "bot": event.bot,
        "move": event.payload or None,
        "effects": event.effects,
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
    """One page of the events as the player at ``seat`` sees them (a spectator: None).

    The page's ``seq`` is the hand's seq as of the events query, never below its last event:
    ``hand`` was read before it, and moves appended since then are in the page.
    """
    limit = max(1, min(limit, EVENTS_PAGE_MAX))
    qs = HandEvent.objects.filter(hand_id=hand.pk).order_by("seq")
    if after_seq is not None:
        qs = qs.filter(seq__gt=after_seq)
    rows = list(qs[: limit + 1])
    # Events are appended in seq order under the hand's lock: the last row read is at most the
    # hand's seq when the query ran (equal to it when the page reaches the end of the log).
    seq = max([hand.seq, *(ev.seq for ev in rows)])
    has_more = len(rows) > limit
    rows = rows[:limit]
    events = []
    for ev in rows:
        d = _event_dict(ev)
        if ev.seq == 0:
            d["effects"] = _deal_effects(hand, seat, ev.effects)
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
            "fixed_deck": hand.deck is not None,
            "deck": [CODES[k] for k in hand_deck(hand)],
            "result": hand.result if hand.status == Hand.Status.ENDED else None,
        }
    )
    return view


# --------------------------------------------------------------------------- table output


def table_pots(table_ids: Iterable[int]) -> dict[int, int]:
    """table id → the Quan in its gà góp pot (tables that never had one are absent)."""
    rows = LedgerAccount.objects.filter(
        kind=LedgerAccount.Kind.POT, table_id__in=list(table_ids)
    ).values_list("table_id", "balance")
    return dict(rows)


def _players_leaving(hand_ids: Iterable[int]) -> set[tuple[int, int]]:
    """(hand id, user id) of the players who left these hands mid-hand."""
    rows = HandSeat.objects.filter(hand_id__in=list(hand_ids), left_at__isnull=False)
    return set(rows.values_list("hand_id", "user_id"))


def table_summaries(tables: list[Table]) -> list[dict[str, Any]]:
    """Tables as the API shows them (seats prefetched by :func:`table_queryset`)."""
    current = table_current_hand_ids(t.pk for t in tables)
    leaving = _players_leaving(current.values())
    pots = table_pots(t.pk for t in tables)
    out = []
    for t in tables:
        seats = list(t.seats.all())
        hand_id = current.get(t.pk)
        out.append(
            {
                "id": t.pk,
                "name": t.name,
                "room": t.room_id,
                "stake": t.stake,
                "max_seats": t.max_seats,
                "mode": t.mode,
                "ruleset": t.ruleset,
                "timeouts": {
                    "turn": t.turn_timeout,
                    "tra_cua": t.tra_cua_timeout,
                    "declare": t.declare_timeout,
                    "ready": t.ready_timeout,
                },
                "owner": {"id": t.owner_id, "username": t.owner.username},
                "status": t.status,
                "seats": [
                    {
                        "number": s.number,
                        "user_id": s.player_id,
                        "username": s.player.username,
                        "ready": s.ready,
                        "leaving": (hand_id, s.player_id) in leaving,
                        "auto_u": s.auto_u,
                        "auto_chiu": s.auto_chiu,
                        "bot": s.player.is_bot,
                    }
                    for s in seats
                ],
                "open_seats": t.max_seats - len(seats),
                "current_hand_id": hand_id,
                "pot": pots.get(t.pk, 0),
                "ready_deadline": (
                    table_ready_deadline(t, seats) if t.status == Table.Status.OPEN else None
                ),
                "fixed_deck": t.fixed_deck is not None,
                "spectators": t.spectators,
                "practice": t.practice,
                "bot_delay": t.bot_delay,
                "created_at": t.created_at,
            }
        )
    return out


def table_summary(*, table_id: int) -> dict[str, Any]:
    return table_summaries([table_get(table_id=table_id)])[0]


# --------------------------------------------------------------------------- rules


def rules_presets() -> list[dict[str, Any]]:
    return list_presets()


def ruleset_from_spec(spec: Any) -> Ruleset:
    """Build a ruleset from its spec; 400 ``invalid_ruleset`` naming the bad key."""
    try:
        return build_ruleset(spec)
    except RulesetError as exc:
        raise InvalidInput(
            _("The ruleset is invalid: %(key)s: %(reason)s."),
            code="invalid_ruleset",
            errors={f"ruleset.{exc.key}": [exc.message]},
            key=exc.key,
            reason=exc.message,
        ) from exc


def rules_score(*, ruleset_spec: Any, cuoc: Any) -> dict[str, int]:
    """Score a cước map under a ruleset: ``{"base", "ga", "total"}``; 400 naming a bad key."""
    ruleset = ruleset_from_spec(ruleset_spec)
    try:
        return score(ruleset, cuoc).to_dict()
    except ValueError as exc:
        key, _sep, message = str(exc).partition(": ")
        raise InvalidInput(
            _("The cước are invalid: %(reason)s."),
            code="invalid_cuoc",
            errors={key: [message or str(exc)]},
            reason=str(exc),
        ) from exc


def rules_evaluate(
    *, ruleset_spec: Any, mat: Any, hand: Any, card: Any, source: Any, context: Any
) -> dict[str, Any]:
    """The calculator: whether ``hand`` + ``card`` wins, its cước and score; 400 on bad input,
    whose ``errors`` name the fields at fault (``hand``, ``mat``, ``context.dealt_hand`` …)."""
    from games.rules.calculator import InvalidField, evaluate
    from games.rules.errors import InvalidInput as RulesInvalidInput

    ruleset = ruleset_from_spec(ruleset_spec)
    try:
        return evaluate(ruleset, mat=mat, hand=hand, card=card, source=source, context=context)
    except RulesInvalidInput as exc:
        fields = exc.fields if isinstance(exc, InvalidField) else ()
        errors = {field: [exc.message] for field in fields} or None
        raise InvalidInput(rule_message(exc), code=exc.code, errors=errors, **exc.params) from exc


def rule_message(exc: RuleError) -> Message:
    """A rules-core refusal's message: its English template (marked by the core's
    ``gettext_noop``) through gettext, to be filled with ``exc.params``."""
    return _(exc.template)


# --------------------------------------------------------------------------- rooms (the lobby)

# English names of the default rooms (the stored name is the Vietnamese one).
ROOM_NAMES_EN = {
    "nen-dat": "Earthen floor",
    "chieu-coi": "Sedge mat",
    "sap-gu-2": "Wooden platform 2",
    "sap-gu-vip": "Wooden platform VIP",
}


def room_catalogue() -> list[dict[str, Any]]:
    """Every room in lobby order: its names, requirements, fee schedule, and how many tables
    are open in it (not closed) and players seated at them. Three queries."""
    from games.models import Room

    rooms = list(Room.objects.order_by("position", "slug"))
    live = Table.objects.exclude(status=Table.Status.CLOSED)
    tables = dict(live.values("room_id").annotate(n=Count("id")).values_list("room_id", "n"))
    seated = dict(
        Seat.objects.filter(table__in=live)
        .values("table__room_id")
        .annotate(n=Count("id"))
        .values_list("table__room_id", "n")
    )
    return [
        {
            "slug": r.slug,
            "name": {"vi": r.name, "en": ROOM_NAMES_EN.get(r.slug, r.name)},
            "requirements": {
                "balance": r.min_balance,
                "level": r.min_level,
                "vip_points": r.min_vip_points,
                "badge": r.needs_badge,
            },
            "vip": r.vip,
            "fees": r.fees,
            "xuong_sai_settled": r.xuong_sai_settled,
            "open_tables": tables.get(r.slug, 0),
            "players_seated": seated.get(r.slug, 0),
        }
        for r in rooms
    ]


# --------------------------------------------------------------------------- hand history

HISTORY_PAGE_DEFAULT = 20
HISTORY_PAGE_MAX = 100


class HistoryPage(NamedTuple):
    hands: list[dict[str, Any]]
    next_cursor: str | None


def _seat_result(hand: Hand, position: int) -> str | None:
    """One seat's result in an ended hand: ``won``, ``lost``, ``hoa`` or ``u_lao`` (it claimed
    a false ù); None while the hand is played."""
    if hand.status != Hand.Status.ENDED:
        return None
    outcome = (hand.result or {}).get("outcome") or {}
    kind = outcome.get("result")
    if kind == "hoa":
        return "hoa"
    if outcome.get("seat") == position:
        return "won" if kind == "u" else "u_lao"
    return "lost"


def _seat_quan(hand: Hand, position: int) -> int | None:
    """The seat's Quan change booked for the hand (net, after fees); None before it is booked."""
    if hand.quan is None:
        return None
    for seat in hand.quan.get("seats") or []:
        if seat.get("seat") == position:
            return seat.get("net")
    return None


def _history_item(hs: HandSeat) -> dict[str, Any]:
    hand = hs.hand
    return {
        "id": hand.pk,
        "table_id": hand.table_id,
        "number": hand.number,
        "room": hand.room_id,
        "stake": hand.stake,
        "n_seats": hand.n_seats,
        "seat": hs.position,
        "table_seat": hs.table_seat,
        "status": hand.status,
        "outcome": (hand.result or {}).get("outcome") if hand.result else None,
        "result": _seat_result(hand, hs.position),
        "quan": _seat_quan(hand, hs.position),
        "practice": hand.table.practice,
        "created_at": hand.created_at,
        "ended_at": hand.ended_at,
    }


def hand_history(
    *,
    user: Any,
    ended_only: bool = False,
    cursor: int | None = None,
    limit: int = HISTORY_PAGE_DEFAULT,
) -> HistoryPage:
    """The user's hands, newest first (by hand id, on the HandSeat (user, -hand) index), one page
    after ``cursor`` (a hand id): each with its table, room, stake, the user's seat, status,
    result and Quan change."""
    limit = max(1, min(limit, HISTORY_PAGE_MAX))
    qs = HandSeat.objects.filter(user=user).select_related("hand__table")
    if ended_only:
        qs = qs.filter(hand__status=Hand.Status.ENDED)
    if cursor is not None:
        qs = qs.filter(hand_id__lt=cursor)
    rows = list(qs.order_by("-hand_id")[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    items = [_history_item(hs) for hs in rows]
    return HistoryPage(items, str(rows[-1].hand_id) if more else None)


def player_by_username(username: str) -> Any:
    """The active player with this username (case-insensitive); 404 otherwise."""
    from accounts.models import User

    user = User.objects.filter(username__iexact=username, is_active=True).first()
    if user is None:
        raise NotFound(_("No such player."))
    return user


def player_profile(*, user: Any) -> dict[str, Any]:
    """A player's public profile: level, hands played and won (ended hands; practice tables
    left out), win rate, the biggest win in points (what the others paid it in one hand), the
    cước it wins with most often (declared, ties by slug) and when it joined. Two queries."""
    from games.services.progression import hand_winner

    ended = HandSeat.objects.filter(
        user=user, hand__status=Hand.Status.ENDED, hand__table__practice=False
    )
    played = ended.count()
    wins = ended.filter(hand__result__outcome__result="u").values_list("position", "hand__result")
    n_wins = 0
    biggest = 0
    cuoc_counts: dict[str, int] = {}
    for position, result in wins.iterator():
        if hand_winner(result) != position:
            continue
        n_wins += 1
        transfers = (result.get("settlement") or {}).get("transfers") or []
        points = sum(t["points"] for t in transfers if t.get("to") == position)
        biggest = max(biggest, points)
        for slug, count in ((result.get("declaration") or {}).get("cuoc") or {}).items():
            cuoc_counts[slug] = cuoc_counts.get(slug, 0) + count
    favourite = min(cuoc_counts, key=lambda k: (-cuoc_counts[k], k)) if cuoc_counts else None
    return {
        "username": user.username,
        "display_name": user.display_name,
        "level": user.level,
        "xp": user.xp,
        "badge": user.badge,
        "hands_played": played,
        "wins": n_wins,
        "win_rate": round(n_wins / played, 4) if played else None,
        "biggest_win_points": biggest,
        "favourite_cuoc": favourite,
        "member_since": user.date_joined,
    }
