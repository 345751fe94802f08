"""Seasons: a week or a month of the boards (Asia/Ho_Chi_Minh) closes on the clock —
its boards are frozen as its final standings and its prizes paid from the prize account.

* :func:`seasons_close_due` (Celery beat, ``games.tasks.seasons_close_due``) closes every
  season that ended more than ``CHAN_SEASON_CLOSE_GRACE_SECONDS`` ago within the last
  ``CHAN_SEASON_LOOKBACK`` weeks/months, and retries the boards whose prizes the prize account
  could not cover. Safe to run twice, at once, or days late.
* :func:`season_close`: the season's row is created first, under the season's advisory lock
  taken exclusive; every board write of that period takes it shared and skips a closed
  period (``games.services.leaderboards``), so the standings read afterwards are final.
  Then each board is archived in its own database transaction (a ``SeasonBoard`` row, unique
  per season, board and room, locked while it is paid) and, where a prize schedule is set,
  its prizes are booked as ONE ledger transaction (key :func:`prize_key`) with a
  ``season_prize`` feed entry per winner.
* Ties share: players of equal score share the prizes of the ranks they cover, equally, the
  indivisible Quan going one each to the first of them in the board's order (the older
  account). A board whose prizes the prize account cannot cover pays nothing and is flagged
  ``unfunded``; the next run pays it once staff have funded the account
  (docs/decisions/seasons.md).
* :func:`prize_account_fund`: staff move Quan from issuance into the prize account.

Lock order: the season's advisory lock (close) / the ``SeasonBoard`` row, then the ledger
accounts (``ledger_post``: the prize account and the winners' wallets in id order), the feed
last.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.ledger import issuance_account, ledger_post, ledger_shards, wallet_for
from accounts.ledger_archive import ledger_entries_of
from accounts.models import LedgerAccount, LedgerTransaction
from core.errors import Conflict, InvalidInput
from games.models import (
    BUCKET_LEVELS,
    BoardBucket,
    BoardScore,
    PrizeFunding,
    PrizeSchedule,
    Season,
    SeasonBoard,
    SeasonPrize,
)
from games.rating_terms import (
    periods_of,
    season_bounds,
    season_kind,
    season_lock_key,
    seasons_ended,
)
from games.services.feed import FeedNote, feed_append

logger = logging.getLogger(__name__)

SEASON_LOCK_SPACE = 0x5EA5  # the first key of a season's advisory lock


def prize_key(season: str, board: str, room: str) -> str:
    """The idempotency key of a season board's prizes (one ledger transaction)."""
    return f"season:{season}:{board}:{room or '*'}:prizes"


def prize_account() -> LedgerAccount:
    """The prize account (one, created empty on first use): funded by staff from issuance,
    it pays the seasons' prizes."""
    account = LedgerAccount.objects.filter(kind=LedgerAccount.Kind.PRIZE).first()
    if account is not None:
        return account
    try:
        with transaction.atomic():
            return LedgerAccount.objects.create(kind=LedgerAccount.Kind.PRIZE)
    except IntegrityError:  # created meanwhile (accounts_ledgeraccount_one_prize)
        return LedgerAccount.objects.get(kind=LedgerAccount.Kind.PRIZE)


@transaction.atomic
def prize_account_fund(*, amount: int, memo: str, staff: Any, key: str) -> PrizeFunding:
    """Move ``amount`` Quan from issuance into the prize account: one ledger transaction, booked
    once per ``key`` (the admin form's nonce)."""
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise InvalidInput(_("A funding moves a positive whole amount."), code="invalid")
    memo = memo.strip()
    if not memo:
        raise InvalidInput(_("A funding needs a memo."), code="invalid")
    prizes = prize_account()
    tx = ledger_post(
        kind=LedgerTransaction.Kind.PRIZE_FUNDING,
        key=f"prize:fund:{key}",
        legs=[(issuance_account(shard=prizes.pk % ledger_shards()), -amount), (prizes, amount)],
        memo=f"{memo} (by {staff.username})"[:255] if staff is not None else memo[:255],
        user=staff,
    )
    funding, _created = PrizeFunding.objects.get_or_create(
        transaction=tx, defaults={"amount": amount, "memo": memo, "staff": staff}
    )
    return funding


# --------------------------------------------------------------------------- freezing


def periods_writable(periods: list[str], *, now: dt.datetime | None = None) -> list[str]:
    """Of the periods a board write is about to touch, those still open: a season whose close
    has started is frozen. The current week and month cannot have closed, so the common case
    asks nothing; a past one takes the season's lock shared (so the close waits for this
    write to commit) and looks its row up."""
    current = set(periods_of(now or timezone.now()))
    past = [p for p in periods if p not in current]
    if not past:
        return periods
    with connection.cursor() as cursor:
        for period in sorted(past):
            cursor.execute(
                "SELECT pg_advisory_xact_lock_shared(%s, %s)",
                [SEASON_LOCK_SPACE, season_lock_key(period)],
            )
    closed = set(Season.objects.filter(period__in=past).values_list("period", flat=True))
    return [p for p in periods if p not in closed]


# --------------------------------------------------------------------------- closing


