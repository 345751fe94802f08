"""A hand's state: the replay of its log (RULES.md §13), with an in-process LRU in front, and
the hand's latest seq published in the cache for long polls.

Nothing is persisted beside the log: replaying a whole hand costs under a millisecond of rules
work (``bench/rules_bench.py``) plus one query for its events, and a state is never read back
from the database (no pickles). The LRU is keyed by (hand id, seq, seed hash); states are
immutable, so sharing them between threads is safe.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from django.core.cache import cache
from django.db import connection, router, transaction
from django.db.models.base import ModelState
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from accounts.record_keys import record_keys
from core import metrics
from core.errors import Conflict, RateLimited
from core.pipeline import in_pipeline
from games.archive import hand_events_archived
from games.live.announce import announce_record, cache_raise_batched, hand_feed_publish
from games.models import Hand, HandEvent, HandSeat
from games.rules import HandConfig, HandState, Mode, new_hand, shuffle
from games.rules.cards import parse_kinds
from games.rules.chain import chain_break
from games.rules.errors import RuleError
from games.rules.fair_deal import fair_deck
from games.rules.replay import replay, replay_from
from games.rules.ruleset import Ruleset, ruleset_from_stored
from games.rules.verify import Discrepancy, log_break, mac_discrepancies, seed_break
from games.rules.views import result_of

logger = logging.getLogger(__name__)

STATE_LRU_SIZE = 512
HAND_VERSION_TTL_SECONDS = 24 * 3600


# --------------------------------------------------------------------------- a hand's seats

# Every poll and move reads a hand's seats with this fixed statement: the ORM's compilation of
# the equivalent join and prefetch costs more than the query itself (bench/api_bench.py).
_HAND_SEATS_SQL = f"""
    SELECT s.id, s.position, s.user_id, u.username, s.table_seat, s.auto_u, s.auto_chiu,
           s.left_at
    FROM {HandSeat._meta.db_table} s JOIN {User._meta.db_table} u ON u.id = s.user_id
    WHERE s.hand_id = %s ORDER BY s.position
"""


SeatRow = tuple[int, int, int, str, int, bool, bool, Any]


class _SeatMade(NamedTuple):
    """One seat of a hand as ``Model.__init__`` makes it (the seat's and its player's
    attributes, all of their fields, defaults included, but their ``_state``): copied into new
    instances for each load: 7.5 µs a load of four seats against 99 for calling ``__init__``
    again for every field of the two models (neither model has pre_init or post_init
    receivers, which ``__init__`` would send)."""

    seat: dict[str, Any]
    user: dict[str, Any]


_seat_rows: OrderedDict[tuple[int, Any], list[_SeatMade]] = OrderedDict()
_seat_rows_lock = threading.Lock()


def _attributes(instance: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(instance).items() if k != "_state"}


def _seats_made(rows: list[SeatRow]) -> list[_SeatMade]:
    made = []
    for pk, position, user_id, username, table_seat, auto_u, auto_chiu, left_at in rows:
        seat = HandSeat(
            pk=pk,
            position=position,
            user_id=user_id,
            table_seat=table_seat,
            auto_u=auto_u,
            auto_chiu=auto_chiu,
            left_at=left_at,
        )
        user = User(pk=user_id, username=username)
        made.append(_SeatMade(_attributes(seat), _attributes(user)))
    return made


def _instance(model: type[Any], attributes: dict[str, Any], db: str) -> Any:
    """A new instance of ``model`` holding ``attributes``, as ``model(**fields)`` leaves it
    once related to an instance of database ``db``."""
    instance = model.__new__(model)
    instance.__dict__.update(attributes)
    instance._state = ModelState()
    instance._state.db = db
    return instance


def hand_seats_load(hand: Hand) -> list[HandSeat]:
    """The hand's seats (with their players' usernames), kept on ``hand`` as
    ``prefetch_related("hand_seats")`` would, for ``hand.seat_list()``.

    Remembered in this process by (hand id, ``hand.seats_version``): a hand's seats change only
    when a player leaves mid-hand, and ``seat_leave`` raises the version in the same
    transaction, so a changed seat always comes with a new key. Otherwise one query. Each load
    makes new instances (a caller may change its own)."""
    key = (hand.pk, hand.seats_version)
    with _seat_rows_lock:
        made = _seat_rows.get(key)
    if made is None:
        with connection.cursor() as cursor:
            cursor.execute(_HAND_SEATS_SQL, [hand.pk])
            made = _seats_made(list(cursor.fetchall()))
        _seat_rows_put(key, made)
    # What HandSeat(hand=hand) and seat.user = User(…) leave in the instances' states (the
    # relations' descriptors: the database the router names for each, the related instance).
    seat_db = router.db_for_write(HandSeat, instance=hand)
    user_db = router.db_for_write(User, instance=hand)
    seats = []
    for seat_made in made:
        seat = _instance(HandSeat, seat_made.seat, seat_db)
        seat.hand_id = hand.pk
        seat._state.fields_cache["hand"] = hand
        seat._state.fields_cache["user"] = _instance(User, seat_made.user, user_db)
        seats.append(seat)
    hand._prefetched_objects_cache = {"hand_seats": seats}
    return seats


# --------------------------------------------------------------------------- building a state


@lru_cache(maxsize=64)
def _ruleset_from_json(stored_json: str) -> Ruleset:
    return ruleset_from_stored(json.loads(stored_json))


def hand_ruleset(hand: Hand) -> Ruleset:
    """The ruleset the hand stored at its deal (``Hand.frozen_ruleset``, remembered by its
    JSON): never today's presets, except to upcast a record older than frozen tables."""
    return _ruleset_from_json(json.dumps(hand.ruleset, sort_keys=True))


