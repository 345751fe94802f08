"""The hash chain of the Quan ledger (docs/audit.md): what a transaction's hash is taken over.
Pure, so that the offline verifier (``games.rules.verify``) recomputes a hand's settlement
transaction's hash from its export; ``accounts.ledger_hash`` re-exports it for the ledger.

A transaction's ``hash`` is the SHA-256 (lowercase hex) of the UTF-8 bytes of ``json.dumps`` of
``{"prev", "kind", "key", "memo", "user", "hand", "table", "entries"}`` with ``sort_keys=True``,
``separators=(",", ":")`` and ``ensure_ascii=False``: ``prev`` is the hash of the transaction
before it (by id; ``GENESIS``, 64 zeros, for the first), ``user``/``hand``/``table`` the ids it
names (null for none) and ``entries`` its ``[account id, amount]`` pairs in ascending account
id. Neither the ids nor ``created_at`` are hashed: the chain's order is the ids' order, and an
entry added to a transaction afterwards changes its recomputed hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

GENESIS = "0" * 64


def ledger_tx_hash(
    *,
    prev: str,
    kind: str,
    key: str,
    memo: str,
    user: int | None,
    hand: int | None,
    table: int | None,
    entries: Iterable[tuple[int, int]],
) -> str:
    """The transaction's hash over these fields (see the module docstring)."""
    body = {
        "prev": prev,
        "kind": kind,
        "key": key,
        "memo": memo,
        "user": user,
        "hand": hand,
        "table": table,
        "entries": [[account, amount] for account, amount in sorted(entries)],
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
