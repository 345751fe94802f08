"""A hand as one self-contained JSON document, for disputes and audits (docs/audit.md): what
``GET /api/v1/hands/{id}/export`` serves and ``manage.py audit_hands`` checks, in the format
``python -m games.rules.verify`` verifies without Django.

It holds the revealed seed, every hand and the booked Quan, so it is served to the hand's
participants only once the hand has ended, and to auditors (``accounts.audit_hands``) any time.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from accounts.ledger_archive import ledger_entries_archived
from accounts.models import LedgerAccount, LedgerEntry, LedgerHold, LedgerTransaction
from core.db_router import REPLICA, may_lag, primary_reads, read_alias
from games.archive import hand_events_archived
from games.hand_store import hand_ruleset, hand_seats_load, hand_state
from games.ledger_keys import settlement_key
from games.models import Hand, HandEvent
from games.rules.chain import CHAIN_ALGORITHM
from games.rules.verify import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    FAIR_SHUFFLE,
    FIXED_SHUFFLE,
    SHUFFLE_ALGORITHM,
)
from games.rules.views import missed_wins_of
from games.selectors.hands import hand_check_full_read, utc_iso
from games.services.settlement_parties import (
    hand_seats_as_bound,
    hand_seats_bound,
    settlement_accounts,
    settlement_party_of,
)
from transparency.selectors import hand_log_proofs


@may_lag
def hand_export_for_user(*, hand: Hand, user: Any) -> dict[str, Any]:
    """The hand's export for ``user``: an auditor any time; once the hand has ended, its players
    and, at a table open to spectators, anyone signed in (``403 hand_not_ended`` before).

    Who may read it is decided on the primary (``hand`` is its row). The document comes from a fresh
    replica when it holds the hand at the same version (``seq``: the settlement and a void move
    it), else from the primary: never a log older than the row it is exported with."""
    with primary_reads():
        hand_check_full_read(hand, user, _("A participant may export the hand only after it ends."))
    if read_alias() == REPLICA:
        copy = Hand.objects.select_related("table").filter(pk=hand.pk, seq=hand.seq).first()
        if copy is not None:
            return hand_export(copy)
    with primary_reads():
        return hand_export(hand)


def hand_export(hand: Hand) -> dict[str, Any]:
    """The whole hand as one document (no access check: callers decide who reads it)."""
    hand_seats_load(hand)
    hand_seats_as_bound(hand)  # who sits where as the deal bound it, whatever the rows say now
    seats = hand.seat_list()
    bound = hand_seats_bound(hand)
    room = hand.room
    fees, xuong_sai_settled = hand.room_terms()
    # an archived month's events are read from the archive (games.archive)
    events = list(HandEvent.objects.of_hand(hand).order_by("seq")) or hand_events_archived(hand)
    doc: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "hand_id": hand.pk,
        "number": hand.number,
        "status": hand.status,
        "table": {"id": hand.table_id, "name": hand.table.name},
        "room": {
            "slug": room.slug,
            "name": room.name,
            # the terms the hand was dealt under, not the room's today
            "fees": fees.to_dict(),
            "xuong_sai_settled": xuong_sai_settled,
        },
        "stake": hand.stake,
        "practice": hand.table.practice,
        # With the player and the account the deal bound to each seat (games.rules.seating:
        # the deal event's payload.seats); null for a hand dealt before the binding.
        "players": [
            {
                "seat": s.position,
                "username": s.user.username,
                "table_seat": s.table_seat,
                "user_id": s.user_id if bound is not None else None,
                "account": bound[s.position].account if bound is not None else None,
            }
            for s in seats
        ],
        "config": {
            "seats": hand.n_seats,
            "mode": hand.mode,
            # the complete table frozen at the deal (by value), with its preset and version
            "ruleset": hand_ruleset(hand).to_dict(),
            "previous_winner": hand.previous_winner,
            "prefs": [{"auto_u": s.auto_u, "auto_chiu": s.auto_chiu} for s in seats],
        },
        "dealer": hand.dealer,
        "seed": hand.seed,
        "seed_hash": hand.seed_hash,
        "shuffle": _shuffle_of(hand),
        # The fair deal (games.rules.fair_deal): every seat's seed, revealed with the server's,
        # and the commitment to the next hand's server seed made at this deal (a chain: the
        # next hand's seed_hash).
        "client_seeds": hand.client_seeds,
        "next_seed_hash": hand.next_seed_hash or None,
        "events": [
            {
                "seq": e.seq,
                "type": e.type,
                "seat": e.actor_seat,
                "system": e.system,
                "bot": e.bot,
                "payload": e.payload,
                "effects": e.effects,
                "prev_hash": e.prev_hash,
                "hash": e.hash,
                # the record key's MAC of the hash (games.rules.record_mac): checked by whoever
                # holds the key (``verify --record-key``)
                "mac": e.mac,
                "mac_key": e.mac_key,
                "created_at": utc_iso(e.created_at),
            }
            for e in events
        ],
        # The log's hash chain (games.rules.chain): its head is the view's head_hash.
        "chain": {
            "algorithm": CHAIN_ALGORITHM,
            "head": events[-1].hash if events else None,
        },
        "result": hand.result,
        # Every bỏ ù (RULES.md §4, §9), recomputed by the replay: not part of the stored result,
        # so that hands ended before it was recorded still verify (older exports lack it).
        "bo_u": missed_wins_of(hand_state(hand)),
        "ended_at": utc_iso(hand.ended_at) if hand.ended_at else None,
        "quan": hand.quan,
        "ledger": _ledger_transaction(hand),
        "caps": _cap_proofs(hand),
    }
    # The hand's head (and its settlement) in the transparency log, under a signed head.
    doc["log"] = hand_log_proofs(
        hand_id=hand.pk,
        seq=events[-1].seq if events else 0,
        head_hash=doc["chain"]["head"],
        ledger=[(doc["ledger"]["id"], doc["ledger"]["hash"])] if doc["ledger"] else [],
    )
    if hand.deck is not None:
        doc["deck"] = hand.deck
    return doc


def _shuffle_of(hand: Hand) -> str:
    if hand.deck is not None:
        return FIXED_SHUFFLE
    return SHUFFLE_ALGORITHM if hand.client_seeds is None else FAIR_SHUFFLE


def _ledger_transaction(hand: Hand) -> dict[str, Any] | None:
    """The hand's settlement transaction, each entry named by its party in the hand (a seat,
    ``"pot"``, ``"house"``; null for an account that is none of them)."""
    entries = list(
        LedgerEntry.objects.filter(transaction__idempotency_key=settlement_key(hand.pk))
        .select_related("transaction")
        .order_by("id")
    )
    if not entries:  # booked in a month since archived (accounts/ledger_archive.py)?
        tx = LedgerTransaction.objects.filter(idempotency_key=settlement_key(hand.pk)).first()
        entries = [] if tx is None else ledger_entries_archived(tx)
        if not entries:
            return None
    tx = entries[0].transaction
    party_of = settlement_party_of(hand)
    return {
        "id": tx.pk,
        "key": tx.idempotency_key,
        "kind": tx.kind,
        "created_at": utc_iso(tx.created_at),
        # what its hash is taken over (games.rules.ledger_chain), for the verifier to recompute
        "memo": tx.memo,
        "user": tx.user_id,
        "hand": tx.hand_id,
        "table": tx.table_id,
        "prev_hash": tx.prev_hash,
        "hash": tx.hash,
        "mac": tx.mac,
        "mac_key": tx.mac_key,
        "entries": [
            {
                "id": e.pk,
                "account": e.account_id,
                "party": party_of.get(e.account_id),
                "amount": e.amount,
                "balance_after": e.balance_after,
            }
            for e in entries
        ],
    }


def _held_elsewhere(account: LedgerAccount | None, hand: Hand) -> int:
    """Σ of the wallet's holds at other tables when the hand was settled: each table's latest
    hold event before ``settled_at`` (hold events are made under the wallet's lock, which the
    settlement held, so none of them straddles it)."""
    if account is None or hand.settled_at is None:
        return 0
    latest: dict[int, int] = {}
    events = (
        LedgerHold.objects.filter(account=account, created_at__lt=hand.settled_at)
        .exclude(table_id=hand.table_id)
        .order_by("id")
        .values_list("table_id", "amount")
    )
    for table_id, amount in events:
        latest[table_id] = amount
    return sum(latest.values())


def _cap_proofs(hand: Hand) -> list[dict[str, Any]]:
    """For each seat whose payment the settlement capped (it owed more than it held), the last
    ledger entry of its wallet before the settlement's: the ``balance_after`` the cap used, and
    the entry's transaction with its hash and ``prev_hash``, so that an auditor can find it in
    the ledger's chain (docs/audit.md). Empty until booked, and when no payment was capped."""
    capped = (hand.quan or {}).get("capped") or []
    if not capped:
        return []
    settlement = (
        LedgerEntry.objects.filter(transaction__idempotency_key=settlement_key(hand.pk))
        .values_list("transaction_id", flat=True)
        .first()
    )
    accounts = settlement_accounts(hand)
    proofs = []
    for seat in capped:
        account = accounts.get(seat)
        before = LedgerEntry.objects.select_related("transaction").filter(account=account)
        if settlement is not None:
            before = before.filter(transaction_id__lt=settlement)
        entry = before.order_by("-id").first() if account is not None else None
        proofs.append(
            {
                "seat": seat,
                "account": account.pk if account is not None else None,
                # what the wallet held for its seats at other tables: not to be paid
                # here, so the cap used balance_after less this
                "held_elsewhere": _held_elsewhere(account, hand),
                # null: the wallet had no entry before the settlement (its balance was 0)
                "entry": None
                if entry is None
                else {
                    "id": entry.pk,
                    "balance_after": entry.balance_after,
                    "transaction": {
                        "id": entry.transaction_id,
                        "hash": entry.transaction.hash,
                        "prev_hash": entry.transaction.prev_hash,
                    },
                },
            }
        )
    return proofs