def hand_config(hand: Hand) -> HandConfig:
    """The rules core's configuration of the hand: its frozen terms and its seats' preferences
    at the deal (``hand_seats``, prefetched by the callers that hold many hands)."""
    seats = hand.seat_list()
    return HandConfig(
        n_seats=hand.n_seats,
        mode=Mode(hand.mode),
        ruleset=hand_ruleset(hand),
        previous_winner=hand.previous_winner,
        prefs=tuple((s.auto_u, s.auto_chiu) for s in seats),
    )


def hand_deck(hand: Hand) -> list[int]:
    """The deck this hand was dealt from: the fixed deck of a test table, else the fair deal's
    (server seed, every seat's seed, the hand's id: games.rules.fair_deal), or for a hand dealt
    before the fair deal (no ``client_seeds``) the server seed's alone."""
    if hand.deck is not None:
        return parse_kinds(hand.deck)
    if hand.client_seeds is not None:
        return fair_deck(
            server_seed=bytes.fromhex(hand.seed), hand_id=hand.pk, client_seeds=hand.client_seeds
        )
    return shuffle(bytes.fromhex(hand.seed))


def hand_initial_state(hand: Hand) -> HandState:
    return new_hand(hand_config(hand), hand_deck(hand), hand.dealer)


# what games.rules.chain reads of each event
CHAIN_FIELDS = (
    "seq",
    "type",
    "actor_seat",
    "system",
    "bot",
    "payload",
    "effects",
    "prev_hash",
    "hash",
)
# and what vouches for each (games.rules.record_mac)
RECORD_FIELDS = (*CHAIN_FIELDS, "mac", "mac_key")
EVENT_FIELDS = ("seq", "type", "actor_seat", "system", "bot", "payload", "effects", "created_at")


def hand_log_replay(
    hand: Hand,
    *,
    upto: int | None = None,
    fields: tuple[str, ...] = EVENT_FIELDS,
    check: Callable[[HandState, dict[str, Any]], None] | None = None,
    archived: list[HandEvent] | None = None,
) -> Iterator[tuple[dict[str, Any], HandState]]:
    """The one replay (``games.rules.replay``) over the hand's log read in seq order (up to
    ``upto``): each event (its ``fields``, upcast) with the state after it. One query; none
    when the log is given as ``archived`` (games.archive: a month no longer in the table)."""
    if archived is not None:
        rows: Iterable[dict[str, Any]] = [
            {f: getattr(e, f) for f in fields} for e in archived if upto is None or e.seq <= upto
        ]
    else:
        events = HandEvent.objects.of_hand(hand).order_by("seq")
        if upto is not None:
            events = events.filter(seq__lte=upto)
        rows = events.values(*fields)
    return _refused_as_broken(
        hand, replay(hand_config(hand), hand_deck(hand), hand.dealer, rows, check=check)
    )


def _refused_as_broken(
    hand: Hand, steps: Iterator[tuple[dict[str, Any], HandState]]
) -> Iterator[tuple[dict[str, Any], HandState]]:
    """The replay's steps; a stored event the rules refuse (a log changed outside the server)
    is the domain error ``record_broken``, a 409 problem naming the hand, never a 500. The
    checkers (``hand_log_break``) say where and why."""
    try:
        yield from steps
    except RuleError as exc:
        logger.error("hand %s: its stored log does not replay: %s", hand.pk, exc)
        raise Conflict(
            _("Hand %(hand_id)s's record does not replay: it was changed outside the server."),
            code="record_broken",
            hand_id=hand.pk,
        ) from exc


def hand_replay(
    hand: Hand, *, upto: int | None = None, archived: list[HandEvent] | None = None
) -> HandState:
    """reduce(apply, moves in seq order, new_hand(…)): the state after event ``upto`` (or the
    last). Always reads the log (or the ``archived`` one given); never the LRU. The records
    after the end (``settled``, ``voided``) are not moves: the replay passes them by."""
    state = hand_initial_state(hand)
    fields = ("seq", "type", "payload")
    seen = 0
    for seen, (_event, state) in enumerate(  # noqa: B007
        hand_log_replay(hand, upto=upto, fields=fields, archived=archived), start=1
    ):
        pass
    if not seen and archived is None:
        # not even the deal: the hand's month is archived (games.archive), or it has no log
        archived = hand_events_archived(hand)
        if archived:
            return hand_replay(hand, upto=upto, archived=archived)
    return state


