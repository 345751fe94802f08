"""Everything that writes the transparency log (docs/audit.md).

What the log records is queued by database triggers in the transaction of what it logs (a
ledger transaction's booking, a hand's ``settled`` or ``voided`` record: transparency 0002), so
a settlement pays one small insert and no lock of the log's. :func:`log_catch_up` appends the
queue in order, one appender at a time (the transaction-level advisory lock
``LOG_APPEND_LOCK``): a queued row becomes a leaf and its perfect subtrees become nodes in one
transaction, so the queue and the tree never disagree. :func:`tree_head_sign` signs the tree's
head with the key of ``CHAN_LOG_SIGNING_KEY``; the Celery beat runs both
(``transparency.tasks.log_publish_due``).

Only what the record key vouches for enters the log: a queued transaction or hand head whose row's
MAC (``games.rules.record_mac``) does not verify its hash, a row written with database
credentials alone, is left out (its queue row is taken all the same, so the rest is not held up),
logged as an error and counted (``chan_log_leaves_refused_total``). A row without a MAC is let in
only if it was written before keys existed (:func:`_vouched`).
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.record_keys import record_keys
from core import metrics
from core.errors import DomainError
from games.rules.log_entries import hand_leaf, ledger_leaf, tree_head_message
from games.rules.merkle import appended, frontier_after, leaf_hash
from games.rules.record_mac import HAND, LEDGER, RecordKeys, mac_problem
from transparency.models import LeafKind, LogKey, TreeHead
from transparency.selectors import log_root, log_size_locked, nodes_read
from transparency.signing import SigningKeyError, key_id_of, private_key_from, public_bytes

# The transaction-level advisory lock that serialises appends to the log and signatures.
LOG_APPEND_LOCK = 0x4C4F475F41505044  # "LOG_APPD"
logger = logging.getLogger(__name__)
# A head is signed again at least this often, though the log did not grow: a monitor sees the
# log is alive.
HEAD_REFRESH = dt.timedelta(hours=1)

_TAKE_QUEUED = """
DELETE FROM transparency_pendingleaf WHERE id IN (
    SELECT id FROM transparency_pendingleaf ORDER BY id LIMIT %s
) RETURNING id, kind, ref_id, seq, hash
"""


class LogKeyMissing(DomainError):
    code = "log_key_missing"
    message = _("The transparency log has no signing key (CHAN_LOG_SIGNING_KEY).")


def _leaf_data(kind: str, ref_id: int, seq: int | None, digest: str) -> bytes:
    if kind == LeafKind.LEDGER:
        return ledger_leaf(tx_id=ref_id, tx_hash=digest)
    assert seq is not None
    return hand_leaf(hand_id=ref_id, seq=seq, head=digest)


_LEDGER_MACS = """
SELECT id, mac, mac_key FROM accounts_ledgertransaction WHERE id = ANY(%s::bigint[])
"""
# each queued hand head's event, and whether an event of its hand before it carries a MAC
_HAND_MACS = """
SELECT q.hand_id, q.seq, e.mac, e.mac_key,
       EXISTS (SELECT 1 FROM games_handevent k WHERE k.hand_id = h.id
               AND k.hand_created_at = h.created_at AND k.seq < q.seq AND k.mac <> '')
