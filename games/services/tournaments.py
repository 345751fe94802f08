"""Arenas: everything that writes a tournament — staff create, edit before the start
and cancel; players join (the entry fee held, accounts.holds) and leave; the arena's clock
(:func:`tournament_clock`, Celery beat) starts it (the fees taken into its pool, one ledger
transaction), seats its free players together as they come free (games.rules.arena_pairing,
through the ordinary table and seat services: its hands are ordinary hands), scores each
settled hand (games.rules.arena_points) and at the end pays the pool by the schedule
(games.rules.arena_payout, one ledger transaction).

The arena's table of record (``Tournament.ledger_table``, nobody sits there) carries the holds
of its entry fees before the start, and its pot account is the pool after it: no second hold
mechanism, no new kind of ledger account (docs/decisions/arenas.md).

Lock order: the tournament row, then tables and hands (the seat services' own order), then
wallets (``accounts.holds.wallets_lock``, ``ledger_post``); nothing that holds a table, hand or
wallet lock takes a tournament's.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.hold_selectors import hold_amount, wallet_funds
from accounts.holds import hold_place, hold_release, hold_set, insufficient_funds, wallets_lock
from accounts.ledger import ledger_post, pot_account, wallet_for
from accounts.models import LedgerTransaction, User
from core.errors import Conflict, DomainError, InvalidInput, NotFound
from games.ledger_keys import (
    tournament_entries_key,
    tournament_prizes_key,
    tournament_refund_key,
)
from games.live.announce import announce_on_commit, arena_topic
from games.models import (
    Hand,
    HandSeat,
    Mode,
    Room,
    Seat,
    Table,
    Tournament,
    TournamentEntry,
    TournamentHand,
    TournamentTable,
    default_payout,
)
from games.rules.arena_pairing import FreePlayer, arena_pairing
from games.rules.arena_payout import arena_payout, payout_check
from games.rules.arena_points import arena_points
from games.selectors.blocks import blocked_pairs_among
from games.selectors.rules import ruleset_from_spec
from games.services.feed import FeedNote, feed_append
from games.services.seat_holds import SIT_STAKES
from games.services.table_limits import table_limits_check
from games.services.tables import room_play_check, seat_join, seat_leave, seat_ready, table_create

logger = logging.getLogger(__name__)

Status = Tournament.Status
EDITABLE = (
    "name",
    "room",
    "stake",
    "table_size",
    "mode",
    "ruleset",
    "entry_fee",
    "starts_at",
    "ends_at",
    "payout",
)
MAX_ENTRY_FEE = 10**12


# --------------------------------------------------------------------------- errors


def _not_found() -> NotFound:
    return NotFound(_("No such tournament."), code="tournament_not_found")


def _closed(tournament: Tournament) -> Conflict:
    """409 ``tournament_closed`` with its ``status``: finished, cancelled (or running, for what
    only a scheduled arena allows)."""
    messages = {
        Status.FINISHED: _("This tournament has finished."),
        Status.CANCELLED: _("This tournament was cancelled."),
    }
    return Conflict(
        messages.get(tournament.status, _("This tournament has started.")),
        code="tournament_closed",
        extra={"status": tournament.status},
    )


def _lock(tournament_id: int) -> Tournament:
    tournament = (
        Tournament.objects.select_for_update(no_key=True)
        .filter(pk=tournament_id)
        .select_related("room")
    ).first()
    if tournament is None:
        raise _not_found()
    return tournament


# --------------------------------------------------------------------------- staff


def tournament_terms_check(terms: Mapping[str, Any], *, now: dt.datetime) -> dict[str, Any]:
    """An arena's terms validated (400 ``invalid`` naming the field, ``invalid_ruleset``,
    ``invalid_room``): what :func:`tournament_create` and :func:`tournament_edit` check, for the
    admin's form to say first."""
    out = dict(terms)

    def bad(field: str, message: Any) -> InvalidInput:
        return InvalidInput(
            _("The tournament's %(field)s is invalid: %(reason)s."),
            code="invalid",
            errors={field: [message]},
            field=field,
            reason=message,
        )

    name = str(out.get("name", "")).strip()
    if not 1 <= len(name) <= 64:
        raise bad("name", _("1 to 64 characters"))
    out["name"] = name
    room = out.get("room")
    if isinstance(room, Room):
        out["room"] = room.slug
    elif not Room.objects.filter(slug=room).exists():
        raise InvalidInput(
            _("No such room: %(room)s."),
            code="invalid_room",
            errors={"room": [_("no such room")]},
            room=room,
        )
    for field, low, high in (
        ("stake", 1, 10**9),
        ("entry_fee", 0, MAX_ENTRY_FEE),
        ("table_size", 2, 4),
    ):
        value = out.get(field)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise bad(
                field, _("a whole number from %(low)s to %(high)s") % {"low": low, "high": high}
            )
    if out.get("mode", Mode.BASIC) not in Mode.values:
        raise bad("mode", _("basic or advanced"))
    out["ruleset"] = ruleset_from_spec(out.get("ruleset")).spec()
    try:
        payout_check(list(out.get("payout") or []))
    except (TypeError, ValueError):
        raise bad("payout", _("whole percentages by rank, not rising, summing to 100")) from None
    starts, ends = out.get("starts_at"), out.get("ends_at")
    if not isinstance(starts, dt.datetime) or not isinstance(ends, dt.datetime):
        raise bad("starts_at", _("a start and an end are needed"))
    if ends <= starts:
        raise bad("ends_at", _("the end comes after the start"))
    if starts < now - dt.timedelta(minutes=1):
        raise bad("starts_at", _("the start is in the past"))
    return out