class StateLru:
    """Recent states keyed by (hand id, seq, seed hash), and for each (hand id, seed hash) the
    latest seq kept (where :func:`hand_state` carries a replay on from)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[tuple[int, int, str], HandState] = OrderedDict()
        self._latest: dict[tuple[int, str], int] = {}
        # each hand's latest put: its seed hash and the hand's creation time, when given
        self._seed_of: dict[int, tuple[str, datetime | None]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[int, int, str]) -> HandState | None:
        with self._lock:
            state = self._data.get(key)
            if state is not None:
                self._data.move_to_end(key)
            return state

    def latest_before(self, key: tuple[int, int, str]) -> tuple[int, HandState] | None:
        """The kept state of the same hand (and seed) with the highest seq below ``key``'s."""
        hand_id, seq, seed_hash = key
        with self._lock:
            latest = self._latest.get((hand_id, seed_hash))
            if latest is None or latest >= seq:
                return None
            state = self._data.get((hand_id, latest, seed_hash))
            return None if state is None else (latest, state)

    def latest_of(self, hand_id: int) -> tuple[tuple[int, int, str], HandState, datetime] | None:
        """The key, state and hand's creation time of hand ``hand_id``'s kept state with the
        highest seq (of its latest seed), or None (none kept, or put without the time)."""
        with self._lock:
            seed_hash, created_at = self._seed_of.get(hand_id, (None, None))
            if seed_hash is None or created_at is None:
                return None
            key = (hand_id, self._latest[(hand_id, seed_hash)], seed_hash)
            state = self._data.get(key)
            return None if state is None else (key, state, created_at)

    def put(
        self, key: tuple[int, int, str], state: HandState, created_at: datetime | None = None
    ) -> None:
        """Keep ``state`` under ``key``; ``created_at``, the hand's creation time, lets
        :func:`hand_state_carry_send` read the events after it."""
        hand_id, seq, seed_hash = key
        with self._lock:
            self._data[key] = state
            self._data.move_to_end(key)
            if self._latest.get((hand_id, seed_hash), -1) < seq:
                self._latest[(hand_id, seed_hash)] = seq
            if self._latest[(hand_id, seed_hash)] == seq:
                self._seed_of[hand_id] = (seed_hash, created_at)
            while len(self._data) > self.size:
                (h, q, sh), _ = self._data.popitem(last=False)
                if self._latest.get((h, sh)) == q:
                    del self._latest[(h, sh)]
                    if self._seed_of.get(h, (None,))[0] == sh:
                        del self._seed_of[h]

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._latest.clear()
            self._seed_of.clear()
        with _seat_rows_lock:
            _seat_rows.clear()

    def items(self) -> list[tuple[tuple[int, int, str], HandState]]:
        with self._lock:
            return list(self._data.items())


state_lru = StateLru(STATE_LRU_SIZE)


def _lru_key(hand: Hand) -> tuple[int, int, str]:
    return (hand.pk, hand.seq, hand.seed_hash)


def hand_state(hand: Hand) -> HandState:
    """The hand's state at ``hand.seq``: from the LRU, else the replay of its log up to that
    seq. A move committed after ``hand`` was read is not replayed: a view never shows content
    newer than the seq (and ETag) it is served with."""
    key = _lru_key(hand)
    state = state_lru.get(key)
    if state is None:
        earlier = state_lru.latest_before(key)
        state = _carried_on(hand, *earlier) if earlier is not None else None
        if state is None:
            state = hand_replay(hand, upto=hand.seq)
        state_lru.put(key, state, hand.created_at)
    return state


# The events after a kept state (no upper bound: :func:`_folded_on` drops what is past the
# hand's seq, so one statement serves both readers, the lock's flight included). The hand's
# creation time, the log's partition key, is kept with the state for the lock's flight: read
# from the row in the same statement, the partitions are pruned only as it runs, and planning
# it costs 0.9 ms against 0.25. Through ``games_handevent_since`` (games 0036: ``WHERE hand_id
# = … AND hand_created_at = … AND seq > … ORDER BY seq`` on the log, planned once a session;
# PostgreSQL planned the statement itself afresh at every execution, 0.17 ms each).
_EVENTS_SINCE_SQL = "SELECT seq, type, payload FROM games_handevent_since(%s, %s, %s) ORDER BY seq"
_PAYLOAD_FIELD = HandEvent._meta.get_field("payload")


def _carried_on(hand: Hand, seq: int, state: HandState) -> HandState | None:
    """The state at ``hand.seq`` from the kept ``state`` at ``seq``: the log's events after it
    (one query for those alone, not the whole log) folded on by the one replay
    (``games.rules.replay.replay_from``). None when the log does not hold every one of them
    (an archived month): the caller replays the whole log."""
    # A fixed statement, as the ORM's values() would read it (the ORM compiled the query for
    # every carried-on state: 3 % of a web worker's time under bench/load_bench.py).
    with connection.cursor() as cursor:
        cursor.execute(_EVENTS_SINCE_SQL, [hand.pk, hand.created_at, seq])
        rows = cursor.fetchall()
    return _folded_on(hand, seq, state, rows)


def _folded_on(
    hand: Hand, seq: int, state: HandState, rows: list[tuple[int, str, Any]]
) -> HandState | None:
    """``state`` (at ``seq``) folded on by the event rows (seq, type, payload) up to
    ``hand.seq``; None unless they are every event in between."""
    load = _PAYLOAD_FIELD.from_db_value
    events = [
        {"seq": s, "type": t, "payload": load(payload, None, connection)}
        for s, t, payload in rows
        if s <= hand.seq
    ]
    if [e["seq"] for e in events] != list(range(seq + 1, hand.seq + 1)):
        return None
    after = state
    for _event, after in replay_from(state, events):  # noqa: B007
        pass
    return after


