"""Reading a player's feed (``GET /me/feed``): pages after a cursor, its head and its ETag."""

from __future__ import annotations

from typing import Any

from django.db.models import Max, Min

from games.models import FeedEntry

FEED_PAGE_MAX = 100


def feed_head(*, user_id: int) -> int:
    """The seq of the player's last entry (0 before the first)."""
    return FeedEntry.objects.filter(user_id=user_id).aggregate(head=Max("seq"))["head"] or 0


def feed_etag(user_id: int, head: int, after: int, limit: int, start: int = 0) -> str:
    """Strong: a page is fixed by its cursor, its size, the feed's head (entries never change)
    and its first entry's seq (``start``, 0 for none: the retention sweep removes old entries,
    which moves the first entry after an old cursor)."""
    return f'"feed-{user_id}-{head}-{after}-{limit}-{start}"'


def feed_page_etag(user_id: int, page: dict[str, Any], after: int, limit: int) -> str:
    """The ETag of a page of :func:`feed_page`."""
    start = page["entries"][0]["seq"] if page["entries"] else 0
    return feed_etag(user_id, page["head"], after, limit, start)


def _entry(row: FeedEntry) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "kind": row.kind,
        "table_id": row.table_id,
        "hand_id": row.hand_id,
        "data": row.data,
        "created_at": row.created_at.isoformat().replace("+00:00", "Z"),
    }


def feed_page(*, user_id: int, after: int = 0, limit: int = FEED_PAGE_MAX) -> dict[str, Any]:
    """The entries after ``after`` in seq order, at most ``limit``; ``next_after`` is the cursor
    of the next page (``after`` itself when the page is empty), ``head`` the feed's last seq
    when it was read (never below the page's last entry); ``truncated``: entries after
    ``after`` were removed as too old (``CHAN_FEED_RETENTION_DAYS``), so this page does not
    follow on from the reader's cursor."""
    limit = max(1, min(limit, FEED_PAGE_MAX))
    ends = FeedEntry.objects.filter(user_id=user_id).aggregate(head=Max("seq"), oldest=Min("seq"))
    head, oldest = ends["head"] or 0, ends["oldest"]
    rows = list(
        FeedEntry.objects.filter(user_id=user_id, seq__gt=after).order_by("seq")[: limit + 1]
    )
    has_more = len(rows) > limit
    rows = rows[:limit]
    return {
        "entries": [_entry(r) for r in rows],
        "head": max([head, *(r.seq for r in rows)]),
        "next_after": rows[-1].seq if rows else after,
        "has_more": has_more,
        "truncated": oldest is not None and oldest > after + 1,
    }
