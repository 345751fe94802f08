"""Everything that reads tables and hands for the API.

A hand's state is the replay of its log (:func:`hand_replay`); :func:`hand_state` serves it from
an in-process LRU or the pickled cache on the Hand row when their seq is the log's, and replays
otherwise. Views of a hand are built here for one viewer and never hold another seat's hand or
the stock order before the hand ends.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import fields, is_dataclass, replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, NamedTuple

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, F, Prefetch, Q, QuerySet
from django.utils import translation

from accounts.selectors import user_is_auditor
from chan_api.problems import ApiProblem, bad_request, forbidden, not_found
from games.models import Hand, HandEvent, Seat, Table
from games.rules import HandConfig, HandState, Mode, apply, move_from_dict, new_hand, shuffle
from games.rules import state as rules_state
from games.rules.analysis import analysis_for
from games.rules.cards import CODES, codes_of, parse_kinds
from games.rules.errors import RuleError, fill
from games.rules.ruleset import Ruleset, RulesetError, build_ruleset, list_presets
from games.rules.scoring import score
from games.rules.state import Phase
from games.rules.views import full_view, view_for

logger = logging.getLogger(__name__)

EVENTS_PAGE_MAX = 100
TABLE_LIST_MAX = 100
STATE_LRU_SIZE = 512
HAND_VERSION_TTL_SECONDS = 24 * 3600


# --------------------------------------------------------------------------- hand state


def hand_version_key(hand_id: int) -> str:
    """The cache key holding a hand's latest seq (set on commit by move_submit; for long polls)."""
    return f"games:hand:{hand_id}:seq"


def hand_cached_seq(hand_id: int) -> int | None:
    """The hand's seq as published in the cache; None when the cache has none or is down."""
    try:
        value = cache.get(hand_version_key(hand_id))
    except Exception:
        logger.warning("hand %s: the cache did not answer", hand_id, exc_info=True)
        return None
    return value if isinstance(value, int) else None


def _hand_seed_cached_seq(hand_id: int, seq: int) -> None:
    """Put a seq read from the row into an empty cache (``add`` never lowers a published seq)."""
    try:
        cache.add(hand_version_key(hand_id), seq, timeout=HAND_VERSION_TTL_SECONDS)
    except Exception:
        logger.warning("hand %s: the cache did not answer", hand_id, exc_info=True)


@lru_cache(maxsize=64)
def _ruleset_from_json(spec_json: str) -> Ruleset:
    return build_ruleset(json.loads(spec_json))


def hand_ruleset(hand: Hand) -> Ruleset:
    return _ruleset_from_json(json.dumps(hand.ruleset, sort_keys=True))


def hand_config(hand: Hand) -> HandConfig:
    return HandConfig(
        n_seats=hand.n_seats,
        mode=Mode(hand.mode),
        ruleset=hand_ruleset(hand),
        previous_winner=hand.previous_winner,
        prefs=tuple((bool(u), bool(c)) for u, c in hand.prefs),
    )


def hand_deck(hand: Hand) -> list[int]:
    """The deck this hand was dealt from: the fixed deck of a test table, else the seed's."""
    if hand.deck is not None:
        return parse_kinds(hand.deck)
    return shuffle(bytes.fromhex(hand.seed))


def hand_initial_state(hand: Hand) -> HandState:
    return new_hand(hand_config(hand), hand_deck(hand), hand.dealer)


def hand_replay(hand: Hand, *, upto: int | None = None) -> HandState:
    """reduce(apply, moves in seq order, new_hand(…)): the state after event ``upto`` (or the last).

    Always reads the log; never the cache.
    """
    state = hand_initial_state(hand)
    events = HandEvent.objects.filter(hand_id=hand.pk, seq__gt=0).order_by("seq")
    if upto is not None:
        events = events.filter(seq__lte=upto)
    for payload in events.values_list("payload", flat=True):
        state = apply(state, move_from_dict(payload))
    return state