@transaction.atomic
def tournament_create(*, staff: Any, **terms: Any) -> Tournament:
    """Schedule an arena (staff): ``name``, ``room``, ``stake``, ``entry_fee``, ``starts_at``,
    ``ends_at``, ``payout`` (percent by rank), optional ``table_size`` (4), ``mode``,
    ``ruleset``. Opens its table of record (closed: nobody sits there)."""
    terms.setdefault("table_size", 4)
    terms.setdefault("mode", Mode.BASIC)
    terms.setdefault("payout", default_payout())
    terms.setdefault("entry_fee", 0)
    clean = tournament_terms_check(terms, now=timezone.now())
    record = Table.objects.create(
        name=clean["name"],
        room_id=clean["room"],
        stake=clean["stake"],
        max_seats=clean["table_size"],
        mode=clean["mode"],
        ruleset=clean["ruleset"],
        owner=staff,
        status=Table.Status.CLOSED,
        spectators=False,
    )
    tournament = Tournament.objects.create(
        name=clean["name"],
        room_id=clean["room"],
        stake=clean["stake"],
        table_size=clean["table_size"],
        mode=clean["mode"],
        ruleset=clean["ruleset"],
        entry_fee=clean["entry_fee"],
        starts_at=clean["starts_at"],
        ends_at=clean["ends_at"],
        payout=list(clean["payout"]),
        ledger_table=record,
        created_by=staff,
    )
    _changed_on_commit(tournament)
    return tournament


@transaction.atomic
def tournament_edit(*, tournament_id: int, staff: Any, **changes: Any) -> Tournament:
    """Change a scheduled arena's terms before its start (409 ``tournament_started`` after;
    409 ``tournament_has_entries`` for a new entry fee once players hold the old one)."""
    tournament = _lock(tournament_id)
    now = timezone.now()
    if tournament.status != Status.SCHEDULED:
        raise _closed(tournament)
    if now >= tournament.starts_at:
        raise Conflict(_("This tournament has started."), code="tournament_started")
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise InvalidInput(
            _("Unknown tournament fields: %(fields)s."),
            code="invalid",
            fields=", ".join(sorted(unknown)),
        )
    terms = {field: getattr(tournament, field) for field in EDITABLE if field != "room"}
    terms["room"] = tournament.room_id
    terms.update(changes)
    clean = tournament_terms_check(terms, now=now)
    if clean["entry_fee"] != tournament.entry_fee and tournament.entries.exists():
        raise Conflict(
            _("Players have entered: the entry fee can no longer change."),
            code="tournament_has_entries",
        )
    for field in EDITABLE:
        setattr(tournament, field if field != "room" else "room_id", clean[field])
    tournament.save()
    Table.objects.filter(pk=tournament.ledger_table_id).update(
        name=clean["name"], room_id=clean["room"], stake=clean["stake"]
    )
    _changed_on_commit(tournament)
    return tournament


