"""The transparency log's writes (transparency.services): what the ledger and the hands queue
becomes leaves in order, the stored tree is RFC 9162's, heads are signed, the database keeps the
log append-only, and what the record key does not vouch for never enters it."""

from __future__ import annotations

import base64
import datetime as dt

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts.ledger import balance_adjust, issuance_account, wallet_for
from accounts.models import LedgerTransaction
from core.metrics import LOG_LEAVES_REFUSED
from games.rules.log_entries import hand_leaf, ledger_leaf, tree_head_message
from games.rules.merkle import leaf_hash, leaves_subtrees, root
from games.services.quan_booking import hand_settle
from tests.forgery import hand_event_forge, ledger_forge
from tests.games.test_games_hands_api import play_to_end
from transparency.models import LogLeaf, LogNode, PendingLeaf, TreeHead
from transparency.services import (
    LogKeyMissing,
    log_catch_up,
    log_publish,
    tree_head_sign,
)

pytestmark = pytest.mark.django_db


def _expected_leaves() -> list[bytes]:
    return [
        leaf_hash(
            ledger_leaf(tx_id=leaf.ref_id, tx_hash=leaf.hash)
            if leaf.kind == "ledger"
            else hand_leaf(hand_id=leaf.ref_id, seq=leaf.seq, head=leaf.hash)
        )
        for leaf in LogLeaf.objects.order_by("index")
    ]


def test_every_ledger_transaction_is_queued_in_its_booking_and_appended_in_order(
    make_user,
) -> None:
    # given two players (each booked a welcome grant) and an adjustment
    alice, _ = make_user()
    bob, _ = make_user()
    balance_adjust(user=alice, amount=5, reason="a gift", key="gift")
    booked = list(LedgerTransaction.objects.order_by("id").values_list("id", "hash"))
    assert list(PendingLeaf.objects.values_list("ref_id", "hash")) == booked
    # when the log catches up
    assert log_catch_up() == len(booked)
    # then each is a leaf, in booking order, and the queue is empty
    assert not PendingLeaf.objects.exists()
    leaves = list(LogLeaf.objects.order_by("index").values_list("index", "kind", "ref_id", "hash"))
    assert leaves == [(i, "ledger", tx, h) for i, (tx, h) in enumerate(booked)]
    assert [bytes.fromhex(h) for h in LogLeaf.objects.values_list("leaf_hash", flat=True)] == [
        leaf_hash(ledger_leaf(tx_id=tx, tx_hash=h)) for tx, h in booked
    ]
    assert log_catch_up() == 0  # safe to run twice


def test_the_stored_nodes_are_the_rfc_9162_tree_after_batches(make_user) -> None:
    for _ in range(7):
        make_user()
    assert log_catch_up(batch=3) == 7  # 3 + 3 + 1, each batch extending the stored tree
    for _ in range(6):
        make_user()
    log_catch_up(batch=4)
    hashes = _expected_leaves()
    assert len(hashes) == 13
    tree = leaves_subtrees(hashes)
    nodes = {(n.level, n.index): n.hash for n in LogNode.objects.all()}
    assert nodes == {
        (level, index): tree(level, index).hex()
        for level in range(4)
        for index in range(13 >> level)
    }
    head = tree_head_sign()
    assert head.size == 13 and head.root == root(13, tree).hex()


def test_a_hand_s_head_is_logged_when_its_settlement_is_recorded(players, win_hand) -> None:
    play_to_end(players, win_hand)
    log_catch_up()
    assert not LogLeaf.objects.filter(kind="hand").exists()  # ended, not yet settled
    tx = hand_settle(hand_id=win_hand["hand"])
    log_catch_up()
    from games.models import Hand, HandEvent

    hand = Hand.objects.get(pk=win_hand["hand"])
    last = HandEvent.objects.of_hand(hand).order_by("-seq").first()
    assert last.type == "settled"
    leaves = list(LogLeaf.objects.order_by("-index")[:2])
    # the settlement's transaction, then the hand's head (the settled record comes after it)
    assert (leaves[1].kind, leaves[1].ref_id) == ("ledger", tx.pk)
    assert (leaves[0].kind, leaves[0].ref_id, leaves[0].seq, leaves[0].hash) == (
        "hand",
        hand.pk,
        last.seq,
        last.hash,
    )
    # no move of the hand was queued
    assert LogLeaf.objects.filter(kind="hand").count() == 1


