"""The records' MACs (docs/audit.md): a key the database never sees vouches for each ledger
transaction and each hand event.

A chain hash needs no secret, so whoever can insert a row can give it a hash that chains; a MAC
needs the record key (``CHAN_RECORD_KEY``, held by the application's processes and by the
auditor, never stored in the database). A row's ``mac`` is the HMAC-SHA256 (lowercase hex) under
the key named by its ``mac_key`` of the ASCII bytes ``chan-record-v1:<domain>:<hash>``, where
``domain`` is ``ledger`` or ``hand`` and ``hash`` the row's chain hash, which already binds its
content and its place (through the previous hash). One HMAC per row.

Keys are written ``<key id>:<base64 of 32 bytes>``, several separated by commas: the first signs,
every one listed verifies (a retired key stays listed while rows under it are checked).
Rows written before keys existed carry no MAC (``""``): a checker allows them only before the
first keyed row of their chain (:class:`MacChain`).

Pure (hmac, hashlib, base64): the offline verifier shares it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from dataclasses import dataclass

LEDGER = "ledger"
HAND = "hand"
DOMAINS = (LEDGER, HAND)
MAC_ALGORITHM = "hmac-sha256-v1"
KEY_BYTES = 32
KEY_ID = re.compile(r"[A-Za-z0-9_.-]{1,32}")


class RecordKeyError(ValueError):
    """A ``CHAN_RECORD_KEY`` that cannot be read (the message never contains key material)."""


@dataclass(frozen=True, slots=True)
class RecordKeys:
    """The record keys by id; ``signing`` is the id of the one that signs (the first listed)."""

    signing: str
    keys: dict[str, bytes]


def record_keys_from(text: str) -> RecordKeys:
    """The keys ``text`` lists (``id:base64,id:base64…``; see the module docstring)."""
    keys: dict[str, bytes] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key_id, sep, encoded = item.partition(":")
        key_id = key_id.strip()
        if not sep or not KEY_ID.fullmatch(key_id):
            raise RecordKeyError(
                "CHAN_RECORD_KEY: each key is <key id>:<base64 of 32 bytes>, its id 1-32 of "
                "A-Z a-z 0-9 _ . -"
            )
        try:
            raw = base64.b64decode(encoded.strip(), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise RecordKeyError(f"CHAN_RECORD_KEY: key {key_id} is not base64") from exc
        if len(raw) != KEY_BYTES:
            raise RecordKeyError(f"CHAN_RECORD_KEY: key {key_id} is not {KEY_BYTES} bytes")
        if key_id in keys:
            raise RecordKeyError(f"CHAN_RECORD_KEY: key {key_id} is listed twice")
        keys[key_id] = raw
    if not keys:
        raise RecordKeyError("CHAN_RECORD_KEY names no key")
    return RecordKeys(signing=next(iter(keys)), keys=keys)


def record_key_text(key_id: str, raw: bytes) -> str:
    """One key as ``CHAN_RECORD_KEY`` lists it."""
    return f"{key_id}:{base64.b64encode(raw).decode()}"


def _mac(key: bytes, domain: str, digest: str) -> str:
    if domain not in DOMAINS:
        raise ValueError(f"not a record domain: {domain}")
    message = f"chan-record-v1:{domain}:{digest}".encode("ascii")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def record_mac(keys: RecordKeys, *, domain: str, digest: str) -> tuple[str, str]:
    """``(mac, key id)`` of the row whose chain hash is ``digest``, under the signing key."""
    return _mac(keys.keys[keys.signing], domain, digest), keys.signing


def mac_problem(
    keys: RecordKeys, *, domain: str, digest: str, mac: str, mac_key: str
) -> str | None:
    """Why the row's MAC does not vouch for ``digest`` (None when it does). A row without a MAC
    is a problem here: :class:`MacChain` decides where one is allowed."""
    if not mac:
        return "it carries no MAC"
    key = keys.keys.get(mac_key)
    if key is None:
        return f"its MAC is under key {mac_key!r}, which is not a record key"
    if not hmac.compare_digest(mac, _mac(key, domain, digest)):
        return "its MAC is not the record key's MAC of its hash"
    return None


class MacChain:
    """Checks the rows of one chain in order: a row without a MAC is allowed only before the
    chain's first keyed row (written before keys existed); every other row's MAC must verify."""

    def __init__(self, keys: RecordKeys, *, domain: str) -> None:
        self.keys = keys
        self.domain = domain
        self.keyed = False

    def check(self, *, digest: str, mac: str, mac_key: str) -> str | None:
        """Why this row, the next of the chain, is not vouched for (None when it is)."""
        if not mac and not self.keyed:
            return None
        if not mac:
            return "it carries no MAC, after a row that does"
        self.keyed = True
        return mac_problem(self.keys, domain=self.domain, digest=digest, mac=mac, mac_key=mac_key)
