"""The one resolver from a hand's settlement parties to their ledger accounts: a seat (its
index in play order) is its player's wallet, ``"pot"`` the table's gà góp pot, ``"house"`` the
house. The booking (``quan_booking``), the audit (``games.audit``) and the export
(``games.export``) all name accounts through it, so that they cannot disagree on who is who.
"""

from __future__ import annotations

from django.db.models import Q

from accounts.ledger import house_account, ledger_shards, pot_account, wallet_for
from accounts.ledger_archive import ledger_entries_archived
from accounts.models import LedgerAccount, LedgerEntry, LedgerTransaction
from games.models import Hand
from games.rules.quan import HOUSE, POT

Party = int | str  # a seat index, POT or HOUSE


def settlement_accounts(
    hand: Hand, *, create: bool = False, with_pot: bool = True
) -> dict[Party, LedgerAccount | None]:
    """Each party of ``hand``'s settlement with its ledger account: every seat, the pot and the
    house. ``create`` (the booking only) opens the accounts that do not exist yet, the pot only
    ``with_pot``; otherwise one query, and a party without an account maps to None."""
    seats = hand.seat_list()
    if create:
        accounts: dict[Party, LedgerAccount | None] = {
            s.position: wallet_for(s.user) for s in seats
        }
        accounts[POT] = pot_account(hand.table) if with_pot else None
        accounts[HOUSE] = house_account(hand=hand)
        return accounts
    found = LedgerAccount.objects.filter(
        Q(kind=LedgerAccount.Kind.WALLET, user_id__in=[s.user_id for s in seats])
        | Q(kind=LedgerAccount.Kind.POT, table_id=hand.table_id)
        | Q(kind=LedgerAccount.Kind.HOUSE)
    )
    # The house of a hand: the house account its settlement booked to (the parent for hands
    # settled before the split, accounts 0017), else the sub-account its booking would use.
    booked = set(
        LedgerEntry.objects.filter(
            transaction__hand=hand, account__kind=LedgerAccount.Kind.HOUSE
        ).values_list("account_id", flat=True)
    )
    wallets, pot, house, houses = {}, None, None, {}
    for account in found:
        if account.kind == LedgerAccount.Kind.WALLET:
            wallets[account.user_id] = account
        elif account.kind == LedgerAccount.Kind.POT:
            pot = account
        else:
            houses[account.pk] = account
    if not booked:  # booked in a month since archived (accounts/ledger_archive.py)?
        for tx in LedgerTransaction.objects.filter(hand=hand):
            booked |= {e.account_id for e in ledger_entries_archived(tx)} & houses.keys()
    house = houses.get(min(booked)) if booked else None
    if house is None:
        shard = hand.table_id % ledger_shards()
        house = next(
            (a for a in houses.values() if a.parent_id is not None and a.shard == shard), None
        )
    accounts = {s.position: wallets.get(s.user_id) for s in seats}
    accounts[POT] = pot if with_pot else None
    accounts[HOUSE] = house
    return accounts


def settlement_party_of(hand: Hand) -> dict[int, Party]:
    """The inverse: each account id of the hand's parties with its party (for the export)."""
    return {
        account.pk: party
        for party, account in settlement_accounts(hand).items()
        if account is not None
    }