def hand_state_carry_send(hand_id: int) -> Callable[[Hand | None], None]:
    """Inside a pipeline (``core.pipeline``), send the read of hand ``hand_id``'s events after
    the latest state this process keeps of it, in the flight of the statements sent with it;
    the function returned, given the hand as read after it (locked; None: no such hand),
    carries that state on to the hand's seq and keeps it, so that :func:`hand_state` finds it
    without a query. Sent by ``hand_lock`` after the lock's statement: it runs once the lock is held and sees every
    event up to the locked row's seq. Nothing is sent outside a pipeline (it would be a round
    trip of its own, needed only when another process moved) or when no state is kept."""
    kept = state_lru.latest_of(hand_id) if in_pipeline() else None
    if kept is None:
        return _nothing_carried
    (_, seq, seed_hash), state, created_at = kept
    cursor = connection.cursor()
    cursor.execute(_EVENTS_SINCE_SQL, [hand_id, created_at, seq])

    def carry(hand: Hand | None) -> None:
        with cursor:
            rows = cursor.fetchall()
        if hand is None:
            return
        key = _lru_key(hand)
        if hand.seed_hash != seed_hash or hand.seq <= seq or state_lru.get(key) is not None:
            return
        after = _folded_on(hand, seq, state, rows)
        if after is not None:
            state_lru.put(key, after, hand.created_at)

    return carry


def _nothing_carried(hand: Hand | None) -> None:
    pass


def hand_store_problems(hand: Hand) -> list[str]:
    """Why what the store holds for the hand is not the replay of its log (empty when it is):
    the row's seq against the log's last event, where the log stops being true
    (:func:`hand_log_break`), every event the record key does not vouch for
    (:func:`hand_mac_problems`), then any state in this process's LRU and an ended hand's stored
    result against the replay's. The row and its log are read as the caller reads them: one
    snapshot (``games.audit.hands_checked``) for a hand that may move meanwhile."""
    problems = []
    archived = hand_events_archived(hand) or None  # its month archived: its log is there
    events = _log_as_stored(hand, archived)
    last_seq = events[-1]["seq"] if events else None
    if last_seq != hand.seq:
        problems.append(f"hand.seq is {hand.seq} but the log ends at {last_seq}")
    unvouched = hand_mac_problems(hand, events=events)
    broken = hand_log_break(hand, events=events)
    if broken is not None:  # nothing past it replays: the first bad seq is the report
        return [*problems, str(broken), *unvouched]
    problems.extend(unvouched)
    replayed = hand_replay(hand, archived=archived)
    for (hand_id, seq, _seed_hash), state in state_lru.items():
        if hand_id == hand.pk and seq == hand.seq and state != replayed:
            problems.append(f"the remembered state at seq {seq} differs from the replay")
    if hand.status == Hand.Status.ENDED and hand.result != _as_json(result_of(replayed)):
        problems.append("the stored result is not the replay's")
    return problems


def hand_mac_problems(hand: Hand, *, events: list[dict[str, Any]] | None = None) -> list[str]:
    """Every event of the hand's log whose MAC does not vouch for its hash under the record key
    (``discrepancy at seq N: why``; ``games.rules.verify.mac_discrepancies``): an event inserted
    with database credentials alone, however well it chains. All of them, in seq order."""
    if events is None:
        events = _log_as_stored(hand, hand_events_archived(hand) or None)
    return [str(found) for found in mac_discrepancies(record_keys(), events)]


def hand_log_break(hand: Hand, *, events: list[dict[str, Any]] | None = None) -> Discrepancy | None:
    """Where the hand's record stops being a hand dealt from its seed and played by the rules
    (``discrepancy at seq N: why``), or None: the seed against its published hash, then the log
    (``events``, as :func:`_log_as_stored` reads them; read here when not given) by
    ``games.rules.verify.log_break``: its seqs, the deal's deck commitment, the hash chain and
    every move. Run before anything that replays a log the database owner may have changed."""
    broken = seed_break(hand.seed, hand.seed_hash)
    if broken is not None:
        return broken
    try:
        config, deck = hand_config(hand), hand_deck(hand)
    except ValueError as exc:  # a rules error included: a stored deck or term refused
        return Discrepancy(0, f"the deal cannot be rebuilt from the hand's row: {exc}")
    if events is None:
        events = _log_as_stored(hand, hand_events_archived(hand) or None)
    return log_break(
        hand_id=hand.pk,
        seed_hash=hand.seed_hash,
        config=config,
        deck=deck,
        dealer=hand.dealer,
        events=events,
    )


def _log_as_stored(hand: Hand, archived: list[HandEvent] | None) -> list[dict[str, Any]]:
    """The hand's events in seq order with the fields the hash chain covers, from the log or
    from its archived month."""
    if archived:
        return [{f: getattr(e, f) for f in RECORD_FIELDS} for e in archived]
    return list(HandEvent.objects.of_hand(hand).order_by("seq").values(*RECORD_FIELDS))


def _as_json(value: Any) -> Any:
    """``value`` as it reads back from a JSON column (tuples as lists)."""
    return json.loads(json.dumps(value))


# ------------------------------------------------------------------ hands as committed here

# The playing hands this process last committed a move of, as it committed them (row, table,
# seats), by hand id: a long poll woken by that move's announcement, and a read or a re-arm whose
# version query found that seq, render their seats' views from here instead of reading the row
# again (``games.live.render``; 4 % of a web worker's samples). Only a hand at exactly that seq
# (and seats' version, when known) is used: one moved on since, or committed by another process,
# is read as before. Ended hands are not kept: their result and settlement
# are JSON columns, which read back in the column's key order. A player leaving mid-hand changes
# the row without a move: the process that writes it forgets the hand; another that kept it
# still renders the announced seq's views from it, with the seats as they were at that seq (the
# next read of the hand, keyed by its seats' version, renders the new ones).
COMMITTED_HANDS_KEPT = 256
_committed: OrderedDict[int, Hand] = OrderedDict()
_committed_lock = threading.Lock()