FROM unnest(%s::bigint[], %s::integer[]) AS q(hand_id, seq)
JOIN games_hand h ON h.id = q.hand_id
JOIN games_handevent e ON e.hand_id = h.id AND e.hand_created_at = h.created_at AND e.seq = q.seq
"""
_FIRST_KEYED_LEDGER = "SELECT min(id) FROM accounts_ledgertransaction WHERE mac <> ''"


def _vouched(taken: Sequence[tuple[Any, ...]], *, cursor: Any) -> list[tuple[Any, ...]]:
    """The queued rows (``id, kind, ref_id, seq, hash``) whose record the key vouches for: its
    row's MAC verifies the queued hash (``games.rules.record_mac``), or it has none and was
    written before keys existed (a transaction before the ledger's first keyed one, a hand head
    before its hand's first keyed event). The others are logged and counted, and left out."""
    keys = record_keys()
    ledger_ids = [ref for _, kind, ref, _seq, _h in taken if kind == LeafKind.LEDGER]
    hands = [(ref, seq) for _, kind, ref, seq, _h in taken if kind != LeafKind.LEDGER]
    ledger: dict[int, tuple[str, str]] = {}
    hand: dict[tuple[int, int], tuple[str, str, bool]] = {}
    if ledger_ids:
        cursor.execute(_LEDGER_MACS, [ledger_ids])
        ledger = {pk: (mac, kid) for pk, mac, kid in cursor.fetchall()}
    if hands:
        cursor.execute(_HAND_MACS, [[h for h, _ in hands], [s for _, s in hands]])
        hand = {(h, s): (mac, kid, keyed) for h, s, mac, kid, keyed in cursor.fetchall()}
    first_keyed: list[int | None] = []  # read once, when a transaction without a MAC asks

    def legacy_ledger(ref: int) -> bool:
        if not first_keyed:
            cursor.execute(_FIRST_KEYED_LEDGER)
            first_keyed.append(cursor.fetchone()[0])
        first = first_keyed[0]
        return first is None or ref < first

    kept = []
    for row in taken:
        _id, kind, ref, seq, digest = row
        if kind == LeafKind.LEDGER:
            mac, kid = ledger.get(ref, ("", ""))
            legacy = ref in ledger and not mac and legacy_ledger(ref)
            why = _unvouched(keys, LEDGER, digest, mac, kid, legacy, found=ref in ledger)
        else:
            mac, kid, keyed_before = hand.get((ref, seq), ("", "", False))
            legacy = (ref, seq) in hand and not mac and not keyed_before
            why = _unvouched(keys, HAND, digest, mac, kid, legacy, found=(ref, seq) in hand)
        if why is None:
            kept.append(row)
            continue
        where = f"transaction {ref}" if kind == LeafKind.LEDGER else f"hand {ref} at seq {seq}"
        logger.error("transparency log: %s left out: %s", where, why)
        metrics.log_leaf_refused(kind=kind)
    return kept


def _unvouched(
    keys: RecordKeys, domain: str, digest: str, mac: str, kid: str, legacy: bool, *, found: bool
) -> str | None:
    if not found:
        return "no such record"
    if legacy:
        return None
    return mac_problem(keys, domain=domain, digest=digest, mac=mac, mac_key=kid)


def log_catch_up(*, batch: int = 5000) -> int:
    """Append what is queued, oldest first, ``batch`` leaves a transaction. Returns how many
    leaves were appended. Safe to run twice, and beside itself (the second waits)."""
    total = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOG_APPEND_LOCK])
            cursor.execute(_TAKE_QUEUED, [batch])
            taken = sorted(cursor.fetchall())
            if not taken:
                return total
            queued = _vouched(taken, cursor=cursor)
            if not queued:  # all of the batch left out: its queue rows are taken all the same
                continue
            size = log_size_locked(cursor)
            have = nodes_read(frontier_after(size), cursor=cursor)
            frontier = [have[node] for node in frontier_after(size)]
            hashes = [leaf_hash(_leaf_data(k, r, s, h)) for _, k, r, s, h in queued]
            _frontier, made = appended(size, frontier, hashes)
            now = timezone.now()
            with cursor.copy(
                "COPY transparency_logleaf (index, kind, ref_id, seq, hash, leaf_hash, created_at)"
                " FROM STDIN"
            ) as copy:
                for offset, ((_, kind, ref_id, seq, digest), leaf) in enumerate(
                    zip(queued, hashes, strict=True)
                ):
                    copy.write_row((size + offset, kind, ref_id, seq, digest, leaf.hex(), now))
            with cursor.copy("COPY transparency_lognode (level, index, hash) FROM STDIN") as copy:
                for level, index, digest in made:
                    copy.write_row((level, index, digest.hex()))
        total += len(queued)
        if len(taken) < batch:
            return total


def tree_head_sign(*, now: dt.datetime | None = None) -> TreeHead:
    """Sign the log's head with ``CHAN_LOG_SIGNING_KEY``'s key, unless the latest signed head
    (by this key) already has the log's size and is younger than ``HEAD_REFRESH``: then that
    one. Timestamps only grow. Raises ``log_key_missing`` without a usable key."""
    try:
        key = private_key_from(settings.CHAN_LOG_SIGNING_KEY)
    except (SigningKeyError, ValueError) as exc:
        raise LogKeyMissing() from exc
    kid = key_id_of(key)
    now = now or timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOG_APPEND_LOCK])
        size = log_size_locked(cursor)
        latest = TreeHead.objects.order_by("-id").first()
        stamp = int(now.timestamp() * 1000)
        if latest is not None:
            fresh = stamp - latest.timestamp < HEAD_REFRESH.total_seconds() * 1000
            if latest.size == size and latest.key_id == kid and fresh:
                return latest
            stamp = max(stamp, latest.timestamp + 1)
        root = log_root(size)
        LogKey.objects.get_or_create(
            key_id=kid,
            defaults={"public_key": base64.b64encode(public_bytes(key)).decode()},
        )
        signature = key.sign(tree_head_message(size=size, root=root, timestamp_ms=stamp))
        return TreeHead.objects.create(
            size=size,
            root=root.hex(),
            timestamp=stamp,
            key_id=kid,
            signature=base64.b64encode(signature).decode(),
        )


def log_publish() -> TreeHead:
    """Append what is queued, then sign the head (the beat's task)."""
    log_catch_up()
    return tree_head_sign()