class _StateLru:
    """Recent states keyed by (hand id, seq, seed hash): states are immutable, so sharing is safe."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[tuple[int, int, str], HandState] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[int, int, str]) -> HandState | None:
        with self._lock:
            state = self._data.get(key)
            if state is not None:
                self._data.move_to_end(key)
            return state

    def put(self, key: tuple[int, int, str], state: HandState) -> None:
        with self._lock:
            self._data[key] = state
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


state_lru = _StateLru(STATE_LRU_SIZE)


def _state_format() -> bytes:
    """A tag naming the shape of the rules core's state classes: a blob pickled by a release with
    other fields is never loaded by this one (it replays the log instead)."""
    shape = [
        (name, [f.name for f in fields(cls)])
        for name, cls in sorted(vars(rules_state).items())
        if isinstance(cls, type) and is_dataclass(cls)
    ]
    return b"chan-state:" + hashlib.sha256(repr(shape).encode()).hexdigest()[:16].encode() + b":"


STATE_FORMAT = _state_format()


def state_pickle(state: HandState) -> bytes:
    """The cache blob: the state without its config (rebuilt from the Hand row on load)."""
    return STATE_FORMAT + pickle.dumps(replace(state, config=None), protocol=5)


def _unpickle_state(hand: Hand) -> HandState | None:
    blob = bytes(hand.state_blob or b"")
    if not blob.startswith(STATE_FORMAT):
        return None
    return replace(pickle.loads(blob[len(STATE_FORMAT) :]), config=hand_config(hand))


def hand_state(hand: Hand) -> HandState:
    """The hand's state at its latest seq: from the LRU, the row's cache, or a replay of the log."""
    key = (hand.pk, hand.seq, hand.seed_hash)
    state = state_lru.get(key)
    if state is not None:
        return state
    state = _unpickle_state(hand) if hand.state_seq == hand.seq else None
    if state is None:
        state = hand_replay(hand)
    state_lru.put(key, state)
    return state


def hand_cached_state(hand: Hand) -> HandState | None:
    """The state pickled on the Hand row, or None (for checks of cache against replay)."""
    return _unpickle_state(hand)


# --------------------------------------------------------------------------- tables


def table_queryset() -> QuerySet[Table]:
    return Table.objects.select_related("owner").prefetch_related(
        Prefetch("seats", queryset=Seat.objects.select_related("player").order_by("number"))
    )


def table_list(
    *, room: str | None = None, stake: int | None = None, open_seats: int | None = None
) -> list[Table]:
    """Tables that are not closed, newest first (at most 100); ``open_seats``: at least that many
    free seats."""
    qs = table_queryset().exclude(status=Table.Status.CLOSED)
    if room is not None:
        qs = qs.filter(room=room)
    if stake is not None:
        qs = qs.filter(stake=stake)
    if open_seats is not None:
        qs = qs.annotate(_seated=Count("seats")).filter(max_seats__gte=F("_seated") + open_seats)
    return list(qs.order_by("-created_at", "-id")[:TABLE_LIST_MAX])


def table_get(*, table_id: int) -> Table:
    table = table_queryset().filter(pk=table_id).first()
    if table is None:
        raise not_found("No such table.", "Không có bàn này.")
    return table


def table_current_hand_ids(table_ids: Iterable[int]) -> dict[int, int]:
    """table id → id of its playing hand, for tables that have one."""
    rows = Hand.objects.filter(table_id__in=list(table_ids), status=Hand.Status.PLAYING)
    return dict(rows.values_list("table_id", "id"))


def table_hand_for_redirect(*, table_id: int) -> int:
    """The table's playing hand, or else its latest hand (404 when it never dealt one)."""
    if not Table.objects.filter(pk=table_id).exists():
        raise not_found("No such table.", "Không có bàn này.")
    hand_id = (
        Hand.objects.filter(table_id=table_id)
        .order_by("-status", "-number")  # descending, "playing" comes before "ended"
        .values_list("id", flat=True)
        .first()
    )
    if hand_id is None:
        raise ApiProblem(
            404, "no_hand", "This table has not dealt a hand yet.", "Bàn này chưa chia ván nào."
        )
    return hand_id


# --------------------------------------------------------------------------- hands


def hand_get(*, hand_id: int) -> Hand:
    hand = Hand.objects.select_related("table").filter(pk=hand_id).first()
    if hand is None:
        raise not_found("No such hand.", "Không có ván này.")
    return hand


def not_a_participant() -> ApiProblem:
    return forbidden(
        "not_a_participant",
        "You are not playing in this hand.",
        "Bạn không chơi trong ván này.",
    )


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


