"""The log keeps up with 10,000 ledger transactions (queued as their bookings queue them): the appender's reads of the tree do not
grow with it (its compact range only), nor do a head's and a proof's."""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.record_keys import record_keys
from games.rules.merkle import leaves_subtrees, root, verify_inclusion
from games.rules.record_mac import LEDGER, record_mac
from tests.db_owner import as_owner
from transparency.models import LogLeaf, LogNode, PendingLeaf
from transparency.selectors import log_inclusion, log_root
from transparency.services import log_catch_up, tree_head_sign

pytestmark = pytest.mark.django_db
N = 10_000


def transactions_queued(n: int) -> None:
    """``n`` ledger transactions (no entries: the log reads only their hash and MAC), each with
    the record key's MAC of its hash, inserted with the ledger's triggers off, then queued as the
    booking's trigger queues each."""
    keys = record_keys()
    digests = [hashlib.sha256(str(g).encode()).hexdigest() for g in range(n)]
    macs = [record_mac(keys, domain=LEDGER, digest=d) for d in digests]
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        as_owner("ALTER TABLE accounts_ledgertransaction DISABLE TRIGGER USER")
        cursor.execute(
            "INSERT INTO accounts_ledgertransaction (kind, idempotency_key, memo, prev_hash, hash,"
            " chain, mac, mac_key, created_at)"
            " SELECT 'adjustment', 'scale:' || d, '', '', d, 0, m, k, now()"
            " FROM unnest(%s::text[], %s::text[], %s::text[]) WITH ORDINALITY AS r(d, m, k, i)"
            " ORDER BY i",
            [digests, [m for m, _ in macs], [k for _, k in macs]],
        )
        as_owner("ALTER TABLE accounts_ledgertransaction ENABLE TRIGGER USER")
        cursor.execute(
            "INSERT INTO transparency_pendingleaf (kind, ref_id, seq, hash, created_at)"
            " SELECT 'ledger', id, NULL, hash, now() FROM accounts_ledgertransaction"
            " WHERE idempotency_key LIKE 'scale:%%' ORDER BY id"
        )


def test_ten_thousand_transactions_are_appended_in_batches_of_constant_reads() -> None:
    # given 10,000 ledger transactions queued (as the booking's trigger queues each)
    transactions_queued(N)
    booked = N
    # when the log catches up, a batch at a time
    with CaptureQueriesContext(connection) as first_batch:
        log_catch_up(batch=2000)
    # then every one is a leaf, each batch read the tree's compact range alone,
    assert LogLeaf.objects.count() == booked and not PendingLeaf.objects.exists()
    per_batch = [q["sql"] for q in first_batch.captured_queries if "lognode n" in q["sql"]]
    # one read of the compact range per batch (none for the empty log's)
    assert len(per_batch) == -(-booked // 2000) - 1
    # the stored tree is the whole tree's, and a head or a proof costs a query or two.
    hashes = [bytes.fromhex(h) for h in LogLeaf.objects.values_list("leaf_hash", flat=True)]
    assert log_root(booked) == root(booked, leaves_subtrees(hashes))
    assert LogNode.objects.count() == 2 * booked - bin(booked).count("1")
    with CaptureQueriesContext(connection) as signing:
        head = tree_head_sign()
    assert head.size == booked and len(signing.captured_queries) < 12
    leaf = LogLeaf.objects.get(index=booked // 3)
    with CaptureQueriesContext(connection) as proving:
        proof = log_inclusion(leaf=leaf.leaf_hash, size=booked)
    assert len(proving.captured_queries) <= 3
    assert verify_inclusion(
        leaf.index,
        booked,
        bytes.fromhex(leaf.leaf_hash),
        [bytes.fromhex(p) for p in proof["proof"]],
        bytes.fromhex(head.root),
    )
