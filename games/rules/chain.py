"""The hash chain of a hand's log (docs/audit.md): pure, so the offline verifier shares it.

Each event's ``hash`` is the SHA-256 (lowercase hex) of its canonical form: the UTF-8 bytes of
``json.dumps`` of the object ``{"hand", "seq", "type", "actor_seat", "system", "bot", "payload",
"effects", "prev"}`` with ``sort_keys=True``, ``separators=(",", ":")`` and
``ensure_ascii=False``, where ``prev`` is the previous event's hash. The deal's (seq 0)
predecessor is the hand's ``seed_hash``: the chain starts at the seed commitment published at
the deal. ``created_at`` is not hashed (a timestamp's text form is not canonical enough).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

CHAIN_ALGORITHM = "sha256-canonical-json-v1"


def canonical_event(
    *,
    hand: int,
    seq: int,
    type: str,
    actor_seat: int | None,
    system: bool,
    bot: bool,
    payload: Any,
    effects: Any,
    prev: str,
) -> bytes:
    """The bytes an event's hash is taken over (see the module docstring)."""
    body = {
        "hand": hand,
        "seq": seq,
        "type": type,
        "actor_seat": actor_seat,
        "system": system,
        "bot": bot,
        "payload": payload,
        "effects": effects,
        "prev": prev,
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def event_hash(**fields: Any) -> str:
    """The SHA-256 (hex) of :func:`canonical_event` of these fields."""
    return hashlib.sha256(canonical_event(**fields)).hexdigest()


def chain_break(
    *, hand: int, seed_hash: str, events: Iterable[Mapping[str, Any]]
) -> tuple[int, str] | None:
    """The first ``(seq, reason)`` where the events (each with ``seq``, ``type``, ``actor_seat``,
    ``system``, ``bot``, ``payload``, ``effects``, ``prev_hash``, ``hash``, in seq order) stop
    being a chain from ``seed_hash``; None when every link holds."""
    prev = seed_hash
    for event in events:
        seq = event["seq"]
        if event["prev_hash"] != prev:
            return seq, "its prev_hash is not the previous event's hash"
        wanted = event_hash(
            hand=hand,
            seq=seq,
            type=event["type"],
            actor_seat=event["actor_seat"],
            system=event["system"],
            bot=event["bot"],
            payload=event["payload"],
            effects=event["effects"],
            prev=prev,
        )
        if event["hash"] != wanted:
            return seq, "its hash is not the SHA-256 of its content"
        prev = wanted
    return None
