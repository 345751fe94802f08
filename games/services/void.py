"""Voiding a hand (staff): its settlement is reversed in the ledger, the hand is
marked void with a reason, and its log keeps every move (the replay still shows them) and gains
a ``voided`` record (who, why, the reversing transaction): the hand's seq and ETag move.

The reversal is one transaction, ``hand:<id>:void``, whose entries negate the settlement's, so
each player's wallet, the house and the pot are where they were before the settlement. It is
refused as a whole (no partial reversal) when:

* the hand has not ended or its settlement is not booked yet (``hand_not_settled``);
* the settlement moved Quan into or out of a gà góp pot (``hand_void_pot``): the pot's shares
  have moved on since, and reversing the pot alone would break ``ledger_check``'s pot check;
* a wallet that was paid no longer holds what it was paid (``hand_void_insufficient``): staff
  may first take the difference back with a ledger adjustment, then void (docs/audit.md).

XP awarded for the hand stays (it measures play, not money); its rating changes are reversed
(``games.services.ratings.hand_unrate``: each player's rating moves back by the hand's change),
and so are its arena points if an arena scored it (``games.services.tournaments.
tournament_hand_void``: a reversal row; once the arena has paid out, the payout stands and the
void is only noted). Voiding a void hand is a no-op.

Lock order as in ``hand_settle``: the hand row, then the ledger accounts (in ``ledger_post``);
an arena's hand takes its tournament row before the hand's (the arenas' order).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.ledger import ledger_post
from accounts.models import LedgerAccount, LedgerTransaction
from core.errors import Conflict, InvalidInput, NotFound
from games.ledger_keys import settlement_key, void_key
from games.models import Hand
from games.rules.records import VOIDED
from games.services.feed import feed_append
from games.services.hand_log import hand_record_append
from games.services.leaderboards import boards_record_voided
from games.services.ratings import hand_unrate, rating_notes
from games.services.tournaments import tournament_hand_void, tournament_of_hand_lock


def hand_void(*, hand_id: int, staff: Any, reason: str) -> LedgerTransaction | None:
    """Void an ended, settled hand: book the reversal of its settlement (None when the
    settlement moved nothing, a hòa without a pot), set ``voided_at`` and ``void_reason``, and
    append the ``voided`` record to the hand's log, all in one transaction.
    Safe to repeat: a void hand returns its reversal and changes nothing."""
    reason = reason.strip()
    if not reason:
        raise InvalidInput(_("Voiding a hand needs a reason."), code="void_reason_missing")
    with transaction.atomic():
        arena = tournament_of_hand_lock(hand_id=hand_id)  # the arenas' lock order: it first
        hand = Hand.objects.select_for_update(no_key=True).filter(pk=hand_id).first()
        if hand is None:
            raise NotFound(_("No such hand."))
        if hand.voided_at is not None:
            return LedgerTransaction.objects.filter(idempotency_key=void_key(hand.pk)).first()
        if hand.status != Hand.Status.ENDED or hand.settled_at is None:
            raise Conflict(
                _("Hand %(hand)s is not settled yet; only a settled hand can be voided."),
                code="hand_not_settled",
                hand=hand.pk,
            )
        settlement = LedgerTransaction.objects.filter(
            idempotency_key=settlement_key(hand.pk)
        ).first()
        reversal = None
        if settlement is not None:
            entries = list(settlement.entries.select_related("account").order_by("account_id"))
            if any(e.account.kind == LedgerAccount.Kind.POT for e in entries):
                raise Conflict(
                    _("Hand %(hand)s paid into or out of a gà góp pot; it cannot be voided."),
                    code="hand_void_pot",
                    hand=hand.pk,
                )
            reversal = _reverse(hand, settlement, entries, staff, reason)
        hand.voided_at = timezone.now()
        by = getattr(staff, "username", "?")
        hand.void_reason = f"{reason} (by {by})"[:200]
        hand_record_append(
            hand=hand,
            type=VOIDED,
            payload={
                "by": by,
                "reason": reason[:200],
                "transaction": reversal.pk if reversal else None,
            },
        )
        hand.save(update_fields=["voided_at", "void_reason", "seq", "updated_at"])
        unrated = hand_unrate(hand=hand)
        boards_record_voided(hand=hand, unrated=unrated)
        notes = rating_notes(hand=hand, rated=unrated, voided=True)
        if arena is not None:
            notes += tournament_hand_void(tournament=arena, hand=hand)
        feed_append(notes=notes)
        return reversal


def _reverse(
    hand: Hand, settlement: LedgerTransaction, entries: list[Any], staff: Any, reason: str
) -> LedgerTransaction:
    try:
        return ledger_post(
            kind=LedgerTransaction.Kind.HAND_VOID,
            key=void_key(hand.pk),
            legs=[(e.account, -e.amount) for e in entries],
            memo=f"void of hand {hand.table_id}/{hand.number}: {reason}",
            user=staff,
            hand=hand,
            table=hand.table,
        )
    except Conflict as exc:
        if exc.code != "insufficient_balance":
            raise
        raise Conflict(
            _(
                "Hand %(hand)s cannot be voided: account %(account)s holds %(balance)s Quan "
                "but the reversal takes %(needed)s."
            ),
            code="hand_void_insufficient",
            extra=exc.extra,
            hand=hand.pk,
            account=exc.extra.get("account_id"),
            balance=exc.extra.get("balance"),
            needed=exc.extra.get("needed"),
        ) from exc
