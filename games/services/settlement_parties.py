"""The one resolver from a hand's settlement parties to their ledger accounts: a seat (its
index in play order) is the wallet its deal bound (``games.rules.seating``), ``"pot"`` the
table's gà góp pot, ``"house"`` the house. The booking (``quan_booking``), the audit
(``games.audit``) and the export (``games.export``) all name accounts through it, so that they
cannot disagree on who is who.

Who sits where is read from the hand's record, never from its seat rows: a row changed after
the deal cannot redirect the settlement. A hand dealt before the binding (its deal binds no
seats) names its seats' wallets from the rows, as it always did.
"""

from __future__ import annotations

import logging

from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from accounts.ledger import house_account, ledger_shards, pot_account, wallet_for
from accounts.ledger_archive import ledger_entries_archived
from accounts.models import LedgerAccount, LedgerEntry, LedgerTransaction, User
from core.errors import Conflict
from games.archive import hand_events_archived
from games.models import Hand, HandEvent
from games.rules.quan import HOUSE, POT
from games.rules.seating import BindingError, BoundSeat, seats_bound

logger = logging.getLogger(__name__)

Party = int | str  # a seat index, POT or HOUSE

_UNREAD = object()


def hand_seats_bound(hand: Hand) -> tuple[BoundSeat, ...] | None:
    """The seats ``hand``'s deal event binds (player and account, in play order), or None for
    a hand dealt before the binding; kept on ``hand``. A binding that is not one entry per seat
    is the domain error ``record_broken`` (409): nobody is paid from a record that does not
    say who sits where (the checkers report it at seq 0)."""
    kept = getattr(hand, "_seats_bound", _UNREAD)
    if kept is not _UNREAD:
        return kept  # type: ignore[return-value]
    payload = (
        HandEvent.objects.of_hand(hand).filter(seq=0).values_list("payload", flat=True).first()
    )
    if payload is None:  # its month archived (games.archive)?
        archived = hand_events_archived(hand)
        payload = archived[0].payload if archived else None
    try:
        bound = seats_bound(payload, hand.n_seats)
    except BindingError as exc:
        logger.error("hand %s: its deal's seat binding is refused: %s", hand.pk, exc)
        raise Conflict(
            _("Hand %(hand_id)s's record does not replay: it was changed outside the server."),
            code="record_broken",
            hand_id=hand.pk,
        ) from exc
    hand._seats_bound = bound  # type: ignore[attr-defined]
    return bound


def hand_seats_as_bound(hand: Hand) -> list[int]:
    """Make ``hand.seat_list()`` (loaded) the seats its deal bound: a seat row whose player is
    not the one bound (changed behind the server after the deal) is logged and read, in this
    process, with the bound player, so that what the settlement does for a seat (holds, XP,
    ratings, pot shares) follows the record. Returns the positions it corrected."""
    bound = hand_seats_bound(hand)
    if bound is None:
        return []
    changed = [s for s, b in zip(hand.seat_list(), bound, strict=True) if s.user_id != b.player]
    if not changed:
        return []
    users = User.objects.in_bulk([bound[s.position].player for s in changed])
    for seat in changed:
        logger.error(
            "hand %s: seat %s's row names user %s, its deal bound user %s: the record wins",
            hand.pk,
            seat.position,
            seat.user_id,
            bound[seat.position].player,
        )
        seat.user = users[bound[seat.position].player]
    return [s.position for s in changed]


def settlement_accounts(
    hand: Hand, *, create: bool = False, with_pot: bool = True
) -> dict[Party, LedgerAccount | None]:
    """Each party of ``hand``'s settlement with its ledger account: every seat, the pot and the
    house. ``create`` (the booking only) opens the accounts that do not exist yet, the pot only
    ``with_pot``; otherwise one query, and a party without an account maps to None."""
    seats = hand.seat_list()
    bound = hand_seats_bound(hand)
    if create:
        if bound is not None:  # the wallets the deal bound (they exist: the deal held them)
            ids = [s.account for s in bound if s.account is not None]
            opened = LedgerAccount.objects.in_bulk(ids)
            accounts: dict[Party, LedgerAccount | None] = {
                s.position: opened.get(s.account) if s.account is not None else None for s in bound
            }
        else:
            accounts = {s.position: wallet_for(s.user) for s in seats}
        accounts[POT] = pot_account(hand.table) if with_pot else None
        accounts[HOUSE] = house_account(hand=hand)
        return accounts
    if bound is not None:
        wallets_of = Q(pk__in=[s.account for s in bound if s.account is not None])
    else:
        wallets_of = Q(user_id__in=[s.user_id for s in seats])
    found = LedgerAccount.objects.filter(
        (Q(kind=LedgerAccount.Kind.WALLET) & wallets_of)
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
            wallets[account.pk if bound is not None else account.user_id] = account
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
    if bound is not None:
        accounts = {s.position: wallets.get(s.account) for s in bound}
    else:
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