def _hand_copy(hand: Hand) -> Hand:
    """What ``copy.copy(hand)`` makes (Django's ``Model.__getstate__``: the instance's dict,
    its ``_state`` and that state's cache of related objects copied one level deep), without
    the pickle protocol's round through ``__reduce__``, the app registry and
    ``__setstate__``: a fifth of the cost, twice for each move (``hand_committed_keep``,
    ``hand_committed_at``). A hand has no binary column (the memoryviews ``__getstate__``
    turns into bytes)."""
    model_state = ModelState()
    model_state.__dict__.update(hand._state.__dict__)
    model_state.fields_cache = hand._state.fields_cache.copy()
    kept = Hand.__new__(Hand)
    kept.__dict__.update(hand.__dict__)
    kept._state = model_state
    return kept


def _seat_rows_keep(hand: Hand) -> None:
    """Remember the seats ``hand`` holds (prefetched, their players with them) under its seats
    version, as :func:`hand_seats_load` would after its query: a hand moved in one flight is
    never loaded, and the next lock of it would otherwise read them again."""
    seats = getattr(hand, "_prefetched_objects_cache", {}).get("hand_seats")
    key = (hand.pk, hand.seats_version)
    if seats is None or any("user" not in s._state.fields_cache for s in seats):
        return
    with _seat_rows_lock:
        if key in _seat_rows:
            return
    rows = [
        (
            s.pk,
            s.position,
            s.user_id,
            s.user.username,
            s.table_seat,
            s.auto_u,
            s.auto_chiu,
            s.left_at,
        )
        for s in seats
    ]
    _seat_rows_put(key, _seats_made(rows))


def _seat_rows_put(key: tuple[int, Any], made: list[_SeatMade]) -> None:
    with _seat_rows_lock:
        _seat_rows[key] = made
        while len(_seat_rows) > STATE_LRU_SIZE:
            _seat_rows.popitem(last=False)


def hand_committed_keep(hand: Hand) -> None:
    """Remember ``hand`` as its transaction committed it (a copy: the caller's goes on), and
    its seats."""
    kept = _hand_copy(hand) if hand.status == Hand.Status.PLAYING else None
    if kept is not None:
        _seat_rows_keep(hand)
    with _committed_lock:
        if kept is None:
            _committed.pop(hand.pk, None)
            _heard.pop(hand.pk, None)
            return
        _committed[hand.pk] = kept
        _committed.move_to_end(hand.pk)
        while len(_committed) > COMMITTED_HANDS_KEPT:
            gone, _ = _committed.popitem(last=False)
            _heard.pop(gone, None)


def hand_committed_at(hand_id: int, seq: int, seats_version: int | None = None) -> Hand | None:
    """The hand as this process committed it at ``seq`` (and ``seats_version``, if given), if
    that is the last it committed, or as another process's moves heard since carried it on
    (:func:`hand_move_heard`)."""
    kept = _committed_current(hand_id)
    if kept is None or kept.seq != seq:
        return None
    if seats_version is not None and kept.seats_version != seats_version:
        return None
    return _hand_copy(kept)


def hand_committed_last(hand_id: int) -> Hand | None:
    """The hand as this process last committed it (a copy), at whatever seq, if it was still
    being played, carried on by the moves of other processes heard since
    (:func:`hand_move_heard`): what a move sent in one flight is checked on
    (``games.services.hands``; the lock refuses it if the row has moved on since)."""
    kept = _committed_current(hand_id)
    return _hand_copy(kept) if kept is not None else None


def hand_committed_playing(hand_id: int, seq: int) -> bool:
    """Whether this process's last commit of the hand left it at ``seq``, still being played."""
    with _committed_lock:
        kept = _committed.get(hand_id)
        return kept is not None and kept.seq == seq


def hand_committed_forget(hand_id: int | None = None) -> None:
    """The hand's row changed without a move (a player left it: its seats' version): read it
    again next time. None: forget every hand."""
    with _committed_lock:
        if hand_id is None:
            _committed.clear()
            _heard.clear()
        else:
            _committed.pop(hand_id, None)
            _heard.pop(hand_id, None)


# ------------------------------------------------------- moves other processes committed