def test_heads_are_signed_by_the_configured_key_and_only_when_the_log_grew(
    make_user, settings
) -> None:
    make_user()
    first = log_publish()
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(first.key.public_key))
    public.verify(
        base64.b64decode(first.signature),
        tree_head_message(
            size=first.size, root=bytes.fromhex(first.root), timestamp_ms=first.timestamp
        ),
    )  # raises if it does not verify
    assert log_publish() == first  # nothing new: the same head
    later = timezone.now() + dt.timedelta(hours=2)
    refreshed = tree_head_sign(now=later)  # an hour on, signed again though the log did not grow
    assert refreshed != first and refreshed.size == first.size
    make_user()
    grown = log_publish()
    assert grown.size == first.size + 1 and grown.timestamp > refreshed.timestamp
    settings.CHAN_LOG_SIGNING_KEY = ""
    make_user()
    with pytest.raises(LogKeyMissing):
        log_publish()
    assert TreeHead.objects.count() == 3


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE transparency_logleaf SET hash = repeat('0', 64)",
        "DELETE FROM transparency_logleaf",
        "UPDATE transparency_lognode SET hash = repeat('0', 64)",
        "DELETE FROM transparency_treehead",
        "UPDATE transparency_logkey SET public_key = ''",
    ],
)
def test_the_database_keeps_the_log_append_only(make_user, statement: str) -> None:
    make_user()
    log_publish()
    with (
        pytest.raises(IntegrityError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)


def test_the_log_refuses_truncate_outside_a_test_database_setting(make_user) -> None:
    make_user()
    log_publish()
    with (
        pytest.raises(IntegrityError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("SET LOCAL chan.allow_log_truncate = 'off'")
        cursor.execute("TRUNCATE transparency_logleaf CASCADE")


def test_a_wallet_s_booking_queues_one_row_and_takes_no_lock_of_the_log(make_user) -> None:
    user, _ = make_user()
    PendingLeaf.objects.all().delete()
    with transaction.atomic():
        balance_adjust(user=user, amount=3, reason="x", key="x")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = %s"
                " AND pid = pg_backend_pid()",  # (another test's session may publish meanwhile)
                [0x4C4F475F41505044 & 0xFFFFFFFF],
            )
            assert cursor.fetchone()[0] == 0
    assert PendingLeaf.objects.count() == 1
    assert wallet_for(user).balance > 0


# --------------------------------------------------------------------------- the record key


def test_a_forged_transaction_never_enters_the_log_and_holds_up_nothing(
    make_user, caplog, django_capture_on_commit_callbacks
) -> None:
    # Given a booking, chan_app's forged transactions (no MAC, a made-up one), and a booking,
    alice, _ = make_user()
    before = LedgerTransaction.objects.order_by("-id").first()
    legs = [(issuance_account(user=alice).pk, -1_000_000), (wallet_for(alice).pk, 1_000_000)]
    bare = ledger_forge(key="forged-1", legs=legs, chain=before.chain, user=alice.pk)
    made_up = ledger_forge(
        key="forged-2", legs=legs, chain=before.chain, user=alice.pk, mac=("ef" * 32, "test")
    )
    after = balance_adjust(user=alice, amount=5, reason="a gift", key="gift")
    refused = LOG_LEAVES_REFUSED.labels(kind="ledger")._value.get()
    # when the log catches up,
    with django_capture_on_commit_callbacks(execute=True):
        appended = log_catch_up()
    # the queue is emptied, every booking is a leaf and neither forgery is,
    assert not PendingLeaf.objects.exists()
    logged = set(LogLeaf.objects.values_list("ref_id", flat=True))
    assert {before.pk, after.pk} <= logged and not {bare, made_up} & logged
    assert appended == len(logged) == LedgerTransaction.objects.count() - 2
    # each left out is logged as an error and counted.
    assert LOG_LEAVES_REFUSED.labels(kind="ledger")._value.get() == refused + 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert f"transparency log: transaction {bare} left out: it carries no MAC" in errors
    assert (
        f"transparency log: transaction {made_up} left out: its MAC is not the record key's MAC "
        "of its hash" in errors
    )


def test_a_forged_hand_head_never_enters_the_log(players, win_hand) -> None:
    # Given a settled hand, then a voided record chan_app appended to its log,
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    from games.models import Hand

    hand = Hand.objects.get(pk=win_hand["hand"])
    seq = hand_event_forge(
        hand=hand,
        type="voided",
        actor_seat=None,
        system=True,
        payload={"type": "voided", "reason": "forged", "transaction": None},
        effects=[],
    )
    # the log holds the settled head and not the forged one.
    log_catch_up()
    heads = list(LogLeaf.objects.filter(kind="hand").values_list("ref_id", "seq"))
    assert heads == [(hand.pk, seq - 1)]