@transaction.atomic
def tournament_cancel(*, tournament_id: int, reason: str = "", staff: Any = None) -> Tournament:
    """Cancel an arena: before its start every entry fee's hold is released; after it the pool
    is refunded to its entrants as one ledger transaction (key ``tournament:<id>:refund``).
    Safe to run twice; 409 ``tournament_closed`` once it has finished."""
    tournament = _lock(tournament_id)
    if tournament.status == Status.CANCELLED:
        return tournament
    if tournament.status == Status.FINISHED:
        raise _closed(tournament)
    entries = list(tournament.entries.select_related("user").order_by("user_id"))
    if tournament.status == Status.SCHEDULED:
        for entry in entries:
            hold_release(user=entry.user, table=tournament.ledger_table, reason="arena-cancel")
    else:
        _pool_refund(tournament, entries)
    tournament.status = Status.CANCELLED
    tournament.cancelled_at = timezone.now()
    tournament.cancel_reason = (reason or "")[:200]
    tournament.save(update_fields=["status", "cancelled_at", "cancel_reason", "updated_at"])
    _changed_on_commit(tournament)
    feed_append(notes=[_note(tournament, e, "tournament_finished") for e in entries])
    return tournament


def _pool_refund(tournament: Tournament, entries: list[TournamentEntry]) -> None:
    pool = pot_account(tournament.ledger_table)
    legs = [(wallet_for(e.user), e.fee) for e in entries if e.fee]
    total = sum(amount for _w, amount in legs)
    if total:
        ledger_post(
            kind=LedgerTransaction.Kind.TOURNAMENT_REFUND,
            key=tournament_refund_key(tournament.pk),
            legs=[(pool, -total), *legs],
            memo=f"arena {tournament.pk} cancelled: entry fees refunded",
            table=tournament.ledger_table,
        )


# --------------------------------------------------------------------------- players


@transaction.atomic
def tournament_join(*, tournament_id: int, user: Any) -> TournamentEntry:
    """Enter a scheduled arena: the entry fee is held in the player's wallet (409
    ``insufficient_balance`` unless the fee and a seat's hold, 15 × stake, are available);
    refused to a player who may not play in its room or at its stake (banned, frozen, cooling
    off, self-excluded, its own limits). While it runs, a player who withdrew joins again (no
    new fee); a newcomer cannot (409 ``tournament_started``). 409 ``already_entered``."""
    tournament = _lock(tournament_id)
    entry = TournamentEntry.objects.filter(tournament=tournament, user=user).first()
    if tournament.status == Status.RUNNING:
        if entry is None:
            raise Conflict(_("This tournament has started."), code="tournament_started")
        if entry.active:
            raise Conflict(_("You are already in this tournament."), code="already_entered")
        _player_check(tournament, user)
        entry.active = True
        entry.save(update_fields=["active", "updated_at"])
        _changed_on_commit(tournament)
        return entry
    if tournament.status != Status.SCHEDULED:
        raise _closed(tournament)
    if entry is not None:
        raise Conflict(_("You are already in this tournament."), code="already_entered")
    _player_check(tournament, user)
    needed = tournament.entry_fee + SIT_STAKES * tournament.stake
    funds = wallet_funds(user)
    if funds.available < needed:
        raise insufficient_funds(needed=needed, balance=funds.balance, held=funds.held)
    if tournament.entry_fee:
        hold_place(
            user=user, table=tournament.ledger_table, amount=tournament.entry_fee, reason="arena"
        )
    try:
        with transaction.atomic():
            entry = TournamentEntry.objects.create(
                tournament=tournament, user=user, fee=tournament.entry_fee
            )
    except IntegrityError as exc:
        raise Conflict(_("You are already in this tournament."), code="already_entered") from exc
    _changed_on_commit(tournament)
    return entry


def _player_check(tournament: Tournament, user: Any) -> None:
    room_play_check(user, room=tournament.room)
    table_limits_check(user, stake=tournament.stake, practice=False)