@dataclass(frozen=True, slots=True)
class Payout:
    user_id: int
    rank: int
    score: int
    amount: int


def prize_payouts(standings: list[tuple[int, int]], amounts: list[int]) -> list[Payout]:
    """The prizes of ``standings`` ((user id, score) best first, in the board's order) by
    ``amounts`` (index 0 is rank 1). Players of equal score share the prizes of the ranks
    they cover equally; the indivisible remainder goes one Quan each to the first of them."""
    out: list[Payout] = []
    i = 0
    while i < len(standings) and i < len(amounts):
        j = i
        while j + 1 < len(standings) and standings[j + 1][1] == standings[i][1]:
            j += 1
        group = standings[i : j + 1]
        pool = sum(amounts[i : j + 1])
        share, rest = divmod(pool, len(group))
        for k, (user_id, score) in enumerate(group):
            amount = share + (1 if k < rest else 0)
            if amount > 0:
                out.append(Payout(user_id, i + 1, score, amount))
        i = j + 1
    return out


def season_standings(*, period: str, board: str, room: str, min_hands: int, n: int) -> list:
    """The first ``n`` eligible rows of a season board ((user id, score), best first), plus
    the rows tied with the ``n``-th: at least ``min_hands`` hands, no server bot."""
    rows = (
        BoardScore.objects.filter(
            board=board, period=period, room=room, hands__gte=min_hands, user__is_bot=False
        )
        .order_by("-score", "user_id")
        .values_list("user_id", "score")
    )
    top = list(rows[:n]) if n > 0 else []
    if len(top) == n and n > 0:
        last_user, last_score = top[-1]
        top += list(rows.filter(score=last_score, user_id__gt=last_user))
    return top


def _schedule_for(board: str, kind: str, room: str) -> PrizeSchedule | None:
    return (
        PrizeSchedule.objects.filter(board=board, kind=kind, room_id=room or None, active=True)
        .prefetch_related("lines")
        .first()
    )


def _season_boards(period: str) -> list[tuple[str, str]]:
    """The (board, room) pairs with rows in the period (read off the histogram's top level,
    a few rows a board)."""
    pairs = (
        BoardBucket.objects.filter(period=period, level=BUCKET_LEVELS - 1, n__gt=0)
        .values_list("board", "room")
        .distinct()
        .order_by("board", "room")
    )
    return list(pairs)


def season_open(period: str) -> Season:
    """Start the close of ``period``: its ``Season`` row, created under the season's lock
    taken exclusive, after which no settlement writes its boards."""
    starts_at, ends_at = season_bounds(period)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)",
                [SEASON_LOCK_SPACE, season_lock_key(period)],
            )
        season, _created = Season.objects.get_or_create(
            period=period,
            defaults={"kind": season_kind(period), "starts_at": starts_at, "ends_at": ends_at},
        )
    return season


def season_close(*, period: str, now: dt.datetime | None = None) -> Season:
    """Close a season that has ended: freeze its boards, archive each and pay its prizes.
    Safe to run twice or at once (each board is closed once, its prizes keyed)."""
    now = now or timezone.now()
    starts_at, ends_at = season_bounds(period)
    if ends_at > now:
        raise Conflict(
            _("The season %(period)s has not ended yet."), code="season_open", period=period
        )
    season = season_open(period)
    for board, room in _season_boards(period):
        season_board_close(season=season, board=board, room=room)
    if season.closed_at is None:
        Season.objects.filter(pk=season.pk, closed_at__isnull=True).update(closed_at=now)
        season.refresh_from_db()
    return season


@transaction.atomic
def season_board_close(*, season: Season, board: str, room: str) -> SeasonBoard:
    """Archive one board of a closing season and pay its prizes (once: the ``SeasonBoard``
    row is unique and locked; an ``unfunded`` one is paid on a later call if it can be)."""
    row, created = SeasonBoard.objects.get_or_create(
        season=season, board=board, room=room, defaults={"status": SeasonBoard.Status.NO_PRIZES}
    )
    row = SeasonBoard.objects.select_for_update(no_key=True).get(pk=row.pk)
    if not created and row.status != SeasonBoard.Status.UNFUNDED:
        return row
    # How many rows the board has, off the histogram's top level (not a count of the rows).
    row.players = (
        BoardBucket.objects.filter(
            board=board, period=season.period, room=room, level=BUCKET_LEVELS - 1
        ).aggregate(n=Sum("n"))["n"]
        or 0
    )
    if created:
        schedule = _schedule_for(board, season.kind, room)
        row.schedule = schedule.amounts() if schedule else []
        row.min_hands = schedule.min_hands if schedule else 1
    if not row.schedule:
        row.status = SeasonBoard.Status.NO_PRIZES
        row.save()
        return row
    standings = season_standings(
        period=season.period,
        board=board,
        room=room,
        min_hands=row.min_hands,
        n=len(row.schedule),
    )
    payouts = prize_payouts(standings, row.schedule)
    if not payouts:
        row.status = SeasonBoard.Status.NOBODY
        row.save()
        return row
    total = sum(p.amount for p in payouts)
    account = prize_account()
    wallets = {p.user_id: wallet_for(_user(p.user_id)) for p in payouts}
    try:
        tx = ledger_post(
            kind=LedgerTransaction.Kind.SEASON_PRIZE,
            key=prize_key(season.period, board, room),
            legs=[(account, -total), *((wallets[p.user_id], p.amount) for p in payouts)],
            memo=f"Season {season.period} {board} {room or 'all rooms'}: prizes",
        )
    except Conflict as exc:
        if exc.code != "insufficient_balance":
            raise
        row.status, row.needed = SeasonBoard.Status.UNFUNDED, total
        row.save()
        logger.warning(
            "season %s board %s/%s: the prize account cannot pay %s Quan; nothing paid",
            season.period,
            board,
            room or "*",
            total,
        )
        return row
    row.status, row.total, row.needed, row.transaction = SeasonBoard.Status.PAID, total, total, tx
    row.save()
    SeasonPrize.objects.bulk_create(
        [
            SeasonPrize(
                season_board=row, user_id=p.user_id, rank=p.rank, score=p.score, amount=p.amount
            )
            for p in payouts
        ]
    )
    feed_append(
        notes=[
            FeedNote(
                p.user_id,
                "season_prize",
                f"season_prize:{row.pk}",
                data={
                    "season": season.period,
                    "board": board,
                    "room": room or None,
                    "rank": p.rank,
                    "score": p.score,
                    "amount": p.amount,
                },
            )
            for p in payouts
        ]
    )
    return row


