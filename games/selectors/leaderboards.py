"""Reading the leaderboards (issue 25, ``games_boardscore``): a page of ranks by score (ties by
the older account, the lower user id), from the top or around a player, keyset-paged.

Top N is one range of the index (board, period, room, score desc, user id); a page after a
cursor another (the cursor carries the rank it continues from, so no page counts). Around a
player, its rank is read off the board's histogram (``games_boardbucket``): the counts of the
buckets above its score at each level (at most 255 buckets × 8 shards a level) plus the rows of
its own score before it — exact, and independent of the rank; then two ranges."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from django.db import connection
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.db_router import may_lag
from core.errors import InvalidInput, NotFound
from games.models import BUCKET_BITS, BUCKET_LEVELS, BoardScore, Room, Season
from games.rating_terms import ALL, PROVISIONAL_HANDS, RATING_PREFIX, periods_of
from games.rules.ruleset import DEFAULT_PRESET, PRESETS
from games.selectors.hands import utc_iso

BOARDS = ("rating", "quan", "xp")
BOARD_PAGE_DEFAULT, BOARD_PAGE_MAX = 50, 100
SEASON_RE = re.compile(r"^(?:\d{4}-W(?:0[1-9]|[1-4]\d|5[0-3])|\d{4}-(?:0[1-9]|1[0-2]))$")
CURSOR_RE = re.compile(r"^(-?\d{1,19})\.(\d{1,19})\.(\d{1,9})$")


class BoardPage(NamedTuple):
    board: str
    family: str | None
    room: str | None
    season: str | None
    closed: bool
    closed_at: str | None
    results: list[dict[str, Any]]
    me: dict[str, Any] | None
    next_cursor: str | None


def board_key(board: str, family: str | None) -> str:
    if board not in BOARDS:
        raise NotFound(
            _("No leaderboard %(board)s: rating, quan or xp."), code="board_not_found", board=board
        )
    if board != "rating":
        return board
    family = family or DEFAULT_PRESET
    if family not in PRESETS:
        raise InvalidInput(
            _("No ruleset family %(family)s."), code="board_family_unknown", family=family
        )
    return RATING_PREFIX + family


_FIELDS = ("score", "hands", "user_id", "user__username", "user__display_name")


class _Row(NamedTuple):
    score: int
    hands: int
    user_id: int
    username: str
    display_name: str


def _entry(row: _Row, rank: int, rated: bool) -> dict[str, Any]:
    return {
        "rank": rank,
        "username": row.username,
        "display_name": row.display_name,
        "score": row.score,
        "hands": row.hands,
        "provisional": rated and row.hands < PROVISIONAL_HANDS,
    }


def _fetch(qs: Any) -> list[_Row]:
    return [_Row(*r) for r in qs.values_list(*_FIELDS)]


def _order(row: _Row) -> tuple[int, int]:
    return (-row.score, row.user_id)


def _after(rows: Any, score: int, user_id: int, n: int) -> list[_Row]:
    """The ``n`` rows ranked just below (score, user id), best first: my ties after me and the
    lower scores, two index ranges in one statement (an OR of the two would scan from the
    top)."""
    if n <= 0:
        return []
    ties = rows.filter(score=score, user_id__gt=user_id)[:n]
    lower = rows.filter(score__lt=score)[:n]
    found = [
        _Row(*r) for r in ties.values_list(*_FIELDS).union(lower.values_list(*_FIELDS), all=True)
    ]
    return sorted(found, key=_order)[:n]


def _before(rows: Any, score: int, user_id: int, n: int) -> list[_Row]:
    """The ``n`` rows ranked just above (score, user id), best first (two backward index
    ranges in one statement)."""
    if n <= 0:
        return []
    ties = rows.filter(score=score, user_id__lt=user_id).order_by("-user_id")[:n]
    higher = rows.filter(score__gt=score).order_by("score", "-user_id")[:n]
    found = [
        _Row(*r) for r in ties.values_list(*_FIELDS).union(higher.values_list(*_FIELDS), all=True)
    ]
    return sorted(found, key=_order)[-n:]


def season_closed_at(period: str) -> Any:
    """When the season closed (None while it runs). The current week and month cannot be
    closed, so reading their boards asks nothing."""
    if period in periods_of(timezone.now()):
        return None
    return (
        Season.objects.filter(period=period, closed_at__isnull=False)
        .values_list("closed_at", flat=True)
        .first()
    )


def _rank_sql() -> str:
    # One plain index range per level (an OR of them is planned as one scan of the board's
    # whole histogram, filtered), summed with the ties before me.
    level = (
        "(SELECT coalesce(sum(n), 0) FROM games_boardbucket WHERE board = %s AND period = %s"
        " AND room = %s AND level = {k} AND bucket > %s{top})"
    )
    parts = [
        level.format(k=k, top="" if k == BUCKET_LEVELS - 1 else " AND bucket < %s")
        for k in range(BUCKET_LEVELS)
    ]
    ties = (
        "(SELECT count(*) FROM games_boardscore WHERE board = %s AND period = %s AND room = %s"
        " AND score = %s AND user_id < %s)"
    )
    return "SELECT " + " + ".join([*parts, ties]) + " + 1"


_RANK_SQL = _rank_sql()


def board_rank(*, board: str, period: str, room: str, score: int, user_id: int) -> int:
    """The rank of the row (score, user id) on a board: one statement over the histogram."""
    buckets = [score >> (BUCKET_BITS * k) for k in range(BUCKET_LEVELS)]
    params: list[object] = []
    for k in range(BUCKET_LEVELS):
        params += [board, period, room, buckets[k]]
        if k < BUCKET_LEVELS - 1:
            params.append((buckets[k + 1] + 1) << BUCKET_BITS)
    params += [board, period, room, score, user_id]
    with connection.cursor() as cursor:
        cursor.execute(_RANK_SQL, params)
        return int(cursor.fetchone()[0])


@may_lag
def leaderboard(
    *,
    board: str,
    family: str | None = None,
    room: str | None = None,
    season: str | None = None,
    limit: int = BOARD_PAGE_DEFAULT,
    cursor: str | None = None,
    around: Any = None,
) -> BoardPage:
    """A page of the board: the top ``limit``, the page after ``cursor``, or (``around``, a
    user) the ``limit`` rows centred on that player, whose own row is also ``me``. May lag (a
    fresh replica's)."""
    key = board_key(board, family)
    if room and not Room.objects.filter(slug=room).exists():
        raise NotFound(_("No such room."), code="room_not_found")
    if season is not None and not SEASON_RE.match(season):
        raise InvalidInput(
            _("A season is a week 2026-W49 or a month 2026-12."), code="board_season_invalid"
        )
    limit = max(1, min(limit, BOARD_PAGE_MAX))
    closed_at = season_closed_at(season) if season is not None else None
    rows = BoardScore.objects.filter(board=key, period=season or ALL, room=room or "")
    rows = rows.order_by("-score", "user_id")
    rated = board == "rating"
    me = None
    if around is not None:
        found = _fetch(rows.filter(user_id=around.pk)[:1])
        mine = found[0] if found else None
        if mine is None:
            first_rank = 1
            page: list[_Row] = []
        else:
            my_rank = board_rank(
                board=key,
                period=season or ALL,
                room=room or "",
                score=mine.score,
                user_id=mine.user_id,
            )
            me = _entry(mine, my_rank, rated)
            up = min((limit - 1) // 2, my_rank - 1)
            above = _before(rows, mine.score, mine.user_id, up)
            below = _after(rows, mine.score, mine.user_id, limit - len(above))
            page = [*above, mine, *below]
            first_rank = my_rank - len(above)
    elif cursor is not None:
        m = CURSOR_RE.match(cursor)
        if m is None:
            raise InvalidInput(_("Not a cursor of this board."), code="board_cursor_invalid")
        score, user_id, rank = int(m[1]), int(m[2]), int(m[3])
        page = _after(rows, score, user_id, limit + 1)
        first_rank = rank + 1
    else:
        page = _fetch(rows[: limit + 1])
        first_rank = 1
    more = len(page) > limit
    page = page[:limit]
    results = [_entry(r, first_rank + i, rated) for i, r in enumerate(page)]
    next_cursor = None
    if more and page:
        last = page[-1]
        next_cursor = f"{last.score}.{last.user_id}.{first_rank + len(page) - 1}"
    return BoardPage(
        board,
        key.removeprefix(RATING_PREFIX) if rated else None,
        room or None,
        season,
        closed_at is not None,
        utc_iso(closed_at) if closed_at is not None else None,
        results,
        me,
        next_cursor,
    )