def hand_etag_for_user(*, hand_id: int, user: Any) -> HandVersion:
    """The ETag, seq and end of a hand for a participant, reading one row (no state, no view)."""
    row = Hand.objects.filter(pk=hand_id).values_list("seq", "seats", "status").first()
    if row is None:
        raise not_found("No such hand.", "Không có ván này.")
    seq, seats, status = row
    if not any(entry["user"] == user.pk for entry in seats):
        raise not_a_participant()
    return HandVersion(hand_etag(hand_id, seq), seq, status == Hand.Status.ENDED)


def hand_deadline(
    hand: Hand, table: Table, state: HandState, *, actor_leaving: bool = False
) -> datetime | None:
    """When the server acts for the seat to move (RULES.md §12): the phase's timeout after the
    last turn event, or ``CHAN_AUTO_PLAY_DELAY`` for a báo seat or one that left the table."""
    if state.phase is Phase.ENDED:
        return None
    seconds = {
        Phase.TRA_CUA: table.tra_cua_timeout,
        Phase.DECLARE: table.declare_timeout,
    }.get(state.phase, table.turn_timeout)
    if actor_leaving or state.seats[state.turn].bao:
        seconds = min(seconds, settings.CHAN_AUTO_PLAY_DELAY)
    return hand.last_event_at + timedelta(seconds=seconds)


def _deadline(hand: Hand, table: Table, state: HandState) -> str | None:
    return None if hand.deadline_at is None else hand.deadline_at.isoformat()


def clock_overdue(*, now: datetime, limit: int = 1000) -> tuple[list[int], list[int]]:
    """Work the clock is late for (its wake-up was lost: broker outage, worker killed): playing
    hands whose deadline has passed, and open tables whose ready deadline has."""
    hands = list(
        Hand.objects.filter(status=Hand.Status.PLAYING, deadline_at__lte=now)
        .order_by("deadline_at")
        .values_list("pk", flat=True)[:limit]
    )
    tables = []
    candidates = (
        Table.objects.filter(status=Table.Status.OPEN)
        .annotate(n_ready=Count("seats", filter=Q(seats__ready=True)))
        .filter(n_ready__gte=1)
        .prefetch_related("seats")[:limit]
    )
    for table in candidates:
        deadline = table_ready_deadline(table, list(table.seats.all()))
        if deadline is not None and deadline <= now:
            tables.append(table.pk)
    return hands, tables


def _players(hand: Hand) -> list[dict[str, Any]]:
    return [
        {
            "seat": i,
            "user_id": e["user"],
            "username": e["username"],
            "table_seat": e["table_seat"],
            "left": bool(e.get("left")),
        }
        for i, e in enumerate(hand.seats)
    ]


def hand_view_for_user(
    *, hand: Hand, user: Any, table: Table | None = None, state: HandState | None = None
) -> dict[str, Any]:
    """The caller's view of the hand (rules view_for) plus seq, deadline, seed hash, players;
    after the end also the result and the revealed seed."""
    seat = hand_seat_for_user(hand, user)
    if state is None:
        state = hand_state(hand)
    view = view_for(state, seat)
    table = table or hand.table
    ended = hand.status == Hand.Status.ENDED
    view.update(
        {
            "hand_id": hand.pk,
            "table_id": hand.table_id,
            "number": hand.number,
            "seq": hand.seq,
            "status": hand.status,
            "mats": [s["mat"] for s in view["seats"]],
            "players": _players(hand),
            "analysis": analysis_for(state, seat) if not ended else None,
            "deadline": _deadline(hand, table, state),
            "seed_hash": hand.seed_hash,
            "fixed_deck": hand.deck is not None,
            "result": hand.result if ended else None,
            "seed": hand.seed if ended else None,
        }
    )
    return view


def _event_dict(event: HandEvent) -> dict[str, Any]:
    return {
        "seq": event.seq,
        "type": event.type,
        "actor_seat": event.actor_seat,
        "system": event.system,
        "move": event.payload or None,
        "effects": event.effects,
        "created_at": event.created_at.isoformat(),
    }


def _deal_effects(hand: Hand, seat: int | None, effects: list[dict[str, Any]]) -> list[Any]:
    """The deal as one viewer may see it: its own dealt cards; every seat's after the end."""
    state = hand_state(hand)
    out = [dict(e) for e in effects]
    for e in out:
        if e.get("type") != "deal":
            continue
        if seat is not None:
            e["hand"] = codes_of(state.seats[seat].dealt)
        if hand.status == Hand.Status.ENDED:
            e["hands"] = [codes_of(s.dealt) for s in state.seats]
            e["deck"] = [CODES[k] for k in hand_deck(hand)]
    return out