def _user(user_id: int) -> Any:
    from accounts.models import User

    return User.objects.get(pk=user_id)


def seasons_close_due(*, now: dt.datetime | None = None) -> list[str]:
    """Close the seasons that ended (more than the grace ago) within the lookback and are not
    closed, and retry the unfunded boards of closed ones. Returns the periods closed now."""
    now = now or timezone.now()
    grace = dt.timedelta(seconds=settings.CHAN_SEASON_CLOSE_GRACE_SECONDS)
    lookback = settings.CHAN_SEASON_LOOKBACK
    due = [
        p
        for p in seasons_ended(now, weeks=lookback, months=lookback)
        if season_bounds(p)[1] + grace <= now
    ]
    closed = set(
        Season.objects.filter(period__in=due, closed_at__isnull=False).values_list(
            "period", flat=True
        )
    )
    done = []
    for period in due:
        if period not in closed:
            season_close(period=period, now=now)
            done.append(period)
    for row in SeasonBoard.objects.filter(status=SeasonBoard.Status.UNFUNDED).select_related(
        "season"
    ):
        season_board_close(season=row.season, board=row.board, room=row.room)
    return done


# --------------------------------------------------------------------------- the audit


def season_prize_problems() -> list[str]:
    """What ``ledger_check`` reports on the seasons' prizes (empty when they reconcile): each
    paid board recomputed from its frozen standings and stored schedule against its prize
    rows and its one ledger transaction; a prize transaction no paid board names; the prize
    account's balance against its fundings less its payouts."""
    problems: list[str] = []
    account = LedgerAccount.objects.filter(kind=LedgerAccount.Kind.PRIZE).first()
    paid = SeasonBoard.objects.filter(status=SeasonBoard.Status.PAID).select_related("season")
    keys = set()
    for row in paid.order_by("pk").iterator(chunk_size=200):
        key = prize_key(row.season.period, row.board, row.room)
        keys.add(key)
        where = f"season {row.season.period} board {row.board}/{row.room or '*'}"
        standings = season_standings(
            period=row.season.period,
            board=row.board,
            room=row.room,
            min_hands=row.min_hands,
            n=len(row.schedule),
        )
        wanted = {p.user_id: p.amount for p in prize_payouts(standings, row.schedule)}
        prizes = {p.user_id: p.amount for p in row.prizes.all()}
        if prizes != wanted:
            problems.append(f"{where}: prizes {prizes} are not the standings' {wanted}")
        tx = LedgerTransaction.objects.filter(idempotency_key=key).first()
        if tx is None or tx.pk != row.transaction_id:
            problems.append(f"{where}: its transaction is not the one keyed {key}")
            continue
        legs = ledger_entries_of(tx)  # archived months too
        owners = LedgerAccount.objects.in_bulk([e.account_id for e in legs])
        entries = {owners[e.account_id].user_id or "prize": e.amount for e in legs}
        booked = {"prize": -sum(wanted.values()), **wanted}
        if entries != booked or account is None:
            problems.append(f"{where}: ledger entries {entries} are not {booked}")
    for tx in LedgerTransaction.objects.filter(kind=LedgerTransaction.Kind.SEASON_PRIZE):
        if tx.idempotency_key not in keys:
            problems.append(f"prize transaction {tx.pk} ({tx.idempotency_key}) has no paid board")
    if account is not None:
        funded = PrizeFunding.objects.aggregate(s=Sum("amount"))["s"] or 0
        paid_out = paid.aggregate(s=Sum("total"))["s"] or 0
        if account.balance != funded - paid_out:
            problems.append(
                f"prize account {account.pk}: balance {account.balance} is not "
                f"{funded} funded − {paid_out} paid"
            )
    return problems
