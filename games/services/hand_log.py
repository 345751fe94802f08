"""Appending to a hand's log: the one place a ``HandEvent`` row is created (the deal, every
move, the settlement's and the void's records), with its hash chained to the previous event's
(``games.rules.chain``; docs/audit.md) and the record key's MAC of that hash
(``games.rules.record_mac``), written by the insert itself: a row inserted around this function
with database credentials alone carries no MAC the checkers accept.

On PostgreSQL a trigger (migration games 0021) refuses an insert whose ``prev_hash`` is not the
previous event's ``hash`` (the hand's ``seed_hash`` for the deal) or whose hash is not 64
lowercase hex digits, so a path that bypasses this function cannot extend the chain without
computing it. The caller holds the hand row's lock (or has just created the hand) and saves the
hand after (its ``seq`` is set here), in the same transaction as whatever the event records.
"""

from __future__ import annotations

from typing import Any

from accounts.record_keys import record_keys
from core.rows import rows_insert
from games.hand_store import hand_last_hash_keep, hand_publish_on_commit, hand_state
from games.models import Hand, HandEvent
from games.rules.chain import event_hash
from games.rules.record_mac import HAND, record_mac
from games.rules.records import is_record
from games.rules.replay import EVENT_VERSION
from games.selectors.hands import hand_head_hash
from games.services.feed import feed_hand_changed


def _prev_hash(hand: Hand) -> str:
    """The hash the next event chains to: the hand's head ("" when it has none: the trigger
    refuses it), kept on the instance by the lock or the last append."""
    return hand_head_hash(hand) or ""


def hand_event_append(
    *,
    hand: Hand,
    type: str,
    actor_seat: int | None = None,
    system: bool = False,
    bot: bool = False,
    payload: dict[str, Any],
    effects: list[Any],
    guard: tuple[str, list[Any]] | None = None,
) -> HandEvent:
    """Append the next event to the locked ``hand``'s log: seq 0 for the deal, else one past
    the hand's seq, hashed over its canonical form and its predecessor's hash; set ``hand.seq``
    to it (the caller saves the hand). The deal's and a move's payload carry the schema version ``v``.
    ``guard``: the hand's lock, taken by the event's statement itself (``core.rows.rows_insert``)."""
    if EVENT_VERSION > 1 and not is_record(type):
        # the deal's and the moves' schema version (games.rules.replay; version 1 named none);
        # a record's payload is its own shape (games.rules.records)
        payload = {**payload, "v": EVENT_VERSION}
    seq = 0 if type == "deal" else hand.seq + 1
    prev = hand.seed_hash if seq == 0 else _prev_hash(hand)
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
    # the record key's MAC of the hash (docs/audit.md): what database credentials cannot make
    mac, mac_key = record_mac(record_keys(), domain=HAND, digest=digest)
    event = HandEvent(
        hand=hand,
        hand_created_at=hand.created_at,
        seq=seq,
        type=type,
        actor_seat=actor_seat,
        system=system,
        bot=bot,
        payload=payload,
        effects=effects,
        prev_hash=prev,
        hash=digest,
        mac=mac,
        mac_key=mac_key,
    )
    rows_insert([event], returning_pk=True, guard=guard)  # HandEvent.objects.create, fixed
    hand.seq = seq
    hand_last_hash_keep(hand, seq, digest)
    return event


def hand_record_append(*, hand: Hand, type: str, payload: dict[str, Any]) -> HandEvent:
    """Append a record (``games.rules.records``: the settlement, the void) to the locked, ended
    hand's log: the system's, with no seat and no effects. The hand's state does not change, so
    the state at its old seq is published at the new one once the transaction commits (long
    polls and event feeds wake); the caller saves the hand, ``seq`` included."""
    if not is_record(type):
        raise ValueError(f"not a record type: {type}")
    state = hand_state(hand)  # at the seq before the record: the same state after it
    event = hand_event_append(
        hand=hand, type=type, system=True, payload={"type": type, **payload}, effects=[]
    )
    hand_publish_on_commit(hand, state)
    feed_hand_changed(hand=hand, state=state, record=type)
    return event