def hand_events_for_user(
    *, hand: Hand, user: Any, after_seq: int | None = None, limit: int = EVENTS_PAGE_MAX
) -> dict[str, Any]:
    """One page of the caller's events after ``after_seq`` (all from the deal when None).

    The page's ``seq`` is the hand's seq as of the events query, never below its last event:
    ``hand`` was read before it, and moves appended since then are in the page.
    """
    seat = hand_seat_for_user(hand, user)
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


def hand_replay_for_user(*, hand: Hand, user: Any, seq: int | None = None) -> dict[str, Any]:
    """The full state at ``seq`` (every hand and the stock): participants once the hand has
    ended, auditors (``accounts.audit_hands``) at any time."""
    auditor = user_is_auditor(user)
    participant = hand.seat_of(user.pk) is not None
    ended = hand.status == Hand.Status.ENDED
    if not auditor and not (participant and ended):
        if participant:
            raise forbidden(
                "hand_not_ended",
                "A participant may replay the hand only after it ends.",
                "Người chơi chỉ được xem lại ván sau khi ván kết thúc.",
            )
        raise not_a_participant()
    if seq is None:
        seq = hand.seq
    if not 0 <= seq <= hand.seq:
        raise bad_request(
            "seq_out_of_range",
            f"seq must be between 0 and {hand.seq}.",
            f"seq phải nằm trong khoảng 0 đến {hand.seq}.",
            errors={"seq": [f"must be between 0 and {hand.seq}"]},
        )
    state = hand_state(hand) if seq == hand.seq else hand_replay(hand, upto=seq)
    view = full_view(state)
    view.update(
        {
            "hand_id": hand.pk,
            "table_id": hand.table_id,
            "seq": seq,
            "last_seq": hand.seq,
            "status": hand.status,
            "players": _players(hand),
            "seed_hash": hand.seed_hash,
            "seed": hand.seed,
            "fixed_deck": hand.deck is not None,
            "deck": [CODES[k] for k in hand_deck(hand)],
            "result": hand.result if ended else None,
        }
    )
    return view


# --------------------------------------------------------------------------- table output


def table_ready_deadline(table: Table, seats: list[Seat]) -> datetime | None:
    """When the players who are not ready are unseated (RULES.md §12) and the ready ones, if two
    or more, are dealt: ``ready_timeout`` seconds after the first player said ready. None while
    nobody is ready, or when everybody is (the hand is dealt at once)."""
    ready_at = sorted(s.ready_at for s in seats if s.ready and s.ready_at is not None)
    if not ready_at or len(ready_at) == len(seats):
        return None
    return ready_at[0] + timedelta(seconds=table.ready_timeout)


def table_summaries(tables: list[Table]) -> list[dict[str, Any]]:
    """Tables as the API shows them (seats prefetched by :func:`table_queryset`)."""
    current = table_current_hand_ids(t.pk for t in tables)
    out = []
    for t in tables:
        seats = list(t.seats.all())
        out.append(
            {
                "id": t.pk,
                "name": t.name,
                "room": t.room,
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
                        "leaving": s.leaving,
                        "auto_u": s.auto_u,
                        "auto_chiu": s.auto_chiu,
                    }
                    for s in seats
                ],
                "open_seats": t.max_seats - len(seats),
                "current_hand_id": current.get(t.pk),
                "ready_deadline": (
                    table_ready_deadline(t, seats) if t.status == Table.Status.OPEN else None
                ),
                "fixed_deck": t.fixed_deck is not None,
                "created_at": t.created_at,
            }
        )
    return out


def table_summary(*, table_id: int) -> dict[str, Any]:
    return table_summaries([table_get(table_id=table_id)])[0]


# --------------------------------------------------------------------------- hand waiting


