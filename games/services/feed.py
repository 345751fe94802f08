"""The players' feeds: the services append what concerns a player, in the same
transaction as the fact, and announce it on commit (``games.live.announce``).

A player's entries are numbered 1, 2, 3 … in commit order: the writer takes the player's
transaction-level advisory lock, then appends after the last seq in a statement that starts
once the lock is held, so a reader that has seen seq N will never find a later commit below N
(docs/decisions/live-delivery-and-feed.md).
Users are locked in id order and the feed is written last in every transaction that writes it
(no wallet lock is taken after a feed lock), so the locks never wait on one another in a cycle;
a settlement's or a void's entries are appended just after its commit, since the pot's refunds
lock wallets after its record.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from accounts.models import User
from core.pipeline import after_answers
from core.rows import values_read
from games.live.announce import announce_on_commit, feed_topic, lobby_topic, table_topic
from games.live.kinds import FEED_KINDS
from games.models import FeedEntry, Hand, Seat
from games.rules.cards import code
from games.rules.engine import apply
from games.rules.errors import RuleError
from games.rules.moves import Chiu, U
from games.rules.state import HandState

FEED_LOCK_SPACE = 22_001  # pg_advisory_xact_lock(space, user id): one player's feed


@dataclass(frozen=True, slots=True)
class FeedNote:
    """An entry to append (its seq comes from :func:`feed_append`)."""

    user_id: int
    kind: str
    key: str
    table_id: int | None = None
    hand_id: int | None = None
    data: dict[str, Any] = field(default_factory=dict)


# One statement appends a transaction's notes once their players' locks are held: each player's
# last seq by one index lookup (games_feed_unique_seq backwards), never an aggregate over the
# player's whole feed, which grows with every hand the player ever played (one aggregate read all
# 750,000 rows of a long-time player's feed, 2.8 s a move at 13.5 million feed rows:
# docs/decisions/growth-bench.md); the keys already there by the
# unique (user, key); the new entries numbered after the last seq in the notes' order; and each
# player's last seq after it returned. It runs after the lock statements, so its snapshot holds
# every entry committed before the locks were granted. The notes go as one JSON array of
# records: psycopg dumps a Python list element by element (seven arrays of four notes cost
# 300 µs a move, one JSON document 40: docs/decisions/one-flight-moves.md). PostgreSQL
# guesses 100 rows from a JSON array (it counted an array's elements), so the known keys are
# looked up by a scalar subquery, which stays one index probe a note, never a join that would
# rather read the player's whole feed.
_APPEND_SQL = """
    WITH note AS (
        SELECT * FROM jsonb_to_recordset(%(notes)s::jsonb)
            AS n(user_id bigint, ord int, kind text, key text, table_id bigint, hand_id bigint,
                 data jsonb)
    ), head AS (
        SELECT u.user_id,
               coalesce((SELECT max(e.seq) FROM games_feedentry e
                         WHERE e.user_id = u.user_id), 0) AS seq
        FROM (SELECT DISTINCT user_id FROM note) u
    ), fresh AS (
        SELECT n.user_id, n.kind, n.key, n.table_id, n.hand_id, n.data,
               h.seq + row_number() OVER (PARTITION BY n.user_id ORDER BY n.ord) AS seq
        FROM note n JOIN head h ON h.user_id = n.user_id
        WHERE (SELECT 1 FROM games_feedentry e
               WHERE e.user_id = n.user_id AND e.key = n.key LIMIT 1) IS NULL
    ), added AS (
        INSERT INTO games_feedentry (user_id, seq, kind, key, table_id, hand_id, data, created_at)
        SELECT user_id, seq, kind, key, table_id, hand_id, data, %(now)s FROM fresh
        RETURNING user_id, seq
    )
    SELECT h.user_id,
           greatest(h.seq, coalesce((SELECT max(a.seq) FROM added a
                                     WHERE a.user_id = h.user_id), 0))
    FROM head h
"""
# The players' locks in one statement, in the array's order (ids ascending: module docstring):
# the rows come out of ``jsonb_array_elements`` in that order, and PostgreSQL evaluates a
# volatile function of the select list after the ORDER BY's sort, row by row in the sorted
# order. (A JSON array, not an int[]: as for the notes above.)
_LOCKS_SQL = """
    SELECT pg_advisory_xact_lock(%s, u.id::int)
    FROM jsonb_array_elements(%s::jsonb) WITH ORDINALITY AS u(id, ord) ORDER BY u.ord