# A move announces itself whole (``games.live.announce.announce_record``): its event and what
# it changed on the hand's row, with what the row was before it. A process that keeps the hand
# as it was before that move (it committed the move before, or carried its copy on by an earlier
# record) carries its copy and its state on by it, so that the hand's next move sent to it is
# made in one flight (``games.services.hands``), where it had to read the row and the events it
# missed first: a round trip and a replay, 1.3-1.6 ms of a move under bench/api_bench.py, whose
# four players' moves come to two web workers (docs/decisions/heard-move-records.md).
# Kept as heard (text) and folded on only when the hand is asked for, in the asker's thread: the
# event loop that hears them parses none. A record carries a copy on only if it follows it: the
# same hand (id, deal time, seed), seq, ``updated_at`` (every write of the row sets it: a row
# written in between by anything else breaks the chain), seats' version and table's
# ``updated_at``, and the event's hash is the SHA-256 of the record's content chained to the
# copy's last hash (games.rules.chain) — else it is dropped and the move takes the two-flight
# way. The lock of a one-flight move checks the row as the copy has it (games 0039), and the
# log's chain trigger the event's ``prev_hash``: a record that lied would make a move refused
# and made the two-flight way, never a wrong one.
HEARD_PER_HAND = 16  # records kept for a hand, waiting to be folded on
_heard: dict[int, dict[int, bytes]] = {}  # hand id -> seq -> record's JSON (hands kept only)
_RECORD_HEAD = re.compile(rb"^m([0-9]{1,18}):([0-9]{1,10})$")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _at(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text is not None else None


def hand_move_record(hand: Hand, event: HandEvent, before: datetime) -> Callable[[], str]:
    """What the move ``event`` just appended to the locked ``hand`` (the row as the move left
    it, still being played; ``before``: its ``updated_at`` before the move) announces of
    itself, as a function that makes its text (``"m<hand id>:<seq> <JSON>"``) later: the
    values are taken now, the caller's hand goes on."""
    head = f"m{hand.pk}:{event.seq} "
    times = {  # (immutable: formatted in the announcer's thread, off the move's path)
        "created_at": hand.created_at,
        "table_updated_at": hand.table.updated_at,
        "before": before,
        "updated_at": hand.updated_at,
        "last_event_at": hand.last_event_at,
        "deadline_at": hand.deadline_at,
    }
    fields = {
        "seed_hash": hand.seed_hash,
        "seats_version": hand.seats_version,
        "type": event.type,
        "actor_seat": event.actor_seat,
        "system": event.system,
        "bot": event.bot,
        "payload": event.payload,
        "effects": event.effects,
        "hash": event.hash,
    }

    def text() -> str:
        body = {**fields, **{name: _iso(at) for name, at in times.items()}}
        return head + json.dumps(body, separators=(",", ":"), ensure_ascii=False)

    return text


def hand_move_heard(message: bytes) -> bool:
    """A move record heard from the announcements (``games.live.subscription``, in the event
    loop: nothing parsed but its head): kept if this process keeps its hand at an earlier seq,
    to be folded on when the hand is next asked for. Whether it was kept."""
    head, _, body = message.partition(b" ")
    found = _RECORD_HEAD.match(head)
    if found is None or not body:
        return False
    hand_id, seq = int(found.group(1)), int(found.group(2))
    with _committed_lock:
        kept = _committed.get(hand_id)
        if kept is None or seq <= kept.seq:
            return False
        pending = _heard.setdefault(hand_id, {})
        if len(pending) >= HEARD_PER_HAND and seq not in pending:
            return False
        pending[seq] = body
        return True


def _committed_current(hand_id: int) -> Hand | None:
    """The hand this process keeps (not a copy: the caller copies it), carried on by the
    records heard since as far as they follow it."""
    with _committed_lock:
        kept = _committed.get(hand_id)
        pending = _heard.pop(hand_id, None) if kept is not None else None
    if kept is None or not pending:
        return kept
    moved = kept
    while (body := pending.get(moved.seq + 1)) is not None:
        after = _record_folded(moved, moved.seq + 1, body)
        metrics.MOVES_HEARD.labels(folded="yes" if after is not None else "no").inc()
        if after is None:
            break
        moved = after
    later = {seq: body for seq, body in pending.items() if seq > moved.seq + 1}
    with _committed_lock:
        if _committed.get(hand_id) is kept:
            if moved is not kept:
                _committed[hand_id] = moved
            if later:
                _heard[hand_id] = {**later, **_heard.get(hand_id, {})}
    return moved


def _record_folded(hand: Hand, seq: int, body: bytes) -> Hand | None:
    """A copy of ``hand`` carried on to ``seq`` by its move's record, its state kept in the
    LRU; None when the record does not follow the hand as kept (the section's comment)."""
    try:
        record = json.loads(body)
        last_hash = hand_last_hash_kept(hand)
        state = state_lru.get(_lru_key(hand))
        table = hand._state.fields_cache.get("table")
        if (
            last_hash is None
            or state is None
            or table is None
            or _at(record["created_at"]) != hand.created_at
            or record["seed_hash"] != hand.seed_hash
            or record["seats_version"] != hand.seats_version
            or _at(record["table_updated_at"]) != table.updated_at
            or _at(record["before"]) != hand.updated_at
        ):
            return None
        # the event as a link of the hand's chain after the copy's last (games.rules.chain)
        link = {**record, "seq": seq, "prev_hash": last_hash}
        if chain_break(hand=hand.pk, seed_hash=last_hash, events=[link]) is not None:
            return None
        digest = record["hash"]
        event = {"seq": seq, "type": record["type"], "payload": record["payload"]}
        after = state
        for _event, after in replay_from(state, [event]):  # noqa: B007
            pass
        moved = _hand_copy(hand)
        moved.seq = seq
        moved.updated_at = _at(record["updated_at"])
        moved.last_event_at = _at(record["last_event_at"])
        moved.deadline_at = _at(record["deadline_at"])
    except Exception:  # garbled, or a move the kept state refuses: not carried on
        logger.warning("hand %s: the record of seq %s does not follow", hand.pk, seq, exc_info=True)
        return None
    hand_last_hash_keep(moved, seq, digest)
    state_lru.put(_lru_key(moved), after, moved.created_at)
    return moved


# The hash of a hand's event, kept on the instance that read or appended it: (seq, hash).
_LAST_HASH = "_chan_last_hash"


def hand_last_hash_keep(hand: Hand, seq: int, digest: str | None) -> None:
    """Remember on ``hand`` the hash of its event ``seq`` (read with the lock, or just
    appended, or read for a view), so that neither the next append nor the next view of the
    same instance needs a query for it."""
    if digest:
        setattr(hand, _LAST_HASH, (seq, digest))


def hand_last_hash_kept(hand: Hand) -> str | None:
    """The hash of the event at ``hand.seq`` if this instance knows it."""
    kept = getattr(hand, _LAST_HASH, None)
    return kept[1] if kept is not None and kept[0] == hand.seq else None


# --------------------------------------------------------------------------- publishing


def hand_version_key(hand_id: int) -> str:
    """The cache key holding a hand's latest seq (set on commit by every move; for long polls)."""
    return f"games:hand:{hand_id}:seq"


def hand_published_seq(hand_id: int) -> int | None:
    """The hand's seq as published in the cache; None when the cache has none or is down."""
    try:
        value = cache.get(hand_version_key(hand_id))
    except Exception:
        logger.warning("hand %s: the cache did not answer", hand_id, exc_info=True)
        metrics.cache_failed(use="long_poll")
        return None
    return value if isinstance(value, int) else None


def _publish_if_absent(hand_id: int, seq: int) -> None:
    """Put a seq read from the row into an empty cache (``add`` never lowers a published seq)."""
    try:
        cache.add(hand_version_key(hand_id), seq, timeout=HAND_VERSION_TTL_SECONDS)
    except Exception:
        logger.warning("hand %s: the cache did not answer", hand_id, exc_info=True)


def hand_publish_on_commit(
    hand: Hand, state: HandState, record: Callable[[], str] | None = None
) -> None:
    """Once the transaction commits: remember the state in the LRU and publish the new seq in
    the cache, where long polls watch it; ``record``: the move's record
    (:func:`hand_move_record`), announced before the seq.

    Best effort: the move is committed whatever the cache does, so a failure here is logged and
    never reaches the client (``robust``). The seq only ever rises in the cache, so a late
    publish of an older move cannot hide a newer one from the long polls.
    """
    key, seq, hand_id = _lru_key(hand), hand.seq, hand.pk

    def publish() -> None:
        state_lru.put(key, state, hand.created_at)
        hand_committed_keep(hand)
        version_key = hand_version_key(hand_id)
        try:
            if cache_raise_batched(version_key, seq, HAND_VERSION_TTL_SECONDS):
                pass  # with the commit's announcements (games.live.announce): no round trip here
            elif hasattr(cache, "set_if_higher"):  # Redis (chan_api/redis_cache.py): one round trip
                cache.set_if_higher(version_key, seq, HAND_VERSION_TTL_SECONDS)
            else:
                cached = cache.get(version_key)
                if not isinstance(cached, int) or cached < seq:
                    cache.set(version_key, seq, timeout=HAND_VERSION_TTL_SECONDS)
        except Exception:
            logger.warning("hand %s: could not publish seq %s", hand_id, seq, exc_info=True)
            metrics.cache_failed(use="publish")
            # Without the key the long polls read the row instead of an outdated seq.
            with suppress(Exception):
                cache.delete(version_key)
        if record is not None:
            announce_record(record)
        hand_feed_publish(hand_id, seq)

    transaction.on_commit(publish, robust=True)


LONG_POLLS_PER_TOKEN = 10
_SLOT_TTL_SECONDS = 120  # above the longest wait: a process killed mid-wait frees its slot
# Without Redis the count is read and written under a lock: this process's threads take the
# threading lock, other processes sharing a file cache (make run: the web server and the
# worker) the flock of a file beside it. Django's file cache incr() is a read and a write
# (11 polls at once were all admitted), and add/incr/touch are three steps on any backend.
_SLOT_LOCK = threading.Lock()
_SLOT_LOCK_FILE = "long-poll-slots.lock"


@contextmanager
def _slots_locked() -> Iterator[None]:
    with _SLOT_LOCK:
        directory = getattr(cache, "_dir", None)  # django's FileBasedCache
        if directory is None:  # a memory cache: this process is the only one that sees it
            yield
            return
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, _SLOT_LOCK_FILE), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def _slot_count_add(key: str, step: int, limit: int | None = None) -> int:
    """Add ``step`` to a slot counter under :func:`_slots_locked`, never below 0 nor (with
    ``limit``) above it; return the count it would reach (above ``limit``: not stored)."""
    with _slots_locked():
        current = cache.get(key, 0)
        current = current if isinstance(current, int) else 0
        wanted = max(0, current + step)
        if limit is None or wanted <= limit:
            cache.set(key, wanted, timeout=_SLOT_TTL_SECONDS)
        return wanted


