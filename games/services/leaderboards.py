"""Leaderboards: each settled, rated hand adds to its players' rows of
``games_boardscore`` in the settlement's transaction — ``quan`` (the seat's net Quan),
``xp`` (its XP) and ``rating:<family>`` (its rating after the hand) — for the periods the hand
ended in (``all``, its week ``2026-W49`` and its month ``2026-12`` in Asia/Ho_Chi_Minh) and for
both every room (``""``) and the hand's room: 3 boards × 3 periods × 2 scopes, 18 rows a player,
one ``INSERT … ON CONFLICT DO UPDATE`` statement a hand.

A void takes the hand's Quan back off the ``quan`` rows (its hand count too) and sets the
rating rows to the reversed rating; XP stays (as the XP itself does, ``games.services.void``).

A closed season's rows are its final standings: neither a late settlement nor a void of one of
its hands writes them (``games.services.seasons.periods_writable``). The boards' histogram
(``games_boardbucket``) follows every write of these rows by the table's triggers (games 0027).

Lock order: after the rating rows, the boards' lock (``BOARDS_LOCK_SPACE``: one for every
board, held to the commit), then the board rows in (board, period, room, user) order — the
order of the statement's rows (its JSON array's, kept by ``ORDER BY`` their ordinality), which is
the order PostgreSQL takes their row locks in. The boards' lock is there for the histogram: its
bucket rows are shared by every player, and the triggers move a row's count out of its old
buckets (an ``UPDATE`` in no order) and into its new ones, so two settlements could take two
buckets in opposite orders. They did, under the load bench: "deadlock detected" on the upsert,
a ready's inline settlement answered 503 (docs/decisions/leaderboards-at-scale.md). A board write
is the settlement's last few statements, so waiting for the one before costs little.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from django.db import connection, transaction
from django.utils import timezone

from games.models import Hand
from games.rating_terms import RATING_PREFIX, periods_of
from games.selectors.leaderboards import board_versions_forget
from games.services.ratings import Rated, hand_family
from games.services.seasons import periods_writable

BOARDS_LOCK_SPACE = 22_002  # pg_advisory_xact_lock(space, 0): every board's rows and buckets

_UPSERT = """
INSERT INTO games_boardscore (board, period, room, user_id, score, hands, updated_at)
SELECT r->>0, r->>1, r->>2, (r->>3)::bigint, (r->>4)::bigint, (r->>5)::int, %(now)s
FROM jsonb_array_elements(%(rows)s::jsonb) WITH ORDINALITY AS v(r, i)
ORDER BY v.i
ON CONFLICT (board, period, room, user_id) DO UPDATE SET
    score = CASE WHEN left(EXCLUDED.board, 7) = 'rating:' THEN EXCLUDED.score
                 ELSE games_boardscore.score + EXCLUDED.score END,
    hands = greatest(games_boardscore.hands + EXCLUDED.hands, 0),
    updated_at = EXCLUDED.updated_at
"""


def _upsert(rows: Iterable[tuple[str, str, str, int, int, int]]) -> None:
    """One statement of constant text whatever the number of rows, the rows one JSON parameter
    in lock order: a ``VALUES`` list of 72 rows was 504 parameters, which the client quoted
    into a text too long for psycopg's query cache (split anew at each settlement) and the
    server parsed anew (docs/decisions/leaderboards-at-scale.md)."""
    rows = sorted(set(rows), key=lambda r: (r[0], r[1], r[2], r[3]))
    if not rows:
        return
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_advisory_xact_lock(%s, 0)", [BOARDS_LOCK_SPACE])
        cursor.execute(_UPSERT, {"now": timezone.now(), "rows": json.dumps(rows)})
    # This process reads its boards anew at once (the triggers bumped their versions); once
    # more on commit, in case a read in between remembered the version before it.
    board_versions_forget()
    transaction.on_commit(board_versions_forget)


def _rows(
    hand: Hand,
    *,
    quan: dict[int, int],
    xp: dict[int, int],
    rated: list[Rated],
    hand_step: int,
) -> list[tuple[str, str, str, int, int, int]]:
    ended = hand.ended_at or timezone.now()
    scopes = ("", hand.room_id)
    family = RATING_PREFIX + hand_family(hand) if rated else ""
    rows = []
    for period in periods_writable(periods_of(ended)):
        for room in scopes:
            for user_id, net in quan.items():
                rows.append(("quan", period, room, user_id, net, hand_step))
            for user_id, gained in xp.items():
                rows.append(("xp", period, room, user_id, gained, hand_step))
            for r in rated:
                rows.append((family, period, room, r.user_id, r.after, hand_step))
    return rows


def _seat_nets(hand: Hand) -> dict[int, int]:
    lines = {s.get("seat"): s.get("net", 0) for s in (hand.quan or {}).get("seats") or []}
    return {s.user_id: int(lines.get(s.position) or 0) for s in hand.seat_list()}


def boards_record_settled(*, hand: Hand, xp: list[int], rated: list[Rated]) -> None:
    """Add a settled hand to its players' board rows (``xp`` in play order, from
    ``hand_award_xp``; ``rated`` from ``hand_rate``). Practice hands are never passed here."""
    if hand.table.practice:
        return
    xp_by_user = {s.user_id: d for s, d in zip(hand.seat_list(), xp, strict=True)}
    _upsert(_rows(hand, quan=_seat_nets(hand), xp=xp_by_user, rated=rated, hand_step=1))


def boards_record_voided(*, hand: Hand, unrated: list[Rated]) -> None:
    """Take a voided hand's Quan back off the boards and set its players' rating rows to the
    reversed ratings (XP stays)."""
    if hand.table.practice:
        return
    back = {u: -net for u, net in _seat_nets(hand).items()}
    rows = [r for r in _rows(hand, quan=back, xp={}, rated=unrated, hand_step=-1)]
    _upsert(rows)
