"""Appending to a hand's log: every ``HandEvent`` row is inserted here, with its hash chained
to the previous event's (``games.rules.chain``; docs/audit.md).

On PostgreSQL a trigger (migration games 0019) refuses an insert whose ``prev_hash`` is not the
previous event's ``hash`` (the hand's ``seed_hash`` for the deal) or whose hash is not 64
lowercase hex digits, so a path that bypasses this function cannot extend the chain without
computing it. The caller holds the hand row lock (appends to one hand are serialised by it).
"""

from __future__ import annotations

from typing import Any

from games.models import Hand, HandEvent
from games.rules.chain import event_hash


def _hash_at(hand: Hand, seq: int) -> str:
    """The hash of the hand's event ``seq`` ("" when there is none: the trigger refuses it)."""
    digest = (
        HandEvent.objects.filter(hand_id=hand.pk, seq=seq).values_list("hash", flat=True).first()
    )
    return digest or ""


def hand_event_append(
    *,
    hand: Hand,
    type: str,
    actor_seat: int | None = None,
    system: bool = False,
    bot: bool = False,
    payload: dict[str, Any],
    effects: list[Any],
) -> HandEvent:
    """Append the next event (seq ``hand.seq + 1``, or 0 for the deal) to the locked hand's log,
    hashed over its canonical form and its predecessor's hash. The caller saves ``hand.seq``."""
    seq = 0 if type == "deal" else hand.seq + 1
    prev = hand.seed_hash if seq == 0 else _hash_at(hand, hand.seq)
    digest = event_hash(
        hand=hand.pk,
        seq=seq,
        type=type,
        actor_seat=actor_seat,
        system=system,
        bot=bot,
        payload=payload,
        effects=effects,
        prev=prev,
    )
    return HandEvent.objects.create(
        hand=hand,
        seq=seq,
        type=type,
        actor_seat=actor_seat,
        system=system,
        bot=bot,
        payload=payload,
        effects=effects,
        prev_hash=prev,
        hash=digest,
    )
