"""Reads on arenas: the list, one arena, its live standings, and the checks
``ledger_check`` runs on every arena's money (fees in = prizes or refunds out, pool empty once
it has ended, no hold left behind)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, Sum
from django.utils.translation import gettext_lazy as _

from accounts.hold_selectors import hold_amount
from accounts.ledger_archive import ledger_entries_of
from accounts.ledger_selectors import LedgerProblem
from accounts.models import LedgerAccount, LedgerTransaction
from core.errors import InvalidInput, NotFound
from games.ledger_keys import tournament_entries_key, tournament_prizes_key, tournament_refund_key
from games.models import Tournament, TournamentEntry, TournamentHand, TournamentTable
from games.selectors.hands import utc_iso

TOURNAMENT_LIST_MAX = 100
Status = Tournament.Status


def tournament_get(*, tournament_id: int) -> Tournament:
    tournament = Tournament.objects.filter(pk=tournament_id).select_related("room").first()
    if tournament is None:
        raise NotFound(_("No such tournament."), code="tournament_not_found")
    return tournament


def tournament_list(*, status: str | None = None) -> list[Tournament]:
    """The arenas, latest start first (at most 100), optionally of one ``status``."""
    rows = Tournament.objects.select_related("room").annotate(
        n_players=Count("entries", filter=Q(entries__active=True))
    )
    if status is not None:
        if status not in Status.values:
            raise InvalidInput(
                _("Unknown tournament status %(status)s."),
                code="invalid",
                errors={"status": [_("scheduled, running, finished or cancelled")]},
                status=status,
            )
        rows = rows.filter(status=status)
    return list(rows.order_by("-starts_at", "-id")[:TOURNAMENT_LIST_MAX])


def tournament_pool(tournament: Tournament) -> int:
    """The prize pool: the entry fees held (before the start) or its pool account's balance (the
    Σ of the fees taken, 0 once paid out or refunded)."""
    if tournament.status == Status.SCHEDULED or tournament.started_at is None:
        if tournament.status == Status.CANCELLED:
            return 0
        total = tournament.entries.aggregate(total=Sum("fee"))["total"]
        return int(total or 0)
    balance = (
        LedgerAccount.objects.filter(
            kind=LedgerAccount.Kind.POT, table_id=tournament.ledger_table_id
        )
        .values_list("balance", flat=True)
        .first()
    )
    if tournament.status == Status.RUNNING:
        return int(balance or 0)
    prizes = tournament.entries.aggregate(total=Sum("prize"))["total"]
    return int(prizes or 0)


def tournament_summary(tournament: Tournament, *, user: Any = None) -> dict[str, Any]:
    """One arena as the API shows it (its terms, status, players, pool, my entry)."""
    players = getattr(tournament, "n_players", None)
    if players is None:
        players = tournament.entries.filter(active=True).count()
    mine = None
    if user is not None and user.is_authenticated:
        entry = TournamentEntry.objects.filter(tournament=tournament, user=user).first()
        if entry is not None:
            mine = _entry_body(entry, rank=entry.rank)
    return {
        "id": tournament.pk,
        "name": tournament.name,
        "room": tournament.room_id,
        "stake": tournament.stake,
        "table_size": tournament.table_size,
        "mode": tournament.mode,
        "ruleset": tournament.ruleset,
        "entry_fee": tournament.entry_fee,
        "starts_at": utc_iso(tournament.starts_at),
        "ends_at": utc_iso(tournament.ends_at),
        "payout": list(tournament.payout),
        "status": tournament.status,
        "players": players,
        "pool": tournament_pool(tournament),
        "me": mine,
    }


def _entry_body(entry: TournamentEntry, *, rank: int | None) -> dict[str, Any]:
    return {
        "rank": rank,
        "username": entry.user.username,
        "display_name": entry.user.display_name,
        "score": entry.score,
        "hands": entry.hands,
        "wins": entry.wins,
        "active": entry.active,
        "prize": entry.prize,
    }


def tournament_standings(*, tournament_id: int) -> dict[str, Any]:
    """The arena's standings: every entrant by score, then wins (equal on both: the same
    rank), with the arena's status, pool, how many of its tables are being played, the hands
    that count (scored and not voided before the payout) and the scored hands voided since."""
    tournament = tournament_get(tournament_id=tournament_id)
    entries = list(
        TournamentEntry.objects.filter(tournament=tournament)
        .select_related("user")
        .order_by("-score", "-wins", "id")
    )
    hands = {
        (row["kind"], row["after_payout"]): row["n"]
        for row in tournament.hands.values("kind", "after_payout").annotate(n=Count("id"))
    }
    results = []
    rank, previous = 0, None
    for index, entry in enumerate(entries, start=1):
        if (entry.score, entry.wins) != previous:
            rank, previous = index, (entry.score, entry.wins)
        results.append(_entry_body(entry, rank=entry.rank or rank))
    return {
        "tournament_id": tournament.pk,
        "status": tournament.status,
        "starts_at": utc_iso(tournament.starts_at),
        "ends_at": utc_iso(tournament.ends_at),
        "pool": tournament_pool(tournament),
        "payout": list(tournament.payout),
        "tables_playing": TournamentTable.objects.filter(tournament=tournament, done=False).count(),
        "hands": hands.get((TournamentHand.Kind.SCORE, False), 0)
        - hands.get((TournamentHand.Kind.VOID, False), 0),
        "hands_voided": hands.get((TournamentHand.Kind.VOID, False), 0)
        + hands.get((TournamentHand.Kind.VOID, True), 0),
        "results": results,
    }


# --------------------------------------------------------------------------- checks


def _legs(key: str) -> dict[int, int] | None:
    tx = LedgerTransaction.objects.filter(idempotency_key=key).first()
    if tx is None:
        return None
    return {e.account_id: e.amount for e in ledger_entries_of(tx)}  # archived months too


def tournament_problems(tournament: Tournament) -> list[str]:
    """Why an arena's money does not reconcile (empty when it does): the fees taken at the
    start are its entries' fees; once it has ended its pool is empty and what left it (prizes,
    or the refund) is what came in, to the entrants' wallets as recorded."""
    pk = tournament.pk
    entries = list(tournament.entries.select_related("user__wallet"))
    fees = sum(e.fee for e in entries)
    pool = LedgerAccount.objects.filter(
        kind=LedgerAccount.Kind.POT, table_id=tournament.ledger_table_id
    ).first()
    balance = pool.balance if pool is not None else 0
    taken = _legs(tournament_entries_key(pk))
    if tournament.started_at is None:
        if taken is not None or balance:
            return [f"tournament {pk}: never started but its pool moved"]
        return []
    if fees and taken is None:
        return [f"tournament {pk}: started without taking its {fees} Quan of entry fees"]
    taken = taken or {}
    if pool is not None and taken.get(pool.pk, 0) != fees:
        return [f"tournament {pk}: its pool took {taken.get(pool.pk, 0)}, its entries' fees {fees}"]
    if tournament.status == Status.RUNNING:
        return [] if balance == fees else [f"tournament {pk}: its pool holds {balance}, not {fees}"]
    if balance:
        return [f"tournament {pk} has ended but its pool still holds {balance}"]
    out_key = (
        tournament_prizes_key(pk)
        if tournament.status == Status.FINISHED
        else tournament_refund_key(pk)
    )
    paid = _legs(out_key) or {}
    wallets = {e.user.wallet.pk: e for e in entries if hasattr(e.user, "wallet")}
    paid_out = sum(amount for account, amount in paid.items() if account in wallets)
    if paid_out != fees:
        return [f"tournament {pk}: {paid_out} Quan paid out of {fees} taken in"]
    if tournament.status == Status.FINISHED:
        wrong = [
            e.user_id for account, e in wallets.items() if paid.get(account, 0) != (e.prize or 0)
        ]
        if wrong:
            return [f"tournament {pk}: the prizes booked are not the standings' (users {wrong})"]
    return []


