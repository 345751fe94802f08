"""The shapes of the API's answers that the client reads (docs/api.md); other keys pass through.

TypedDicts, not classes: the client returns the decoded JSON as it came, typed for the reader
and the type checker, so a field the server adds later is never lost.
"""

from __future__ import annotations

from typing import Any, TypedDict


class Seat(TypedDict, total=False):
    number: int
    user_id: int | None
    username: str | None
    ready: bool


class Table(TypedDict, total=False):
    id: int
    name: str
    room: str
    stake: int
    max_seats: int
    mode: str
    status: str  # "open", "playing", "closed"
    current_hand_id: int | None
    seats: list[Seat]


class ReadyResult(TypedDict):
    table: Table
    hand_id: int | None


class HandView(TypedDict, total=False):
    hand_id: int
    table_id: int
    number: int
    seq: int
    status: str  # "playing" or "ended"
    phase: str
    turn_seat: int | None
    my_seat: int | None
    mode: str
    hand: list[str]
    mats: list[list[list[str]]]
    legal_moves: list[dict[str, Any]]
    analysis: dict[str, Any] | None
    outcome: dict[str, Any] | None
    settlement: dict[str, Any] | None
    deadline: str | None


class MoveResult(TypedDict):
    seq: int
    state: HandView


class Me(TypedDict, total=False):
    id: int
    username: str
    display_name: str
    balance: int
    xp: int
    level: int
    vip: int


class Page(TypedDict):
    """A cursor-paged list: ``next`` is the ``cursor`` of the next (older) page, or None."""

    results: list[dict[str, Any]]
    next: str | None


class HandEventPage(TypedDict):
    hand_id: int
    seq: int
    events: list[dict[str, Any]]
    next_after_seq: int | None
    has_more: bool


class FeedEntry(TypedDict):
    seq: int
    kind: str  # hand_dealt, your_turn, claim_window, hand_ended, hand_settled, …
    table_id: int | None
    hand_id: int | None
    data: dict[str, Any]
    created_at: str


class FeedPage(TypedDict):
    entries: list[FeedEntry]
    head: int
    next_after: int
    has_more: bool
    truncated: bool  # entries after the cursor were removed as too old (the feed's retention)