"""


def _locks_params(users: list[int]) -> list[Any]:
    """:data:`_LOCKS_SQL`'s parameters: the players' feed locks, in ``users``' order."""
    return [FEED_LOCK_SPACE, Jsonb(users)]


def _append_params(notes: list[FeedNote], now: dt.datetime) -> dict[str, Any]:
    """:data:`_APPEND_SQL`'s parameters: ``notes`` in their order, appended at ``now``."""
    records = [
        {
            "user_id": n.user_id,
            "ord": ord_,
            "kind": n.kind,
            "key": n.key,
            "table_id": n.table_id,
            "hand_id": n.hand_id,
            "data": n.data,
        }
        for ord_, n in enumerate(notes)
    ]
    return {"notes": Jsonb(records), "now": now}


def _notes_checked(notes: list[FeedNote]) -> list[FeedNote]:
    """``notes`` with keys cut to the column's 100 characters, each (player, key) once."""
    seen: set[tuple[int, str]] = set()
    kept = []
    for note in notes:
        if note.kind not in FEED_KINDS:
            raise ValueError(f"not a feed kind: {note.kind}")
        key = note.key[:100]
        if (note.user_id, key) in seen:
            continue
        seen.add((note.user_id, key))
        kept.append(note if key == note.key else replace(note, key=key))
    return kept


def _feed_send(notes: list[FeedNote]) -> Callable[[], dict[int, int]]:
    """Send the append of ``notes`` (the caller's transaction is open) and return the function
    that reads its answer: each player's last seq, announced once the transaction commits.
    ``notes``: checked (:func:`_notes_checked`)."""
    users = sorted({n.user_id for n in notes})
    heads: dict[int, int] = {}
    cursor = None
    if connection.vendor != "postgresql":
        heads = _feed_append_elsewhere(users, notes)
    else:
        with connection.cursor() as locks:
            locks.execute(_LOCKS_SQL, _locks_params(users))  # in id order (module docstring)
        cursor = connection.cursor()
        cursor.execute(_APPEND_SQL, _append_params(notes, timezone.now()))

    def answer() -> dict[int, int]:
        if cursor is not None:
            with cursor:
                heads.update(cursor.fetchall())
        for user_id, head in heads.items():
            announce_on_commit(feed_topic(user_id), head)
        return heads

    return answer


def _feed_append_elsewhere(users: list[int], notes: list[FeedNote]) -> dict[int, int]:
    """The append on SQLite (embedded dev: one writer at a time anyway), by the ORM."""
    heads = {}
    rows = []
    for user_id in users:
        entries = FeedEntry.objects.filter(user_id=user_id)
        head = max(entries.values_list("seq", flat=True), default=0)
        mine = [n for n in notes if n.user_id == user_id]
        known = set(entries.filter(key__in=[n.key for n in mine]).values_list("key", flat=True))
        for note in mine:
            if note.key in known:
                continue
            head += 1
            rows.append(
                FeedEntry(
                    user_id=user_id,
                    seq=head,
                    kind=note.kind,
                    key=note.key,
                    table_id=note.table_id,
                    hand_id=note.hand_id,
                    data=note.data,
                )
            )
        heads[user_id] = head
    FeedEntry.objects.bulk_create(rows)
    return heads


def feed_append(*, notes: list[FeedNote]) -> dict[int, int]:
    """Append ``notes`` (a note whose ``key`` the player's feed already has is left out) and
    announce each player's new last seq once the transaction commits. Returns each player's
    last seq (in a pipeline, ``core.pipeline``, it waits for the answers: see
    :func:`feed_append_sent`). Call it last in the transaction (module docstring)."""
    notes = _notes_checked(notes)  # before the transaction: a wrong kind breaks nothing
    if not notes:
        return {}
    # No savepoint of its own inside the caller's transaction (two round trips a move): a
    # failed append fails the caller's transaction anyway; alone, it is its own transaction.
    with transaction.atomic(savepoint=False):
        return _feed_send(notes)()


def feed_append_sent(*, notes: list[FeedNote]) -> None:
    """:func:`feed_append` without the last seqs: in a pipeline nothing waits for its answer
    (it is read, and the seqs announced, once the pipeline's answers are in)."""
    notes = _notes_checked(notes)
    if not notes:
        return
    with transaction.atomic(savepoint=False):
        after_answers(_feed_send(notes))