def tournament_points_problems(tournament: Tournament) -> list[str]:
    """Why an arena's points do not add up (empty when they do): each entrant's score is the
    sum of its points over the arena's ``TournamentHand`` rows (a hand's score and, if it was
    voided, its reversal), and a reversal takes off exactly what its hand gave (nothing after
    the payout)."""
    pk = tournament.pk
    rows = list(tournament.hands.select_related("hand").prefetch_related("hand__hand_seats"))
    scored = {r.hand_id: r.points for r in rows if r.kind == TournamentHand.Kind.SCORE}
    got: dict[int, int] = {}
    problems = []
    for row in rows:
        seats = row.hand.seat_list()
        if len(seats) != len(row.points):
            problems.append(f"tournament {pk}: hand {row.hand_id}'s points are not one a seat")
            continue
        if row.kind == TournamentHand.Kind.VOID:
            expected = [0] * len(seats) if row.after_payout else scored.get(row.hand_id)
            if expected is None or [-p for p in row.points] != list(expected):
                problems.append(
                    f"tournament {pk}: hand {row.hand_id}'s void does not reverse its score"
                )
        for seat, points in zip(seats, row.points, strict=True):
            got[seat.user_id] = got.get(seat.user_id, 0) + int(points)
    wrong = sorted(
        user_id
        for user_id, score in tournament.entries.values_list("user_id", "score")
        if score != got.pop(user_id, 0)
    )
    if wrong or got:
        problems.append(
            f"tournament {pk}: scores are not the sums of its hands' points "
            f"(users {wrong + sorted(got)})"
        )
    return problems


def check_tournaments() -> list[LedgerProblem]:
    """Every arena reconciles (:func:`tournament_problems`) and its points add up
    (:func:`tournament_points_problems`)."""
    problems = []
    for tournament in Tournament.objects.order_by("pk").iterator(chunk_size=200):
        problems.extend(LedgerProblem("tournament", d) for d in tournament_problems(tournament))
        problems.extend(
            LedgerProblem("tournament", d) for d in tournament_points_problems(tournament)
        )
    return problems


def arena_hold_is_entry(
    *, account_id: int, user_id: int | None, table_id: int, amount: int
) -> bool:
    """Whether an open hold at ``table_id`` is a scheduled arena's entry fee held for one of
    its entrants (its table of record has no seats: ``check_holds_have_seats`` asks this)."""
    return (
        TournamentEntry.objects.filter(
            tournament__ledger_table_id=table_id,
            tournament__status=Status.SCHEDULED,
            user_id=user_id,
            fee=amount,
        ).exists()
        and hold_amount(account_id=account_id, table_id=table_id) == amount
    )
