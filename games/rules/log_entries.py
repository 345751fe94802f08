"""What the transparency log (docs/audit.md) records and what its heads sign: pure, so that the
server and the monitor (``python -m games.rules.verify monitor``) encode them alike.

A leaf's data is the UTF-8 of ``json.dumps(…, sort_keys=True, separators=(",", ":"))`` of

* ``{"type": "ledger", "id", "hash"}`` for a ledger transaction: its id and its chain hash
  (``games.rules.ledger_chain``, over its kind, key, memo, owners and entries);
* ``{"type": "hand", "hand", "seq", "hash"}`` for a hand's head: the hash of its log's last
  event (``games.rules.chain``) when its settlement is recorded, and again when it is voided.

A signed tree head signs RFC 6962's ``TreeHeadSignature`` (§3.5): version ``0x00``, signature
type ``tree_hash`` (``0x01``), the timestamp (milliseconds since the Unix epoch) and the size as
big-endian uint64, then the 32-byte root. The log's key is Ed25519; its id is the SHA-256 of the
key's DER ``SubjectPublicKeyInfo`` (as RFC 6962's log id).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from games.rules.merkle import HASH_SIZE, leaf_hash

SIGNATURE_ALGORITHM = "ed25519"
# The DER SubjectPublicKeyInfo of an Ed25519 key (RFC 8410) is this prefix and the 32 key bytes.
ED25519_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")


def _canonical(body: dict[str, Any]) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def ledger_leaf(*, tx_id: int, tx_hash: str) -> bytes:
    """The leaf data of ledger transaction ``tx_id`` whose chain hash is ``tx_hash``."""
    return _canonical({"type": "ledger", "id": tx_id, "hash": tx_hash})


def hand_leaf(*, hand_id: int, seq: int, head: str) -> bytes:
    """The leaf data of hand ``hand_id``'s log at ``seq``, whose last event's hash is ``head``."""
    return _canonical({"type": "hand", "hand": hand_id, "seq": seq, "hash": head})


def ledger_leaf_hash(*, tx_id: int, tx_hash: str) -> bytes:
    return leaf_hash(ledger_leaf(tx_id=tx_id, tx_hash=tx_hash))


def hand_leaf_hash(*, hand_id: int, seq: int, head: str) -> bytes:
    return leaf_hash(hand_leaf(hand_id=hand_id, seq=seq, head=head))


def tree_head_message(*, size: int, root: bytes, timestamp_ms: int) -> bytes:
    """The bytes a tree head's signature is over (RFC 6962 §3.5 ``TreeHeadSignature``)."""
    if len(root) != HASH_SIZE:
        raise ValueError("a root is 32 bytes")
    return b"\x00\x01" + timestamp_ms.to_bytes(8, "big") + size.to_bytes(8, "big") + root


def key_id(public_key: bytes) -> str:
    """The id (hex) of the Ed25519 public key ``public_key`` (its 32 raw bytes)."""
    return hashlib.sha256(ED25519_SPKI_PREFIX + public_key).hexdigest()
