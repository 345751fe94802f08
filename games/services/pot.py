"""The gà góp pot of a table and each player's share of it (RULES.md §10.10): contributions
recorded as hands are settled, the pot cleared when a hand takes it, a leaving player's share
refunded, and a newcomer's buy-in. Every movement of Quan goes through ``ledger_post``.

Lock order: the table row (held by the caller), then the ledger accounts (in ``ledger_post``).
"""

from __future__ import annotations

from typing import Any

from django.db.models import F

from accounts.ledger import ledger_post, pot_account, wallet_for
from accounts.models import LedgerAccount, LedgerTransaction
from games.hand_store import hand_ruleset
from games.models import Hand, PotShare, Seat, Table
from games.rules.quan import QuanSettlement


def pot_shares_record(*, table: Table, hand: Hand, quan: QuanSettlement) -> None:
    """After a hand's settlement: a pot it took starts empty, else each seat's payments into it
    add to that player's share. The caller holds the table row lock."""
    if quan.pot_out:
        PotShare.objects.filter(table=table).delete()
        return
    for seat, booked in zip(hand.seat_list(), quan.seats, strict=True):
        if booked.to_pot:
            share, _created = PotShare.objects.get_or_create(table=table, user_id=seat.user_id)
            PotShare.objects.filter(pk=share.pk).update(amount=F("amount") + booked.to_pot)


def pot_refund(*, table: Table, user: Any) -> LedgerTransaction | None:
    """A player leaving before the pot is won gets its share back. The caller holds the table
    row lock; safe to call for a player with no share."""
    share = PotShare.objects.filter(table=table, user=user).first()
    if share is None:
        return None
    tx = None
    if share.amount:
        tx = ledger_post(
            kind=LedgerTransaction.Kind.GA_GOP_REFUND,
            key=f"table:{table.pk}:pot-share:{share.pk}:refund",
            legs=[(pot_account(table), -share.amount), (wallet_for(user), share.amount)],
            memo=f"gà góp share refunded on leaving table {table.pk}",
            user=user,
            table=table,
        )
    share.delete()
    return tx


def pot_buy_in(*, table: Table, user: Any) -> LedgerTransaction | None:
    """A player joining a table whose pot holds Quan pays in as much as each seated player has
    in it: the smallest share among them (a newcomer never pays more than anyone at the table
    has at stake). The caller holds the table row lock; ``insufficient_balance`` if it cannot."""
    if not hand_ruleset_of_table(table).ga_gop:
        return None
    seated = Seat.objects.filter(table=table).exclude(player=user).values_list("player_id")
    amounts = list(
        PotShare.objects.filter(table=table, user_id__in=seated).values_list("amount", flat=True)
    )
    if not amounts or min(amounts) == 0:
        return None
    share = PotShare.objects.create(table=table, user=user, amount=min(amounts))
    return ledger_post(
        kind=LedgerTransaction.Kind.GA_GOP,
        key=f"table:{table.pk}:pot-share:{share.pk}:buy-in",
        legs=[(wallet_for(user), -share.amount), (pot_account(table), share.amount)],
        memo=f"gà góp buy-in at table {table.pk}",
        user=user,
        table=table,
    )


def hand_ruleset_of_table(table: Table) -> Any:
    """The table's ruleset as the rules core builds it (the same cache as a hand's)."""
    return hand_ruleset(Hand(ruleset=table.ruleset))


def pot_problems() -> list[str]:
    """Tables whose players' shares do not sum to their pot's balance (an arena's pool, the pot
    of its table of record, is checked by ``games.selectors.tournaments`` instead)."""
    problems = []
    pots = LedgerAccount.objects.filter(kind=LedgerAccount.Kind.POT)
    for pot in pots.filter(table__tournament_of_record__isnull=True):
        shares = sum(
            PotShare.objects.filter(table_id=pot.table_id).values_list("amount", flat=True)
        )
        if shares != pot.balance:
            problems.append(
                f"table {pot.table_id}: pot holds {pot.balance} but the shares sum to {shares}"
            )
    return problems