def hand_wait_for_seq(
    *,
    hand_id: int,
    after_seq: int,
    timeout: float,
    poll: float = 0.02,
    db_backoff: tuple[float, float] = (0.5, 2.0),
) -> None:
    """Block until the hand's seq is above ``after_seq`` or ``timeout`` seconds pass.

    Watches the version key in Django's cache (published on commit by every move) every
    ``poll`` seconds, holding no database connection. Only when the cache has no seq for the
    hand (never published, evicted, or the cache is down) does it read the row, and put its seq
    in the cache for the next polls; while the cache still has none it reads the row again
    after ``db_backoff[0]`` seconds, doubling up to ``db_backoff[1]``.
    """
    start = time.monotonic()
    deadline = start + timeout
    next_db, db_every = start, db_backoff[0]
    _release_connection()
    while True:
        seq = hand_cached_seq(hand_id)
        if seq is not None and seq > after_seq:
            return
        now = time.monotonic()
        if now >= deadline:
            return
        pause = poll
        if seq is None:
            if now >= next_db:
                row_seq = Hand.objects.filter(pk=hand_id).values_list("seq", flat=True).first()
                _release_connection()
                if row_seq is None or row_seq > after_seq:
                    return
                _hand_seed_cached_seq(hand_id, row_seq)
                next_db, db_every = now + db_every, min(2 * db_every, db_backoff[1])
            else:
                pause = next_db - now  # the cache keeps no seq: wait for the next row read
        time.sleep(min(pause, max(0.0, deadline - now)))


def _release_connection() -> None:
    """Give the database connection back while we wait (not inside a transaction: tests)."""
    if not connection.in_atomic_block:
        connection.close()


# --------------------------------------------------------------------------- rules


def rules_presets() -> list[dict[str, Any]]:
    return list_presets()


def ruleset_from_spec(spec: Any) -> Ruleset:
    """Build a ruleset from its spec; 400 ``invalid_ruleset`` naming the bad key."""
    try:
        return build_ruleset(spec)
    except RulesetError as exc:
        raise bad_request(
            "invalid_ruleset",
            f"The ruleset is invalid: {exc.key}: {exc.message}.",
            f"Bộ luật không hợp lệ: {exc.key}: {exc.message}.",
            errors={f"ruleset.{exc.key}": [exc.message]},
        ) from exc


def rules_score(*, ruleset_spec: Any, cuoc: Any) -> dict[str, int]:
    """Score a cước map under a ruleset: ``{"base", "ga", "total"}``; 400 naming a bad key."""
    ruleset = ruleset_from_spec(ruleset_spec)
    try:
        return score(ruleset, cuoc).to_dict()
    except ValueError as exc:
        key, _, message = str(exc).partition(": ")
        raise bad_request(
            "invalid_cuoc",
            f"The cước are invalid: {exc}.",
            f"Cước không hợp lệ: {exc}.",
            errors={key: [message or str(exc)]},
        ) from exc


# --------------------------------------------------------------------------- audit


def hand_cache_problems(hand: Hand) -> list[str]:
    """Why the hand's cached state is not the replay of its log (empty when it is)."""
    problems = []
    last_seq = (
        HandEvent.objects.filter(hand_id=hand.pk)
        .order_by("-seq")
        .values_list("seq", flat=True)
        .first()
    )
    if last_seq != hand.seq:
        problems.append(f"hand.seq is {hand.seq} but the log ends at {last_seq}")
    if hand.state_seq != hand.seq:
        problems.append(f"the cache is at seq {hand.state_seq}, the hand at {hand.seq}")
    cached = hand_cached_state(hand)
    if cached is None:
        problems.append("no cached state")
    elif cached != hand_replay(hand):
        problems.append("the cached state differs from the replay of the log")
    return problems


def rules_evaluate(
    *, ruleset_spec: Any, mat: Any, hand: Any, card: Any, source: Any, context: Any
) -> dict[str, Any]:
    """The calculator: whether ``hand`` + ``card`` wins, its cước and score; 400 on bad input,
    whose ``errors`` name the fields at fault (``hand``, ``mat``, ``context.dealt_hand`` …)."""
    from games.rules.calculator import InvalidField, evaluate
    from games.rules.errors import InvalidInput

    ruleset = ruleset_from_spec(ruleset_spec)
    try:
        return evaluate(ruleset, mat=mat, hand=hand, card=card, source=source, context=context)
    except InvalidInput as exc:
        fields = exc.fields if isinstance(exc, InvalidField) else ()
        errors = {field: [exc.message] for field in fields} or None
        raise bad_request(exc.code, exc.message, rule_error_vi(exc), errors=errors) from exc


def rule_error_vi(exc: RuleError) -> str:
    """The Vietnamese message of a rules-core refusal: its template through gettext."""
    with translation.override("vi"):
        return fill(translation.gettext(exc.template), exc.params)
