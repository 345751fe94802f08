"""Booking an ended hand's settlement in the Quan ledger (RULES.md §10–11): one balanced
transaction per hand, keyed by the hand, computed by ``games.rules.quan`` from the hand's result, its
frozen stake and room, and the wallets as they stand: the wallets its deal bound in the hand's
log (``settlement_parties``), never whoever a seat row names now.

A seat pays from its hold at this table plus its free Quan (``games.services.seat_holds``), and
never more than its player's loss limits still allow (``games.services.table_limits``); its
hold is shrunk before the booking and made whole after it, under the wallets' locks.

Lock order: the table row, then the hand row, then the ledger accounts in id order (inside
``ledger_post``), then the players' user rows in id order (their XP, ``games.services.progression``),
then their rating rows in user id order (``games.services.ratings``), then their leaderboard
rows (``games.services.leaderboards``). A move that ends a hand holds its hand then the table; it never waits for an
ended hand's row, so the two orders cannot meet in a cycle.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.ledger import ledger_post
from accounts.models import LedgerAccount, LedgerTransaction
from core import metrics
from games.clock import arena_clock_on_commit
from games.hand_store import hand_ruleset
from games.ledger_keys import settlement_key
from games.models import Hand, Seat, Table
from games.rules.quan import POT, QuanSettlement, SeatQuan, result_quan
from games.rules.records import SETTLED, settled_record
from games.rules.results import Pot
from games.services.feed import feed_append
from games.services.hand_log import hand_record_append
from games.services.leaderboards import boards_record_settled
from games.services.pot import pot_refund, pot_shares_record
from games.services.progression import hand_award_xp
from games.services.ratings import hand_rate, rating_notes
from games.services.seat_holds import settlement_capacities, settlement_holds
from games.services.settlement_parties import Party, hand_seats_as_bound, settlement_accounts
from games.services.table_limits import settlement_within_limits

logger = logging.getLogger(__name__)


def hand_quan(hand: Hand, *, balances: list[int], pot_balance: int) -> QuanSettlement:
    """The hand's settlement in Quan for these wallet balances (in play order) and pot, on the
    room's terms frozen at the deal."""
    fees, xuong_sai_settled = hand.room_terms()
    return result_quan(
        hand.outcome_result(),
        n_seats=hand.n_seats,
        stake=hand.stake,
        fees=fees,
        xuong_sai_settled=xuong_sai_settled,
        balances=balances,
        pot_balance=pot_balance,
    )


def _legs(
    quan: QuanSettlement, accounts: dict[Party, LedgerAccount | None]
) -> list[tuple[LedgerAccount, int]]:
    legs = []
    for party, amount in quan.legs().items():
        account = accounts[party]
        if amount and account is None:
            raise AssertionError(f"hand settlement moves {amount} for {party!r} without a pot")
        if amount and account is not None:
            legs.append((account, amount))
    return legs


def practice_quan(n_seats: int) -> dict[str, Any]:
    """What a practice hand books: nothing — every seat's Quan zero, no fee, no pot, flagged
    ``"practice": true`` (``Hand.quan`` of a practice hand, checked by ``ledger_check``)."""
    zeros = QuanSettlement(
        seats=tuple(SeatQuan(seat=i, paid=0, received=0, fee=0) for i in range(n_seats)),
        pot_in=0,
        pot_out=0,
        fee_percent=0,
    )
    return {**zeros.to_dict(), "balances": [], "pot_before": 0, "practice": True}


