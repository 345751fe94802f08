"""The log's signing key: read from ``CHAN_LOG_SIGNING_KEY`` (base64 of the 32 raw bytes of an
Ed25519 private key, or its PEM), never stored in the database, which holds the public key only
(``LogKey``): what the database's owner can write, it cannot sign."""

from __future__ import annotations

import base64
import binascii
import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from games.rules.log_entries import key_id


class SigningKeyError(ValueError):
    pass


def private_key_from(text: str) -> Ed25519PrivateKey:
    """The Ed25519 key ``text`` holds (PEM, or base64 of the 32 raw bytes)."""
    text = text.strip()
    if text.startswith("-----BEGIN"):
        key = serialization.load_pem_private_key(text.encode(), password=None)
        if not isinstance(key, Ed25519PrivateKey):
            raise SigningKeyError("CHAN_LOG_SIGNING_KEY is not an Ed25519 key")
        return key
    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise SigningKeyError("CHAN_LOG_SIGNING_KEY is neither PEM nor base64") from exc
    if len(raw) != 32:
        raise SigningKeyError("CHAN_LOG_SIGNING_KEY's base64 is not 32 bytes")
    return Ed25519PrivateKey.from_private_bytes(raw)


def public_bytes(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(
        encoding=serialization.Encoding.Raw, format=serialization.PublicFormat.Raw
    )


def key_id_of(key: Ed25519PrivateKey) -> str:
    return key_id(public_bytes(key))


def new_key_text() -> str:
    """A new key, as ``CHAN_LOG_SIGNING_KEY`` takes it (base64)."""
    return base64.b64encode(os.urandom(32)).decode()


def development_key(path: Path | None) -> str:
    """A key for development (kept in ``path``, made at the first start) or for a test run
    (``None``: made for this process)."""
    if path is None:
        return new_key_text()
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(new_key_text())
    return path.read_text().strip()