# An ended poll's slot is parked in its process for SLOT_PARK_SECONDS before it is given back
# (games.live.long_poll frees the parked ones in batches): the same token's next poll in this
# process (chan-bot polls again at once) takes it with no round trip to the cache. What a token
# is counted for in the cache is then too high by its parked slots, for at most those seconds.
# A slot is only taken from the park while this process's last count of that token in the
# cache is younger than half the count's expiry, so the count never expires under live polls.
SLOT_PARK_SECONDS = 1.0
_parked: dict[str, list[float]] = {}  # slot key -> when each parked slot was parked
_counted_at: dict[str, float] = {}  # slot key -> when this process last counted it in the cache
_parked_lock = threading.Lock()


def long_poll_slot_park(key: str) -> None:
    """A poll that held ``key``'s slot ended: park the slot (see ``SLOT_PARK_SECONDS``)."""
    with _parked_lock:
        _parked.setdefault(key, []).append(time.monotonic())


def _slot_unparked(key: str) -> bool:
    with _parked_lock:
        times = _parked.get(key)
        fresh = time.monotonic() - _counted_at.get(key, -1e9) < _SLOT_TTL_SECONDS / 2
        if not times or not fresh:
            return False
        times.pop()
        if not times:
            del _parked[key]
        return True


def long_poll_slots_due() -> tuple[list[str], float | None]:
    """The parked slots to give back now (parked ``SLOT_PARK_SECONDS`` ago or more), and the
    seconds until the next one is due (None: none left parked)."""
    now = time.monotonic()
    due: list[str] = []
    with _parked_lock:
        for key in list(_parked):
            times = _parked[key]
            while times and now - times[0] >= SLOT_PARK_SECONDS:
                due.append(key)
                times.pop(0)
            if not times:
                del _parked[key]
        for key in [k for k, at in _counted_at.items() if now - at >= _SLOT_TTL_SECONDS / 2]:
            del _counted_at[key]  # (too old to take a parked slot by: forgotten)
        oldest = min((times[0] for times in _parked.values()), default=None)
    return due, None if oldest is None else oldest + SLOT_PARK_SECONDS - now


