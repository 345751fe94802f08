"""The kinds of a player's feed (``GET /me/feed``): one registry entry each.

Adding a kind is an entry here and a call of ``games.services.feed.feed_append`` where the
fact happens (a reminder from the limits, an invitation, a tournament call …): the feed's
storage, paging, long poll and streams need nothing else. ``feed_append`` refuses a kind that
is not registered, and docs/api.md lists these entries (a test compares them).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FeedKind:
    name: str
    about: str  # one sentence for the API guide
    fields: tuple[str, ...]  # the keys of the entry's ``data``


FEED_KINDS: dict[str, FeedKind] = {
    k.name: k
    for k in (
        FeedKind(
            "hand_dealt",
            "A hand was dealt to me: its id, my seat, the dealer.",
            ("seat", "dealer", "seq"),
        ),
        FeedKind(
            "your_turn",
            "It is my turn in a hand: the hand's seq to send as `expected_seq`, the phase, "
            "the deadline (UTC; null without one).",
            ("seat", "seq", "phase", "deadline"),
        ),
        FeedKind(
            "claim_window",
            "Out of my turn, the card on offer is one I may claim (`chiu` and/or `u`) until "
            "the next move.",
            ("seat", "seq", "card", "moves"),
        ),
        FeedKind(
            "hand_ended",
            "A hand of mine ended: the winner's seat (null for a draw).",
            ("seat", "seq", "winner"),
        ),
        FeedKind(
            "hand_settled",
            "A hand of mine was settled in the Quan ledger: my seat's line of the settlement.",
            ("seat", "seq", "quan"),
        ),
        FeedKind("hand_voided", "Staff voided a hand of mine (its settlement reversed).", ("seq",)),
        FeedKind(
            "seats_changed",
            "A seat changed at one of my tables: who (`user_id`, `username`), which seat, and "
            "`change` = joined, left or ready; when the server stood the player up between "
            "hands, `reason` says why (`limit`: its own limits, `limit` naming which; `stake`: "
            "it cannot cover 15 × stake; `idle`: not ready in time), else null.",
            ("change", "seat", "user_id", "username", "ready", "reason", "limit"),
        ),
        FeedKind(
            "reality_check",
            "My own reminder (`reminder_minutes`, GET /me/limits) came due: how long this "
            "session has lasted and what it has won or lost.",
            ("minutes_played", "net", "reminder_minutes", "next_at"),
        ),
        FeedKind(
            "challenge_received",
            "A player challenged me (`POST /challenges/{challenge_id}/accept` or `/decline` "
            "before `expires_at`): who, the stake and the room.",
            ("challenge_id", "user_id", "username", "stake", "room", "expires_at"),
        ),
        FeedKind(
            "challenge_answered",
            "The player I challenged answered: `answer` = accepted (the private table "
            "`table_id` is open, both of us seated) or declined.",
            (
                "challenge_id",
                "user_id",
                "username",
                "stake",
                "room",
                "expires_at",
                "answer",
                "table_id",
            ),
        ),
        FeedKind(
            "challenge_expired",
            "A challenge of mine expired unanswered at `expires_at` (`direction` sent: the "
            "player I challenged did not answer; received: I did not); `user_id` and "
            "`username` name the other player.",
            ("challenge_id", "user_id", "username", "stake", "room", "expires_at", "direction"),
        ),
        FeedKind(
            "challenge_cancelled",
            "The player who challenged me withdrew the challenge before I answered it.",
            ("challenge_id", "user_id", "username", "stake", "room", "expires_at"),
        ),
        FeedKind(
            "season_prize",
            "A season I played closed and I won a prize on one of its boards: the season "
            "(`2026-W49` or `2026-12`), the board (`quan`, `xp`, `rating:<family>`), the room "
            "(null: every room), my final rank and score, the Quan paid into my wallet.",
            ("season", "board", "room", "rank", "score", "amount"),
        ),
        FeedKind(
            "rating_changed",
            "A rated hand of mine moved my rating in its ruleset family (`voided`: staff voided "
            "the hand and this is its reversal): the new rating, the change, whether it is "
            "still provisional.",
            ("family", "rating", "rating_change", "provisional", "voided"),
        ),
        FeedKind(
            "tournament_started",
            "An arena I entered has started (my entry fee is in its pool): its id, name and "
            "end (UTC). I am seated as soon as I am free.",
            ("tournament_id", "name", "ends_at"),
        ),
        FeedKind(
            "tournament_seated",
            "An arena seated me at a table (`table_id`, its hand dealt at once).",
            ("tournament_id", "table_id"),
        ),
        FeedKind(
            "tournament_finished",
            "An arena I entered ended (`status` finished: my final `rank`, `score` and "
            "`prize`) or was cancelled (`status` cancelled: my fee released or refunded).",
            ("tournament_id", "name", "status", "rank", "score", "prize"),
        ),
        FeedKind(
            "tournament_hand_voided",
            "Staff voided a hand an arena had scored for me: the `points` it gave me are taken "
            "off, `score` is my arena score now; after the arena's payout (`payout_stands`) "
            "nothing is taken off: the standings and prizes stand, the void is noted.",
            ("tournament_id", "name", "points", "score", "payout_stands"),
        ),
        FeedKind(
            "bonus_available",
            "Today's daily bonus can be claimed (`POST /me/bonus`): its amount and local day.",
            ("amount", "day"),
        ),
    )
}