# ------------------------------------------------------------------------------ from hands


def _claims(state: HandState, seat: int) -> list[str]:
    """The claims ``seat`` may make out of its turn on the card on offer (the engine decides)."""
    exposed = state.exposed
    if exposed is None or seat == state.actor():
        return []
    moves = []
    for name, move in (("chiu", Chiu(seat, exposed.card)), ("u", U(seat))):
        try:
            apply(state, move)
        except RuleError:
            continue
        moves.append(name)
    return moves


def _deadline(hand: Hand) -> str | None:
    return _utc(hand.deadline_at)


def feed_hand_changed(*, hand: Hand, state: HandState, record: str | None = None) -> None:
    """The entries a hand's new event makes for its players (``record``: the type of a record
    appended to an ended hand, ``settled`` or ``voided``): dealt, whose turn, open claims, the
    end, the settlement. In the caller's transaction, after the event is appended."""
    seats = hand.seat_list()
    common = {"table_id": hand.table_id, "hand_id": hand.pk}
    notes: list[FeedNote] = []
    h, seq = hand.pk, hand.seq
    if record == "settled":
        lines = (hand.quan or {}).get("seats") or []
        for s in seats:
            line = lines[s.position] if s.position < len(lines) else None
            data = {"seat": s.position, "seq": seq, "quan": line}
            notes.append(FeedNote(s.user_id, "hand_settled", f"settled:{h}", data=data, **common))
    elif record == "voided":
        for s in seats:
            notes.append(
                FeedNote(s.user_id, "hand_voided", f"voided:{h}", data={"seq": seq}, **common)
            )
    elif record is None:
        if seq == 0:
            for s in seats:
                data = {"seat": s.position, "dealer": hand.dealer, "seq": seq}
                notes.append(FeedNote(s.user_id, "hand_dealt", f"dealt:{h}", data=data, **common))
        if state.ended:
            winner = state.win.seat if state.win is not None else None
            for s in seats:
                data = {"seat": s.position, "seq": seq, "winner": winner}
                notes.append(FeedNote(s.user_id, "hand_ended", f"ended:{h}", data=data, **common))
        else:
            actor = state.actor()
            for s in seats:
                if s.left_at is not None:
                    continue
                if s.position == actor:
                    data = {
                        "seat": s.position,
                        "seq": seq,
                        "phase": state.phase.value,
                        "deadline": _deadline(hand),
                    }
                    notes.append(
                        FeedNote(s.user_id, "your_turn", f"turn:{h}:{seq}", data=data, **common)
                    )
                elif claims := _claims(state, s.position):
                    data = {
                        "seat": s.position,
                        "seq": seq,
                        "card": code(state.exposed.card),  # type: ignore[union-attr]
                        "moves": claims,
                    }
                    notes.append(
                        FeedNote(s.user_id, "claim_window", f"claim:{h}:{seq}", data=data, **common)
                    )
    if seq == 0 or state.ended or record is not None:
        table_changed_on_commit(hand.table_id)  # the table's status and hand moved
    if not notes:
        return
    if record is None:
        feed_append_sent(notes=notes)
    else:
        # A record's transaction still moves Quan after it (the pot's refunds lock wallets):
        # its entries are appended once it commits, in a transaction of their own, so that no
        # feed lock is ever held while a wallet is waited for.
        transaction.on_commit(lambda: feed_append(notes=notes), robust=True)


# ------------------------------------------------------------------------------ from tables


# Why the server stood a player up between hands (``seats_changed``'s ``reason``; null: the
# player did it, or staff): its own limits, 15 × stake it cannot cover, not ready in time.
UNSEAT_LIMIT, UNSEAT_STAKE, UNSEAT_IDLE = "limit", "stake", "idle"


# Every join, leave and ready asks it: a fixed statement, not compiled per call.
_HUMANS_SEATED_SQL = (
    f"SELECT s.player_id FROM {Seat._meta.db_table} s"
    f" JOIN {User._meta.db_table} u ON u.id = s.player_id"
    " WHERE s.table_id = %s AND NOT u.is_bot"
)


