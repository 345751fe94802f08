"""The transparency log's rows (docs/audit.md). The leaves, the tree's nodes, the signing keys
and the signed heads are append-only: the database refuses UPDATE, DELETE and TRUNCATE
(transparency 0002). The queue of leaves to append is filled by database triggers in the
transaction of what a leaf logs (a ledger transaction, a hand's settlement or void record) and
emptied by the one appender (``transparency.services.log_catch_up``)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class LeafKind(models.TextChoices):
    LEDGER = "ledger", "Ledger transaction"
    HAND = "hand", "Hand's head"


class PendingLeaf(models.Model):
    """What the log is still to record: queued by a trigger (transparency 0002) as the ledger
    transaction or the hand's record commits, removed as it becomes a leaf."""

    kind = models.CharField(max_length=8, choices=LeafKind.choices)
    ref_id = models.BigIntegerField(help_text="The ledger transaction's id, or the hand's.")
    seq = models.IntegerField(null=True, help_text="The hand's event (null for the ledger).")
    hash = models.CharField(max_length=64, help_text="Its chain hash (hex).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"queued {self.kind} {self.ref_id}"


class LogLeaf(models.Model):
    """One leaf of the log, at its ``index`` (0, 1, 2 … in the order appended)."""

    index = models.BigIntegerField(primary_key=True)
    kind = models.CharField(max_length=8, choices=LeafKind.choices)
    ref_id = models.BigIntegerField()
    seq = models.IntegerField(null=True)
    hash = models.CharField(max_length=64)
    leaf_hash = models.CharField(
        max_length=64, unique=True, help_text="SHA-256 of 0x00 and the leaf's data (hex)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "ref_id", "seq"],
                nulls_distinct=False,
                name="transparency_leaf_once",
            ),
            models.CheckConstraint(condition=Q(index__gte=0), name="transparency_leaf_index"),
            models.CheckConstraint(
                condition=Q(kind="ledger", seq__isnull=True) | Q(kind="hand", seq__isnull=False),
                name="transparency_leaf_kind_seq",
            ),
        ]

    def __str__(self) -> str:
        return f"leaf {self.index} ({self.kind} {self.ref_id})"


class LogNode(models.Model):
    """The hash of a perfect subtree: the ``2**level`` leaves from ``index * 2**level`` (a leaf's
    hash at level 0). Written once, when its last leaf is appended: a root or a proof reads
    O(log² n) of them (games.rules.merkle)."""

    level = models.PositiveSmallIntegerField()
    index = models.BigIntegerField()
    hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["level", "index"]
        constraints = [
            models.UniqueConstraint(fields=["level", "index"], name="transparency_node_once"),
            models.CheckConstraint(condition=Q(level__lte=62), name="transparency_node_level"),
        ]

    def __str__(self) -> str:
        return f"node {self.level}/{self.index}"


class LogKey(models.Model):
    """A public key the log's heads are signed with (Ed25519; the private key stays in the
    signer's environment, ``CHAN_LOG_SIGNING_KEY``)."""

    key_id = models.CharField(max_length=64, primary_key=True)
    algorithm = models.CharField(max_length=16, default="ed25519")
    public_key = models.CharField(max_length=64, help_text="The raw public key (base64).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"{self.algorithm} key {self.key_id[:12]}…"


class TreeHead(models.Model):
    """A signed tree head: the log's size and root at ``timestamp`` (ms since the epoch), with
    its Ed25519 signature over RFC 6962's TreeHeadSignature (games.rules.log_entries)."""

    size = models.BigIntegerField()
    root = models.CharField(max_length=64)
    timestamp = models.BigIntegerField()
    key = models.ForeignKey(LogKey, on_delete=models.PROTECT, related_name="heads")
    signature = models.CharField(max_length=100, help_text="The signature (base64).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=Q(size__gte=0), name="transparency_head_size"),
        ]

    def __str__(self) -> str:
        return f"tree head {self.size} {self.root[:12]}…"