@transaction.atomic
def tournament_leave(*, tournament_id: int, user: Any) -> TournamentEntry | None:
    """Leave an arena: before its start the entry is gone and its fee's hold released
    (returns None); while it runs the player withdraws (no more tables, its points stay, the
    fee is in the pool). 409 ``not_entered``, ``tournament_closed``."""
    tournament = _lock(tournament_id)
    entry = TournamentEntry.objects.filter(tournament=tournament, user=user).first()
    if tournament.status in (Status.FINISHED, Status.CANCELLED):
        raise _closed(tournament)
    if entry is None or (tournament.status == Status.RUNNING and not entry.active):
        raise Conflict(_("You are not in this tournament."), code="not_entered")
    _changed_on_commit(tournament)
    if tournament.status == Status.SCHEDULED:
        hold_release(user=user, table=tournament.ledger_table, reason="arena-leave")
        entry.delete()
        return None
    entry.active = False
    entry.save(update_fields=["active", "updated_at"])
    return entry


# --------------------------------------------------------------------------- the clock


def tournaments_due(*, now: dt.datetime) -> list[int]:
    """The arenas the clock has work for: scheduled ones whose start has come, running ones,
    and ended ones with tables still to close out."""
    ids = set(
        Tournament.objects.filter(status=Status.SCHEDULED, starts_at__lte=now).values_list(
            "pk", flat=True
        )
    )
    ids |= set(Tournament.objects.filter(status=Status.RUNNING).values_list("pk", flat=True))
    ids |= set(TournamentTable.objects.filter(done=False).values_list("tournament_id", flat=True))
    return sorted(ids)


def tournament_clock(*, tournament_id: int, now: dt.datetime | None = None) -> str:
    """One beat of an arena's clock (``games.tasks.tournament_clock_due``; safe to run any
    number of times): start it at ``starts_at``, score and close its tables whose hand is
    settled, seat its free players, and pay it out at ``ends_at``. Returns its status."""
    now = now or timezone.now()
    tournament = Tournament.objects.filter(pk=tournament_id).first()
    if tournament is None:
        raise _not_found()
    if tournament.status == Status.SCHEDULED and now >= tournament.starts_at:
        tournament_start(tournament_id=tournament_id, now=now)
    tournament_tables_close(tournament_id=tournament_id, now=now)
    tournament = Tournament.objects.get(pk=tournament_id)
    if tournament.status == Status.RUNNING and now >= tournament.ends_at:
        tournament_finish(tournament_id=tournament_id, now=now)
    elif tournament.status == Status.RUNNING:
        tournament_pair(tournament_id=tournament_id, now=now)
    return Tournament.objects.get(pk=tournament_id).status


@transaction.atomic
def tournament_start(*, tournament_id: int, now: dt.datetime | None = None) -> Tournament:
    """Start a scheduled arena whose start has come: every entry fee's hold is consumed and the
    fees taken into the pool as one balanced ledger transaction (key
    ``tournament:<id>:entries``). With fewer than two entrants it is cancelled instead (holds
    released). Idempotent."""
    now = now or timezone.now()
    tournament = _lock(tournament_id)
    if tournament.status != Status.SCHEDULED or now < tournament.starts_at:
        return tournament
    entries = list(tournament.entries.select_related("user").order_by("user_id"))
    if len(entries) < 2:
        transaction.on_commit(lambda: logger.info("arena %s: too few players", tournament_id))
        return tournament_cancel(tournament_id=tournament_id, reason="too few players")
    record = tournament.ledger_table
    wallets = wallets_lock([e.user for e in entries])
    legs = []
    for entry in entries:
        account = wallets[entry.user_id]
        if hold_amount(account_id=account.pk, table_id=record.pk):
            hold_set(account=account, table=record, amount=0, reason="arena-start")
        if entry.fee:
            legs.append((account, -entry.fee))
    total = -sum(amount for _a, amount in legs)
    if total:
        ledger_post(
            kind=LedgerTransaction.Kind.TOURNAMENT_ENTRY,
            key=tournament_entries_key(tournament.pk),
            legs=[*legs, (pot_account(record), total)],
            memo=f"arena {tournament.pk}: {len(legs)} entry fees into its pool",
            table=record,
        )
    tournament.status = Status.RUNNING
    tournament.started_at = now
    tournament.save(update_fields=["status", "started_at", "updated_at"])
    _changed_on_commit(tournament)
    feed_append(notes=[_note(tournament, e, "tournament_started") for e in entries])
    return tournament


