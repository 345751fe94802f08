"""Everything that reads the transparency log (docs/audit.md): the signed head, the key, proofs.

A root or a proof reads only the perfect subtrees RFC 9162's recursion names (``LogNode``):
:func:`games.rules.merkle.subtrees_needed` lists them, one query reads them.
"""

from __future__ import annotations

import base64
import re
import textwrap
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from django.db import connection
from django.utils.translation import gettext_lazy as _

from accounts.ledger_selectors import LedgerProblem
from core.errors import InvalidInput, NotFound
from games.rules.log_entries import ED25519_SPKI_PREFIX, hand_leaf_hash, ledger_leaf_hash
from games.rules.merkle import (
    Subtrees,
    consistency_proof,
    inclusion_proof,
    root,
    subtrees_needed,
)
from transparency.models import LogKey, LogLeaf, TreeHead

T = TypeVar("T")
_HEX_HASH = re.compile(r"[0-9a-f]{64}")

_NODES = """
SELECT n.level, n.index, n.hash FROM transparency_lognode n
JOIN unnest(%s::smallint[], %s::bigint[]) AS w(level, index)
  ON n.level = w.level AND n.index = w.index
"""


def nodes_read(
    wanted: Iterable[tuple[int, int]], *, cursor: Any = None
) -> dict[tuple[int, int], bytes]:
    """The hashes of the perfect subtrees ``wanted`` (``(level, index)``), read at once."""
    wanted = list(dict.fromkeys(wanted))
    if not wanted:
        return {}
    params = [[lv for lv, _ in wanted], [i for _, i in wanted]]
    if cursor is None:
        with connection.cursor() as own:
            own.execute(_NODES, params)
            rows = own.fetchall()
    else:
        cursor.execute(_NODES, params)
        rows = cursor.fetchall()
    return {(level, index): bytes.fromhex(digest) for level, index, digest in rows}


def _built(build: Callable[[Subtrees], T]) -> T:
    """``build`` run over the stored tree: its subtrees named first, then read in one query."""
    have = nodes_read(subtrees_needed(build))
    return build(lambda level, index: have[(level, index)])


def log_size_locked(cursor: Any) -> int:
    """The log's number of leaves (the caller holds the append lock, or reads a snapshot)."""
    cursor.execute("SELECT index FROM transparency_logleaf ORDER BY index DESC LIMIT 1")
    row = cursor.fetchone()
    return 0 if row is None else row[0] + 1


def log_root(size: int) -> bytes:
    return _built(lambda subtree: root(size, subtree))


def tree_head_latest() -> TreeHead:
    """The latest signed tree head (``404 log_empty`` before the first)."""
    head = TreeHead.objects.select_related("key").order_by("-id").first()
    if head is None:
        raise NotFound(_("The transparency log has no signed head yet."), code="log_empty")
    return head


def log_key_data() -> dict[str, Any]:
    """The key of the latest signed head, raw (base64) and as PEM."""
    key: LogKey = tree_head_latest().key
    raw = base64.b64decode(key.public_key)
    der = ED25519_SPKI_PREFIX + raw
    body = "\n".join(textwrap.wrap(base64.b64encode(der).decode(), 64))
    return {
        "key_id": key.key_id,
        "algorithm": key.algorithm,
        "public_key": key.public_key,
        "public_key_pem": f"-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n",
    }


def _size_checked(size: int, name: str) -> None:
    with connection.cursor() as cursor:
        have = log_size_locked(cursor)
    if size > have:
        raise InvalidInput(
            _("The log has %(size)s leaves, fewer than %(asked)s."),
            code="size_out_of_range",
            errors={name: [_("Larger than the log.")]},
            size=have,
            asked=size,
        )


def log_consistency(*, first: int, second: int) -> dict[str, Any]:
    """The consistency proof from the tree of ``first`` leaves to that of ``second``."""
    if first > second:
        raise InvalidInput(
            _("first must not be larger than second."),
            code="invalid",
            errors={"first": [_("Larger than second.")]},
        )
    _size_checked(second, "second")
    proof = _built(lambda subtree: consistency_proof(first, second, subtree))
    return {"first": first, "second": second, "proof": [p.hex() for p in proof]}