def long_poll_slot_take_parked(*, token_id: str) -> str | None:
    """:func:`long_poll_slot_take` when one of the token's slots is parked in this process (its
    last poll just ended): taken with no round trip, from the event loop. None: none is parked
    (take one the usual way, in a thread)."""
    key = _slot_key(token_id)
    return key if _slot_unparked(key) else None


def _slot_key(token_id: int | str) -> str:
    return f"games:long-polls:{token_id}"


def long_poll_slot_take(*, token_id: int | str | None) -> str | None:
    """Take one of the token's ``LONG_POLLS_PER_TOKEN`` waiting slots, so one client cannot
    take every waiter; beyond them ``RateLimited`` (429, retry in a second). A slot parked in
    this process is taken first (``SLOT_PARK_SECONDS``); else it is counted in the cache, shared
    by every web process, atomically on every backend (Redis: one INCR; else under a lock, see
    :func:`_slots_locked`); when the cache does not answer the poll waits uncounted (as the
    throttles fail open). Returns the key to give to :func:`long_poll_slot_park` when the poll
    ends (None: nothing was counted)."""
    if token_id is None:
        return None
    key = _slot_key(token_id)
    if _slot_unparked(key):
        return key
    redis = hasattr(cache, "incr_expiring")  # chan_api/redis_cache.py: one round trip
    try:
        if redis:
            waiting = cache.incr_expiring(key, _SLOT_TTL_SECONDS)
        else:
            waiting = _slot_count_add(key, 1, limit=LONG_POLLS_PER_TOKEN)
    except Exception:
        logger.warning("long polls of token %s: the cache did not answer", token_id)
        metrics.cache_failed(use="long_poll_slots")
        return None
    with _parked_lock:
        _counted_at[key] = time.monotonic()
    if waiting > LONG_POLLS_PER_TOKEN:
        if redis:  # counted anyway: give it back (the locked count never stored it)
            long_poll_slots_free([key])
        raise RateLimited(
            _("At most %(limit)s long polls may wait at once for one token."),
            retry_after=1,
            limit=LONG_POLLS_PER_TOKEN,
        )
    return key


def long_poll_slots_free(keys: list[str]) -> None:
    """Give back the slots of long polls that ended (keys from :func:`long_poll_slot_take`)."""
    if hasattr(cache, "decr_many"):  # Redis (chan_api/redis_cache.py): one round trip
        with suppress(Exception):
            cache.decr_many(keys)
        return
    for key in keys:
        with suppress(Exception):
            _slot_count_add(key, -1)


@contextmanager
def long_poll_slot(*, token_id: int | str | None) -> Iterator[None]:
    """Hold a waiting slot (:func:`long_poll_slot_take`) for the block."""
    key = long_poll_slot_take(token_id=token_id)
    try:
        yield
    finally:
        if key is not None:
            long_poll_slots_free([key])


@metrics.long_poll
def hand_wait_for_seq(
    *,
    hand_id: int,
    after_seq: int,
    timeout: float,
    poll: float = 0.02,
    db_backoff: tuple[float, float] = (0.5, 2.0),
) -> None:
    """Block until the hand's seq is above ``after_seq`` or ``timeout`` seconds pass.

    Watches the published seq every ``poll`` seconds, holding no database connection. Only
    when the cache has no seq for the hand (never published, evicted, or the cache is down)
    does it read the row, and publish its seq for the next polls; while the cache still has
    none it reads the row again after ``db_backoff[0]`` seconds, doubling up to
    ``db_backoff[1]``.
    """
    start = time.monotonic()
    deadline = start + timeout
    next_db, db_every = start, db_backoff[0]
    _release_connection()
    while True:
        seq = hand_published_seq(hand_id)
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
                _publish_if_absent(hand_id, row_seq)
                next_db, db_every = now + db_every, min(2 * db_every, db_backoff[1])
            else:
                pause = next_db - now  # the cache keeps no seq: wait for the next row read
        time.sleep(min(pause, max(0.0, deadline - now)))


def _release_connection() -> None:
    """Give the database connection back while we wait (not inside a transaction: tests)."""
    if not connection.in_atomic_block:
        connection.close()