def tournament_tables_close(*, tournament_id: int, now: dt.datetime | None = None) -> int:
    """Score the arena's settled hands and stand their players up (the table closes as the last
    one leaves), so that they are free again. A hand scores while the arena runs and if it
    ended before its end; each once (``TournamentHand``). Returns the tables closed."""
    closed = 0
    open_tables = TournamentTable.objects.filter(tournament_id=tournament_id, done=False)
    for link_id, table_id in list(open_tables.values_list("pk", "table_id")):
        with transaction.atomic():
            tournament = _lock(tournament_id)
            link = TournamentTable.objects.select_for_update(no_key=True).get(pk=link_id)
            if link.done:
                continue
            hands = list(
                Hand.objects.filter(table_id=table_id)
                .prefetch_related("hand_seats")
                .order_by("number")
            )
            if any(h.settled_at is None for h in hands):
                continue  # a hand is being played or settled: its players are not free
            for hand in hands:
                _hand_score(tournament, hand)
            for user_id in list(
                Seat.objects.filter(table_id=table_id).values_list("player_id", flat=True)
            ):
                try:
                    seat_leave(table_id=table_id, user=User.objects.get(pk=user_id))
                except Conflict as exc:  # stood up meanwhile
                    if exc.code != "not_seated":
                        raise
            link.done = True
            link.save(update_fields=["done", "updated_at"])
            _changed_on_commit(tournament)
            closed += 1
    return closed


def _hand_score(tournament: Tournament, hand: Hand) -> None:
    """Record the hand's arena points once and add them to the entries (the caller holds the
    tournament row lock)."""
    if TournamentHand.objects.filter(hand=hand).exists():
        return  # scored already (or voided after it was: never scored twice)
    if hand.status != Hand.Status.ENDED or hand.voided_at is not None:
        return
    if tournament.status != Status.RUNNING or hand.ended_at is None:
        return
    if hand.ended_at > tournament.ends_at:
        return  # played past the end: an ordinary hand, not the arena's
    seats = hand.seat_list()
    result = hand.outcome_result()
    points = arena_points(result, len(seats))
    TournamentHand.objects.create(tournament=tournament, hand=hand, points=list(points))
    winner = result.winner
    for seat, got in zip(seats, points, strict=True):
        TournamentEntry.objects.filter(tournament=tournament, user_id=seat.user_id).update(
            score=F("score") + got,
            hands=F("hands") + 1,
            wins=F("wins") + (1 if winner == seat.position and got > 0 else 0),
        )


def tournament_of_hand_lock(*, hand_id: int) -> Tournament | None:
    """Lock the arena whose table dealt ``hand_id`` (None for any other hand): what
    ``hand_void`` takes before the hand row, in the arenas' lock order (the tournament first).
    An arena table's link never changes, so it is read before the lock."""
    tournament_id = (
        TournamentTable.objects.filter(table__hands__pk=hand_id)
        .values_list("tournament_id", flat=True)
        .first()
    )
    return _lock(tournament_id) if tournament_id is not None else None


