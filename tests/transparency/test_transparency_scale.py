"""The log keeps up with 10,000 ledger transactions (queued as their bookings queue them): the appender's reads of the tree do not
grow with it (its compact range only), nor do a head's and a proof's."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from games.rules.merkle import leaves_subtrees, root, verify_inclusion
from transparency.models import LogLeaf, LogNode, PendingLeaf
from transparency.selectors import log_inclusion, log_root
from transparency.services import log_catch_up, tree_head_sign

pytestmark = pytest.mark.django_db
N = 10_000


def test_ten_thousand_transactions_are_appended_in_batches_of_constant_reads() -> None:
    # given 10,000 ledger transactions queued (as the booking's trigger queues each)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO transparency_pendingleaf (kind, ref_id, seq, hash, created_at)"
            " SELECT 'ledger', g, NULL, md5(g::text) || md5(g::text), now()"
            " FROM generate_series(1, %s) AS g",
            [N],
        )
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
