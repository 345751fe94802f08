"""Settled hands whose record the database owner changed behind the guards (the one way past
them: a session replicating, whose triggers do not fire), for the checkers' tests: a move's
payload rewritten and the hash chain recomputed over it (the chain holds, the replay refuses
the move), a shuffled hand's seed replaced, two events swapped; and one hand left alone."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection

from games.models import Hand, HandEvent
from games.rules.chain import event_hash
from games.services.quan_booking import hand_settle
from tests.db_owner import as_owner
from tests.games.conftest import Player, client_with, start_table
from tests.games.decks import WIN_DECK
from tests.games.test_games_hands_api import play_to_end

# WIN_DECK, dealer 0: seq 6 is seat 3's draw, seqs 2 and 3 seat 1's draw and pass.
PAYLOAD_SEQ, ORDER_SEQ = 6, 2
# What the checkers say of each (after "discrepancy at seq N: ").
PAYLOAD_REASON = "draw by seat 1 is refused: not_your_turn"
SEED_REASON = "seed_hash is not the SHA-256 of the seed's bytes"
ORDER_REASON = "its prev_hash is not the previous event's hash"


@dataclass(frozen=True)
class Tampered:
    payload: Hand  # refused at PAYLOAD_SEQ (its chain recomputed: only the replay can tell)
    seed: Hand  # shuffled, its seed replaced: seq 0
    order: Hand  # seqs ORDER_SEQ and ORDER_SEQ + 1 swapped: the chain breaks at ORDER_SEQ
    sound: Hand  # untouched


def settled_hand(make_user: Callable[..., tuple[Any, str]], deck: list[str] | None) -> Hand:
    """A hand of four new players played to its end with the scripted policy, and booked."""
    players = [Player(*made, client_with(made[1])) for made in (make_user() for _ in range(4))]
    hand = start_table(players, deck)
    play_to_end(players, hand)
    hand_settle(hand_id=hand["hand"])
    return Hand.objects.get(pk=hand["hand"])


def as_replicating_owner(statement: str, params: list[Any]) -> None:
    """``statement`` run as the owner with every trigger off (the owner's replication role), in
    the test's transaction: the application's role may not even write some columns (who sits
    in a dealt hand, balances)."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        as_owner("SET LOCAL session_replication_role = replica")
        as_owner(statement, params)
        as_owner("SET LOCAL session_replication_role = DEFAULT")


def rechain(hand: Hand, since: int) -> None:
    """Recompute the hash chain from event ``since`` on, as an owner covering its tracks."""
    fields = ("seq", "type", "actor_seat", "system", "bot", "payload", "effects", "prev_hash")
    events = list(HandEvent.objects.of_hand(hand).order_by("seq").values(*fields, "hash"))
    prev = events[since - 1]["hash"]
    for event in events[since:]:
        digest = event_hash(
            hand=hand.pk,
            **{f: event[f] for f in fields if f != "prev_hash"},
            prev=prev,
        )
        as_replicating_owner(
            "UPDATE games_handevent SET prev_hash = %s, hash = %s WHERE hand_id = %s AND seq = %s",
            [prev, digest, hand.pk, event["seq"]],
        )
        prev = digest


def tampered_hands(make_user: Callable[..., tuple[Any, str]]) -> Tampered:
    payload, seed, order, sound = (
        settled_hand(make_user, WIN_DECK),
        settled_hand(make_user, None),
        settled_hand(make_user, WIN_DECK),
        settled_hand(make_user, WIN_DECK),
    )
    # seat 3's draw rewritten as seat 1's (out of turn; payload and column agree, as the
    # database requires), the chain recomputed after it
    as_replicating_owner(
        "UPDATE games_handevent SET payload = %s::jsonb, actor_seat = 1"
        " WHERE hand_id = %s AND seq = %s",
        [json.dumps({"v": 2, "type": "draw", "seat": 1}), payload.pk, PAYLOAD_SEQ],
    )
    rechain(payload, PAYLOAD_SEQ)
    # another server seed: the deck it gives is not the one dealt
    as_replicating_owner("UPDATE games_hand SET seed = %s WHERE id = %s", ["ab" * 32, seed.pk])
    # seat 1's draw and pass in the other order
    for was, becomes in ((ORDER_SEQ, 10_000), (ORDER_SEQ + 1, ORDER_SEQ), (10_000, ORDER_SEQ + 1)):
        as_replicating_owner(
            "UPDATE games_handevent SET seq = %s WHERE hand_id = %s AND seq = %s",
            [becomes, order.pk, was],
        )
    return Tampered(
        payload=payload,
        seed=Hand.objects.get(pk=seed.pk),
        order=order,
        sound=sound,
    )


def expected_reports(hands: Tampered) -> dict[int, str]:
    """What a checker says first of each changed hand (a refused move: up to its code)."""
    return {
        hands.payload.pk: f"discrepancy at seq {PAYLOAD_SEQ}: {PAYLOAD_REASON}",
        hands.seed.pk: f"discrepancy at seq 0: {SEED_REASON}",
        hands.order.pk: f"discrepancy at seq {ORDER_SEQ}: {ORDER_REASON}",
    }


def first_reports(text: str, hands: Tampered) -> dict[int, str]:
    """The first line a checker's output says of each hand (``hand ID: …``, after any prefix
    of its own), the reason of a refused move cut after its code (the message is the rules'
    wording); the hand left alone must not be among them."""
    found: dict[int, str] = {}
    for line in text.splitlines():
        named = re.search(r"\bhand (\d+): (.*)$", line)
        if named is not None:
            found.setdefault(int(named[1]), named[2].split(" (", 1)[0])
    assert hands.sound.pk not in found
    return found