def tournament_hand_void(*, tournament: Tournament, hand: Hand) -> list[FeedNote]:
    """The arena's side of a void (in ``hand_void``'s transaction; the caller holds the
    tournament row lock, :func:`tournament_of_hand_lock`, then the hand's): a hand it scored
    gets its reversal row (``TournamentHand`` kind void) and its points, hand and win are taken
    off the entries again. Once the arena has paid out, the payout stands: the reversal row is
    zeros, ``after_payout`` (the void noted, nothing taken off). Returns the players' feed
    notes (``tournament_hand_voided``), appended last by the caller. Once per hand: a second
    void or a retried task adds nothing (the row's uniqueness)."""
    scored = TournamentHand.objects.filter(
        hand=hand, kind=TournamentHand.Kind.SCORE, tournament=tournament
    ).first()
    if scored is None:
        return []  # never scored (played past the end, voided before its table closed)
    if TournamentHand.objects.filter(hand=hand, kind=TournamentHand.Kind.VOID).exists():
        return []
    after_payout = tournament.status == Status.FINISHED
    taken = [0 if after_payout else int(p) for p in scored.points]
    TournamentHand.objects.create(
        tournament=tournament,
        hand=hand,
        kind=TournamentHand.Kind.VOID,
        points=[-p for p in taken],
        after_payout=after_payout,
    )
    seats = hand.seat_list()
    winner = hand.outcome_result().winner
    if not after_payout:
        for seat, got in zip(seats, taken, strict=True):
            TournamentEntry.objects.filter(tournament=tournament, user_id=seat.user_id).update(
                score=F("score") - got,
                hands=F("hands") - 1,
                wins=F("wins") - (1 if winner == seat.position and got > 0 else 0),
            )
    _changed_on_commit(tournament)
    entries = {
        e.user_id: e
        for e in TournamentEntry.objects.filter(
            tournament=tournament, user_id__in=[s.user_id for s in seats]
        )
    }
    notes = []
    for seat, got in zip(seats, taken, strict=True):
        entry = entries.get(seat.user_id)
        if entry is None:
            continue
        data = {
            "tournament_id": tournament.pk,
            "name": tournament.name,
            "points": got,
            "score": entry.score,
            "payout_stands": after_payout,
        }
        notes.append(
            FeedNote(
                seat.user_id,
                "tournament_hand_voided",
                f"arena:{tournament.pk}:void:{hand.pk}",
                table_id=hand.table_id,
                hand_id=hand.pk,
                data=data,
            )
        )
    return notes


def tournament_free_players(tournament: Tournament) -> list[FreePlayer]:
    """The arena's active entrants not at one of its open tables nor in a hand anywhere."""
    busy = set(
        Seat.objects.filter(
            table__tournament_link__tournament=tournament, table__tournament_link__done=False
        ).values_list("player_id", flat=True)
    )
    busy |= set(
        HandSeat.objects.filter(hand__status=Hand.Status.PLAYING, left_at__isnull=True)
        .filter(user__tournament_entries__tournament=tournament)
        .values_list("user_id", flat=True)
    )
    entries = tournament.entries.filter(active=True).exclude(user_id__in=busy)
    return [
        FreePlayer(user_id=e.user_id, score=e.score, order=e.pk, hands=e.hands, waited=e.waited)
        for e in entries.order_by("id")
    ]


def tournament_pair(*, tournament_id: int, now: dt.datetime | None = None) -> list[int]:
    """Seat the arena's free players together (games.rules.arena_pairing, from the entries'
    points, hands played and pairings waited): for each table one ordinary private table
    opened by its first player, the others seated with its code, all said ready, so the hand
    is dealt. A player who cannot be seated (its Quan, its limits, a ban) is withdrawn from the
    arena (``active`` false; it may join again). When tables opened, the free players left out
    count one more pairing waited (a seated player's count starts again). Returns the tables
    opened."""
    now = now or timezone.now()
    tournament = Tournament.objects.get(pk=tournament_id)
    if tournament.status != Status.RUNNING or now >= tournament.ends_at:
        return []
    free = tournament_free_players(tournament)
    ids = [p.user_id for p in free]
    groups = arena_pairing(free, size=tournament.table_size, blocked=blocked_pairs_among(ids))
    opened: list[int] = []
    seated: set[int] = set()
    for group in groups:
        table_id = _table_open(tournament_id, group)
        if table_id is not None:
            opened.append(table_id)
            seated.update(group)
    left_out = [user_id for user_id in ids if user_id not in seated]
    if opened and left_out:
        with transaction.atomic():
            _lock(tournament_id)  # the entries' rows after the tournament's, as everywhere
            TournamentEntry.objects.filter(
                tournament_id=tournament_id, user_id__in=left_out, active=True
            ).update(waited=F("waited") + 1)
    return opened