def hand_settle(*, hand_id: int) -> LedgerTransaction | None:
    """Book the ended hand's settlement once (safe to run any number of times: the ledger key
    is the hand), record it on the hand and in its log (a ``settled`` event, in the same
    transaction: the hand's seq and ETag move), and unseat the players left with nothing (§11).
    The players' XP (RULES.md §11) and ratings (``games.services.ratings``) are updated in the
    same transaction, so exactly once.
    A practice table's hand is marked settled with :func:`practice_quan`: no Quan, fee, pot
    share or XP (the points of its result stand, for the players to see).
    Returns the transaction, or None when the hand is not ended (nothing to book yet).
    Locks the table row, the hand row, the ledger accounts (in ``ledger_post``), then the
    players' user rows (``hand_award_xp``)."""
    with transaction.atomic():
        table_id = Hand.objects.filter(pk=hand_id).values_list("table_id", flat=True).first()
        if table_id is None:
            return None
        table = Table.objects.select_for_update(no_key=True).get(pk=table_id)
        hand = (
            Hand.objects.select_for_update(no_key=True, of=("self",))
            .select_related("room")
            .prefetch_related("hand_seats__user")
            .get(pk=hand_id)
        )
        if hand.status != Hand.Status.ENDED:
            return None
        # Who sits where as the deal recorded it, whatever the seat rows say now.
        hand_seats_as_bound(hand)
        if table.practice:
            if hand.settled_at is None:
                hand.quan = practice_quan(hand.n_seats)
                hand.settled_at = timezone.now()
                _record_settled(hand, hand.quan, None)
                hand.save(update_fields=["quan", "settled_at", "seq", "updated_at"])
            return None
        accounts = settlement_accounts(
            hand, create=True, with_pot=hand_ruleset(hand).ga_gop or _pot_flows(hand)
        )
        wallets = [_opened(accounts[i]) for i in range(hand.n_seats)]
        pot = accounts[POT]
        # Read the balances under the accounts' locks: the ledger orders them by id.
        locked = {
            a.pk: a
            for a in LedgerAccount.objects.select_for_update(no_key=True)
            .filter(pk__in=[w.pk for w in wallets] + ([pot.pk] if pot else []))
            .order_by("pk")
        }
        if hand.settled_at is not None:
            return LedgerTransaction.objects.filter(idempotency_key=settlement_key(hand.pk)).first()
        # A seat pays from its hold at this table and its free Quan, never from its holds at
        # other tables: that is the "balance" the §10.8 cap sees.
        here, capacity = settlement_capacities(table=table, wallets=wallets, locked=locked)
        # A loss limit caps what a seat pays as its balance does (RULES.md §11).
        payable = settlement_within_limits(hand=hand, capacity=capacity)
        quan = hand_quan(hand, balances=payable, pot_balance=locked[pot.pk].balance if pot else 0)
        holds = {
            "table": table,
            "hand": hand,
            "wallets": wallets,
            "locked": locked,
            "here": here,
            "capacity": capacity,
            "nets": [quan.legs()[i] for i in range(hand.n_seats)],
            "seated": set(Seat.objects.filter(table=table).values_list("player_id", flat=True)),
        }
        emptied = settlement_holds(**holds, grow=False)
        tx = _book(hand, table, quan, accounts)
        settlement_holds(**holds, grow=True)
        # The balances it was computed from are kept with it: ledger_check recomputes it.
        hand.quan = {
            **quan.to_dict(),
            "balances": payable,
            "pot_before": locked[pot.pk].balance if pot else 0,
        }
        hand.settled_at = timezone.now()
        _record_settled(hand, hand.quan, tx)
        hand.save(update_fields=["quan", "settled_at", "seq", "updated_at"])
        metrics.settlement_booked(ended_at=hand.ended_at, settled_at=hand.settled_at)
        pot_shares_record(table=table, hand=hand, quan=quan)
        xp = hand_award_xp(hand=hand)
        rated = hand_rate(hand=hand)
        boards_record_settled(hand=hand, xp=xp, rated=rated)
        _after_settlement(table, hand, emptied)
        arena_clock_on_commit(table_id=table.pk)  # an arena's players are free
        feed_append(notes=rating_notes(hand=hand, rated=rated))  # the feed last (its locks)
        return tx


def _opened(account: LedgerAccount | None) -> LedgerAccount:
    """A seat's wallet, which ``settlement_accounts(create=True)`` always opens."""
    assert account is not None
    return account


def _record_settled(hand: Hand, quan: dict[str, Any], tx: LedgerTransaction | None) -> None:
    """The settlement's record in the hand's log, in the booking's transaction (its seq and
    ETag move, long polls wake on commit)."""
    hand_record_append(hand=hand, type=SETTLED, payload=settled_record(quan, tx.pk if tx else None))


def _pot_flows(hand: Hand) -> bool:
    """Whether the hand's points moved anything into or out of the pot (gà góp on)."""
    return any(t.payee is Pot.POT for t in hand.outcome_result().transfers)


def _book(
    hand: Hand,
    table: Table,
    quan: QuanSettlement,
    accounts: dict[Party, LedgerAccount | None],
) -> LedgerTransaction | None:
    legs = _legs(quan, accounts)
    if not legs:
        return None  # hòa with no pot: nothing moves, but the hand is settled all the same
    return ledger_post(
        kind=LedgerTransaction.Kind.HAND_SETTLEMENT,
        key=settlement_key(hand.pk),
        legs=legs,
        memo=f"hand {hand.table_id}/{hand.number} at {hand.stake} Quan a point",
        hand=hand,
        table=table,
    )


def _after_settlement(table: Table, hand: Hand, emptied: set[int]) -> None:
    """Players no longer seated (they left during the hand or since it ended) get their pot
    share back now that the hand paid into it; a player left with nothing it can pay at this
    table (``emptied``: its hold there is gone, seat_holds) is unseated, with its share
    (RULES.md §10.10, §11)."""
    seated = set(Seat.objects.filter(table=table).values_list("player_id", flat=True))
    for seat in hand.seat_list():
        if seat.user_id not in seated:  # left during the hand, or since it ended
            pot_refund(table=table, user=seat.user)
    for seat in hand.seat_list():
        if seat.user_id in emptied and seat.user_id in seated:
            pot_refund(table=table, user=seat.user)
            Seat.objects.filter(table=table, player_id=seat.user_id).delete()


def hands_unsettled(*, limit: int = 1000) -> list[int]:
    """Ended hands whose settlement is not booked yet (a lost task, a killed worker)."""
    return list(
        Hand.objects.filter(status=Hand.Status.ENDED, settled_at__isnull=True)
        .order_by("ended_at")
        .values_list("pk", flat=True)[:limit]
    )
