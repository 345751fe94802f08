"""The record key (``CHAN_RECORD_KEY``, docs/audit.md): read from the settings, never stored in
the database. Every ledger transaction and hand event carries a MAC under it
(``games.rules.record_mac``), so a row written with database credentials alone is reported by the
checkers and kept out of the transparency log.

``make run`` (DEBUG) keeps a key made at its first start in the var directory; the test suite
makes one per run and puts it in the environment, so the processes a test starts share it.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

from games.rules.record_mac import RecordKeys, record_key_text, record_keys_from

_parsed: tuple[str, RecordKeys] | None = None


def record_keys() -> RecordKeys:
    """The keys of ``settings.CHAN_RECORD_KEY`` (parsed once per value)."""
    global _parsed
    text = settings.CHAN_RECORD_KEY
    if _parsed is None or _parsed[0] != text:
        _parsed = (text, record_keys_from(text))
    return _parsed[1]


def new_record_key(key_id: str) -> str:
    """A new key, as ``CHAN_RECORD_KEY`` lists it."""
    return record_key_text(key_id, os.urandom(32))


def development_record_key(path: Path | None) -> str:
    """A key for development (kept in ``path``, made at the first start) or for a test run
    (``None``: made once and put in the environment, for the processes the tests start)."""
    if path is None:
        text = os.environ.get("CHAN_RECORD_KEY") or new_record_key("test")
        os.environ["CHAN_RECORD_KEY"] = text
        return text
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(new_record_key("dev"))
    return path.read_text().strip()
