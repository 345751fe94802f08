"""Reading tables: lists and pages for the lobby, one table, its hands, and the table output
the API shows (seats, pot, ready deadline)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connection, connections, router
from django.db.models import Count, F, Max, Prefetch, Q, QuerySet
from django.utils.translation import gettext_lazy as _

from accounts.models import ApiToken, LedgerAccount, User
from core.errors import NotFound
from core.rows import row_values
from games.models import Hand, HandSeat, PrivateTable, Seat, Table

TABLE_LIST_MAX = 100
TABLE_HANDS_MAX = 100


def table_queryset() -> QuerySet[Table]:
    return Table.objects.select_related("owner", "private").prefetch_related(
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
    """Tables that are not closed nor private, newest first, one page after ``cursor`` (the ``next_cursor``
    of the page before); ``status``: ``open`` or ``playing`` only; ``open_seats``: at least that
    many free seats."""
    qs = table_queryset().exclude(status=Table.Status.CLOSED).filter(private__isnull=True)
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


class SeatLine(NamedTuple):
    """A seat as the table's output shows it."""

    number: int
    user_id: int
    username: str
    ready: bool
    ready_at: datetime | None
    auto_u: bool
    auto_chiu: bool
    bot: bool
    leaving: bool  # left the table's playing hand mid-hand


def _summary(
    t: Table,
    *,
    owner_name: str,
    private: bool,
    seats: list[SeatLine],
    hand_id: int | None,
    pot: int,
) -> dict[str, Any]:
    """A table as the API shows it: one shape for the lobby's pages and a table's own read."""
    return {
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
        "owner": {"id": t.owner_id, "username": owner_name},
        "status": t.status,
        "seats": [
            {
                "number": s.number,
                "user_id": s.user_id,
                "username": s.username,
                "ready": s.ready,
                "leaving": s.leaving,
                "auto_u": s.auto_u,
                "auto_chiu": s.auto_chiu,
                "bot": s.bot,
            }
            for s in seats
        ],
        "open_seats": t.max_seats - len(seats),
        "current_hand_id": hand_id,
        "pot": pot,
        "ready_deadline": (
            ready_deadline_of(t, [(s.ready, s.ready_at, s.bot) for s in seats])
            if t.status == Table.Status.OPEN
            else None
        ),
        "fixed_deck": t.fixed_deck is not None,
        # the commitment to the next hand's server seed (games.rules.fair_deal)
        "next_seed_hash": t.next_seed_hash,
        "spectators": t.spectators,
        "practice": t.practice,
        "private": private,  # games.PrivateTable
        "invite_code": None,  # the owner's and the seated's (table_summary's viewer)
        "bot_delay": t.bot_delay,
        "created_at": t.created_at,
    }


def table_summaries(tables: list[Table]) -> list[dict[str, Any]]:
    """Tables as the API shows them (seats prefetched by :func:`table_queryset`)."""
    current = table_current_hand_ids(t.pk for t in tables)
    leaving = _players_leaving(current.values())
    pots = table_pots(t.pk for t in tables)
    out = []
    for t in tables:
        hand_id = current.get(t.pk)
        seats = [
            SeatLine(
                s.number,
                s.player_id,
                s.player.username,
                s.ready,
                s.ready_at,
                s.auto_u,
                s.auto_chiu,
                s.player.is_bot,
                (hand_id, s.player_id) in leaving,
            )
            for s in t.seats.all()
        ]
        out.append(
            _summary(
                t,
                owner_name=t.owner.username,
                private=hasattr(t, "private"),
                seats=seats,
                hand_id=hand_id,
                pot=pots.get(t.pk, 0),
            )
        )
    return out


# One table's read is one fixed statement: the table with its owner's name, its invite code,
# its pot, its playing hand, and a row per seat (its player, whether it left that hand). The
# ORM's version (table_get's select_related and prefetch, then the current hand, the leavers and
# the pot: five statements) spent most of a table read's CPU compiling them (docs/decisions/,
# "A lean move"); table_summaries keeps it for the lobby's pages, and a test
# holds the two equal.
_TABLE_FIELDS = tuple(Table._meta.concrete_fields)


def _table_read_sql() -> str:
    q = connection.ops.quote_name
    columns = ", ".join(f"t.{q(f.column)}" for f in _TABLE_FIELDS)
    return (
        f"SELECT {columns}, o.username, p.invite_code, a.balance, h.id,"
        " s.number, s.player_id, u.username, s.ready, s.ready_at, s.auto_u, s.auto_chiu,"
        " u.is_bot, hs.left_at IS NOT NULL"
        f" FROM {Table._meta.db_table} t"
        f" JOIN {User._meta.db_table} o ON o.id = t.owner_id"
        f" LEFT JOIN {PrivateTable._meta.db_table} p ON p.table_id = t.id"
        f" LEFT JOIN {LedgerAccount._meta.db_table} a"
        f" ON a.table_id = t.id AND a.kind = '{LedgerAccount.Kind.POT.value}'"
        f" LEFT JOIN {Hand._meta.db_table} h"
        f" ON h.table_id = t.id AND h.status = '{Hand.Status.PLAYING.value}'"
        f" LEFT JOIN {Seat._meta.db_table} s ON s.table_id = t.id"
        f" LEFT JOIN {User._meta.db_table} u ON u.id = s.player_id"
        f" LEFT JOIN {HandSeat._meta.db_table} hs"
        " ON hs.hand_id = h.id AND hs.user_id = s.player_id AND hs.left_at IS NOT NULL"
        " WHERE t.id = %s ORDER BY s.number"
    )