def _table_open(tournament_id: int, group: tuple[int, ...]) -> int | None:
    """Open one arena table for ``group`` (its own transaction); None when a player could not
    be seated (it is withdrawn; the others wait for the next beat)."""
    current = group[0]
    try:
        with transaction.atomic():
            tournament = _lock(tournament_id)
            if tournament.status != Status.RUNNING:
                return None
            users = {u.pk: u for u in User.objects.filter(pk__in=group)}
            number = tournament.tables.count() + 1
            table = table_create(
                owner=users[current],
                name=f"{tournament.name} #{number}"[:64],
                stake=tournament.stake,
                room=tournament.room_id,
                max_seats=len(group),
                mode=tournament.mode,
                ruleset=tournament.ruleset,
                private=True,
            )
            code = table.private.invite_code
            for user_id in group[1:]:
                current = user_id
                seat_join(table_id=table.pk, user=users[user_id], code=code)
            TournamentTable.objects.create(tournament=tournament, table=table)
            tournament.entries.filter(user_id__in=group).update(waited=0)
            for user_id in group:
                current = user_id
                seat_ready(table_id=table.pk, user=users[user_id])
            _changed_on_commit(tournament)
            notes = [
                FeedNote(
                    user_id,
                    "tournament_seated",
                    f"arena:{tournament.pk}:table:{table.pk}",
                    table_id=table.pk,
                    data={"tournament_id": tournament.pk, "table_id": table.pk},
                )
                for user_id in group
            ]
            feed_append(notes=notes)
            return table.pk
    except DomainError as exc:
        logger.info("arena %s: player %s withdrawn: %s", tournament_id, current, exc.code)
        TournamentEntry.objects.filter(tournament_id=tournament_id, user_id=current).update(
            active=False
        )
        return None


@transaction.atomic
def tournament_finish(*, tournament_id: int, now: dt.datetime | None = None) -> Tournament:
    """End a running arena at ``ends_at``: the standings are final (score, then wins; players
    equal on both are tied and share the prizes of the ranks they occupy) and the pool is paid
    by the schedule as one ledger transaction (key ``tournament:<id>:prizes``; the largest
    remainder makes the prizes sum to the pool). Idempotent."""
    now = now or timezone.now()
    tournament = _lock(tournament_id)
    if tournament.status != Status.RUNNING or now < tournament.ends_at:
        return tournament
    entries = list(tournament.entries.select_related("user").order_by("-score", "-wins", "id"))
    groups: list[list[TournamentEntry]] = []
    for entry in entries:
        last = groups[-1][0] if groups else None
        if last is not None and (last.score, last.wins) == (entry.score, entry.wins):
            groups[-1].append(entry)
        else:
            groups.append([entry])
    pool = pot_account(tournament.ledger_table)
    pool.refresh_from_db()
    prizes = arena_payout(pool.balance, list(tournament.payout), [len(g) for g in groups])
    rank = 1
    ordered = [e for g in groups for e in g]
    index = 0
    for group in groups:
        for entry in group:
            entry.rank = rank
            entry.prize = prizes[index]
            index += 1
        rank += len(group)
    legs = [(wallet_for(e.user), e.prize) for e in ordered if e.prize]
    if legs:
        ledger_post(
            kind=LedgerTransaction.Kind.TOURNAMENT_PRIZE,
            key=tournament_prizes_key(tournament.pk),
            legs=[(pool, -pool.balance), *legs],
            memo=f"arena {tournament.pk}: its pool paid by rank",
            table=tournament.ledger_table,
        )
    TournamentEntry.objects.bulk_update(ordered, ["rank", "prize", "updated_at"])
    tournament.status = Status.FINISHED
    tournament.finished_at = now
    tournament.save(update_fields=["status", "finished_at", "updated_at"])
    _changed_on_commit(tournament)
    feed_append(notes=[_note(tournament, e, "tournament_finished") for e in ordered])
    return tournament


# --------------------------------------------------------------------------- feed and live


def _note(tournament: Tournament, entry: TournamentEntry, kind: str) -> FeedNote:
    data: dict[str, Any] = {"tournament_id": tournament.pk, "name": tournament.name}
    if kind == "tournament_started":
        data["ends_at"] = _utc(tournament.ends_at)
    else:
        data.update(
            status=tournament.status,
            rank=entry.rank,
            score=entry.score,
            prize=entry.prize,
        )
    return FeedNote(entry.user_id, kind, f"arena:{tournament.pk}:{kind}", data=data)


def _utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def _changed_on_commit(tournament: Tournament) -> None:
    announce_on_commit(arena_topic(tournament.pk), None)