def log_inclusion(*, leaf: str, size: int) -> dict[str, Any]:
    """The inclusion proof of the leaf whose hash is ``leaf`` (hex) in the tree of ``size``."""
    if not _HEX_HASH.fullmatch(leaf):
        raise InvalidInput(
            _("leaf is a leaf hash: 64 lowercase hexadecimal digits."),
            code="invalid",
            errors={"leaf": [_("Not a SHA-256 in lowercase hex.")]},
        )
    _size_checked(size, "size")
    index = LogLeaf.objects.filter(leaf_hash=leaf).values_list("index", flat=True).first()
    if index is None or index >= size:
        raise NotFound(
            _("The log's first %(size)s leaves have no leaf %(leaf)s."),
            code="leaf_not_found",
            size=size,
            leaf=leaf,
        )
    proof = _built(lambda subtree: inclusion_proof(index, size, subtree))
    return {"leaf": leaf, "index": index, "size": size, "proof": [p.hex() for p in proof]}


def tree_head_data(head: TreeHead) -> dict[str, Any]:
    return {
        "size": head.size,
        "root": head.root,
        "timestamp": head.timestamp,
        "key_id": head.key_id,
        "signature": head.signature,
    }


def _proof_under(head: TreeHead, leaf: bytes) -> dict[str, Any] | None:
    found = LogLeaf.objects.filter(leaf_hash=leaf.hex()).values_list("index", flat=True).first()
    if found is None or found >= head.size:
        return None
    index: int = found
    proof = _built(lambda subtree: inclusion_proof(index, head.size, subtree))
    return {"leaf_hash": leaf.hex(), "index": index, "proof": [p.hex() for p in proof]}


def hand_log_proofs(
    *, hand_id: int, seq: int, head_hash: str | None, ledger: Sequence[tuple[int, str]]
) -> dict[str, Any] | None:
    """For a hand's export: the latest signed head, and under it the inclusion proof of the
    hand's head (its log at ``seq``, ``head_hash``) and of its ledger transactions (``(id,
    hash)``); None while the log has not yet recorded the hand's head under a signed head."""
    head = TreeHead.objects.order_by("-id").first()
    if head is None or head_hash is None:
        return None
    hand = _proof_under(head, hand_leaf_hash(hand_id=hand_id, seq=seq, head=head_hash))
    if hand is None:
        return None
    return {
        "head": tree_head_data(head),
        "hand": hand,
        "ledger": [
            _proof_under(head, ledger_leaf_hash(tx_id=tx_id, tx_hash=digest))
            for tx_id, digest in ledger
        ],
    }


def ledger_log_proofs(
    ledger: Sequence[tuple[int, str]],
) -> tuple[dict[str, Any] | None, list[dict[str, Any] | None]]:
    """For a player's statement: the latest signed head, and under it the inclusion proof of
    each ledger transaction (``(id, hash)``), None for one the log has not yet recorded under
    that head (the head is None before the first is signed)."""
    head = TreeHead.objects.order_by("-id").first()
    if head is None:
        return None, [None] * len(ledger)
    return tree_head_data(head), [
        _proof_under(head, ledger_leaf_hash(tx_id=tx_id, tx_hash=digest))
        for tx_id, digest in ledger
    ]


_LEDGER_OFF_LOG = """
SELECT l.ref_id, l.index FROM transparency_logleaf l
JOIN accounts_ledgertransaction t ON t.id = l.ref_id
WHERE l.kind = 'ledger' AND t.hash <> l.hash ORDER BY l.index LIMIT 100
"""


def check_ledger_matches_log() -> list[LedgerProblem]:
    """Every logged ledger transaction still has the hash the log recorded (``ledger_check``):
    a transaction rewritten behind the triggers, its chain recomputed, differs from its leaf."""
    with connection.cursor() as cursor:
        cursor.execute(_LEDGER_OFF_LOG)
        rows = cursor.fetchall()
    return [
        LedgerProblem(
            "transparency_log",
            f"transaction {tx_id}: its hash is not the one the log recorded (leaf {index})",
        )
        for tx_id, index in rows
    ]