_TABLE_READ_SQL = _table_read_sql()


def table_summary(*, table_id: int, viewer: Any = None) -> dict[str, Any]:
    """One table as the API shows it, in one statement. With a ``viewer``: a private table is
    404 to anyone but its owner, its seated players and staff (as :func:`table_visible_check`
    says), and its invite code is shown to its owner and seated players; without one, neither
    (the answer to a player who just stood up)."""
    alias = router.db_for_read(Table)
    with connections[alias].cursor() as cursor:
        cursor.execute(_TABLE_READ_SQL, [table_id])
        rows = cursor.fetchall()
    if not rows:
        raise NotFound(_("No such table."))
    n = len(_TABLE_FIELDS)
    values = row_values(alias, _TABLE_FIELDS, rows[0])
    table = Table.from_db(alias, None, values[:n])
    owner_name, invite_code, pot, hand_id = values[n : n + 4]
    seats = [SeatLine(*row[n + 4 :]) for row in rows if row[n + 4] is not None]
    private = invite_code is not None
    summary = _summary(
        table,
        owner_name=owner_name,
        private=private,
        seats=seats,
        hand_id=hand_id,
        pot=pot or 0,
    )
    if private and viewer is not None:
        mine = viewer.pk == table.owner_id or any(s.user_id == viewer.pk for s in seats)
        if not (mine or getattr(viewer, "is_staff", False)):
            raise NotFound(_("No such table."))
        if mine:
            summary["invite_code"] = invite_code
    return summary


def table_ready_deadline(table: Table, seats: Sequence[Seat]) -> datetime | None:
    """:func:`ready_deadline_of` the table's ``seats`` (their players loaded)."""
    return ready_deadline_of(table, [(s.ready, s.ready_at, s.player.is_bot) for s in seats])


def ready_deadline_of(
    table: Table, seats: Sequence[tuple[bool, datetime | None, bool]]
) -> datetime | None:
    """When the players who are not ready are unseated and the ready ones, if two or more, are
    dealt: ``ready_timeout`` seconds after the first player said ready. None while nobody is
    ready, or when everybody is (the hand is dealt at once). A bot's seat (always ready) does
    not count: at a practice table the wait is the human players'. ``seats``: (ready, ready_at,
    bot) of each."""
    if table.practice:
        seats = [s for s in seats if not s[2]]
    ready_at = sorted(at for ready, at, _bot in seats if ready and at is not None)
    if not ready_at or len(ready_at) == len(seats):
        return None
    return ready_at[0] + timedelta(seconds=table.ready_timeout)


def players_last_request(user_ids: Iterable[int]) -> dict[int, datetime]:
    """Player id → when it last used one of its API tokens (``ApiToken.last_used_at``, kept to
    the minute: ``accounts.services.TOKEN_TOUCH_INTERVAL``); players who never did are absent."""
    rows = (
        ApiToken.objects.filter(user_id__in=list(user_ids), last_used_at__isnull=False)
        .values("user_id")
        .annotate(last=Max("last_used_at"))
    )
    return {row["user_id"]: row["last"] for row in rows}


class ReadyLapses(NamedTuple):
    """The ready seats whose ready has lapsed, and when the next one lapses (None: no other)."""

    lapsed: list[Seat]
    next_at: datetime | None


def _ready_expiry() -> timedelta:
    return timedelta(seconds=settings.CHAN_READY_EXPIRY_SECONDS)


def ready_quiet_players(seats: Iterable[Seat], *, now: datetime) -> set[int]:
    """The ready players (no bots) whose seat has not changed for ``CHAN_READY_EXPIRY_SECONDS``
    by ``now``: their ready lapses unless a request of theirs came since (:func:`ready_lapses`).
    ``seats``: their players loaded."""
    expiry = _ready_expiry()
    return {
        s.player_id
        for s in seats
        if s.ready and not s.player.is_bot and s.updated_at + expiry <= now
    }


def ready_lapses(
    seats: Sequence[Seat],
    *,
    now: datetime,
    last_request: Mapping[int, datetime] | None = None,
) -> ReadyLapses:
    """A ready lapses ``CHAN_READY_EXPIRY_SECONDS`` after the player's last sign of life while
    no hand is dealt: its seat's last change (its ready, said again, or its preferences) or its
    last API request, whichever is later; a bot's never does. The players' requests are read
    only when a seat alone would have lapsed (``last_request``: read already, by the sweep).
    ``seats``: a table's, their players loaded."""
    expiry = _ready_expiry()
    ready = [s for s in seats if s.ready and not s.player.is_bot]
    lapses = {s.pk: s.updated_at + expiry for s in ready}
    quiet = ready_quiet_players(ready, now=now)
    if quiet:
        seen = players_last_request(quiet) if last_request is None else last_request
        for s in ready:
            if s.player_id in seen:
                lapses[s.pk] = max(lapses[s.pk], seen[s.player_id] + expiry)
    return ReadyLapses(
        [s for s in ready if lapses[s.pk] <= now],
        min((at for at in lapses.values() if at > now), default=None),
    )