def feed_table_changed(
    *,
    table_id: int,
    change: str,
    user: Any,
    seat: int | None,
    ready: bool = False,
    reason: str | None = None,
    limit: str | None = None,
) -> None:
    """A seat changed at ``table_id`` (``change``: joined, left, ready): an entry for every
    human seated there (and the one who left), and the table's and the lobby's waiters wake on
    commit. ``reason`` (and, for ``limit``, which of the player's limits): why the server
    unseated it. In the caller's transaction, last."""
    seated = {user_id for (user_id,) in values_read(Seat, _HUMANS_SEATED_SQL, [table_id])}
    if not getattr(user, "is_bot", False):
        seated.add(user.pk)
    stamp = time.time_ns()
    data = {
        "change": change,
        "seat": seat,
        "user_id": user.pk,
        "username": user.username,
        "ready": ready,
        "reason": reason,
        "limit": limit,
    }
    notes = [
        FeedNote(
            uid,
            "seats_changed",
            f"seats:{table_id}:{stamp}:{user.pk}:{change}",
            table_id=table_id,
            data=data,
        )
        for uid in sorted(seated)
    ]
    if notes:
        feed_append(notes=notes)
    table_changed_on_commit(table_id)


def table_changed_on_commit(table_id: int) -> None:
    """Wake the waiters of the table and of the lobby once the transaction commits."""
    announce_on_commit(table_topic(table_id), None)
    announce_on_commit(lobby_topic(), None)


# ------------------------------------------------------------------------------ from the account


def feed_bonus_check(*, user: User, now: Any = None) -> None:
    """Append ``bonus_available`` once a day while today's daily bonus is not claimed (checked
    when the player reads its feed: the bonus opens at midnight, with nobody to write it)."""
    from accounts.ledger import _local_day, daily_bonus_amount
    from accounts.models import LedgerTransaction

    if getattr(user, "is_bot", False):
        return
    day, _next = _local_day(now or timezone.now())
    key = f"bonus:{day.isoformat()}"
    if FeedEntry.objects.filter(user_id=user.pk, key=key).exists():
        return
    if LedgerTransaction.objects.filter(
        idempotency_key=f"bonus:daily:{user.pk}:{day.isoformat()}"
    ).exists():
        return
    data = {"amount": daily_bonus_amount(user), "day": day.isoformat()}
    feed_append(notes=[FeedNote(user.pk, "bonus_available", key, data=data)])


def feed_reality_check(*, user: User, now: Any = None) -> None:
    """Append ``reality_check`` each time the player's session reaches another multiple of its
    ``reminder_minutes`` (its own limit, accounts.limits): checked when it reads its feed, once
    per reminder (the key names the session and the reminder's number)."""
    from games.selectors.reality_check import reality_check_for

    if getattr(user, "is_bot", False):
        return
    check = reality_check_for(user=user, now=now or timezone.now())
    if not check or not check["due"]:
        return
    key = f"reality:{check['session_started_at'].isoformat()}:{check['reminders']}"
    if FeedEntry.objects.filter(user_id=user.pk, key=key).exists():
        return
    data = {
        "minutes_played": check["minutes_played"],
        "net": check["net"],
        "reminder_minutes": check["reminder_minutes"],
        "next_at": _utc(check["next_at"]),
    }
    feed_append(notes=[FeedNote(user.pk, "reality_check", key, data=data)])


def _utc(value: Any) -> str | None:
    return None if value is None else value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


# ------------------------------------------------------------------------------ retention

_PRUNE_SQL = """
    DELETE FROM games_feedentry WHERE id IN (
        SELECT e.id FROM games_feedentry e
        WHERE e.created_at < %s
          AND e.seq < (SELECT max(m.seq) FROM games_feedentry m WHERE m.user_id = e.user_id)
        LIMIT %s
    )
"""


def feed_prune(
    *, now: dt.datetime | None = None, days: int | None = None, batch: int = 5000
) -> int:
    """Delete the feed entries older than ``days`` (``CHAN_FEED_RETENTION_DAYS``; 0 keeps
    everything), ``batch`` rows a transaction; return how many went. Each player's last entry
    is kept whatever its age: it holds the player's head, from which the next entry is
    numbered, so a seq is never given twice. Safe to run at any time and twice: an entry is
    never changed, only removed once old, and a reader behind the oldest kept entry is told
    (``feed_page``'s ``truncated``)."""
    from django.conf import settings

    days = settings.CHAN_FEED_RETENTION_DAYS if days is None else days
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - dt.timedelta(days=days)
    removed = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_PRUNE_SQL, [cutoff, batch])
            n = cursor.rowcount
        removed += n
        if n < batch:
            return removed
