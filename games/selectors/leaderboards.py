"""Reading the leaderboards (``games_boardscore``): a page of ranks by score (ties by
the older account, the lower user id), from the top or around a player, keyset-paged.

Top N is one range of the index (board, period, room, score desc, user id); a page after a
cursor another (the cursor carries the rank it continues from, so no page counts). Around a
player, its rank is read off the board's histogram (``games_boardbucket``): the counts of the
buckets above its score at each level (at most 255 buckets × 8 shards a level) plus the rows of
its own score before it — exact, and independent of the rank; then the ranges above and below,
all in one statement with my row. Every page is one plain-SQL statement (no ORM compile on the
hot path); ``leaderboard_version`` is what the API keys its kept pages by."""

from __future__ import annotations

import re
import time
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connections
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.db_router import may_lag, read_alias
from core.errors import InvalidInput, NotFound
from games.models import BUCKET_BITS, BUCKET_LEVELS, Room, Season
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


# Every page is one raw statement (no ORM compile on the hot path), on the alias the router
# picks for a read that may lag. ``{b}`` is a row alias's board range.
_ON_BOARD = "{b}.board = %(board)s AND {b}.period = %(period)s AND {b}.room = %(room)s"
_USERS = """
SELECT p.side, p.rank, p.score, p.hands, p.user_id, u.username, u.display_name
FROM ({page}) AS p JOIN accounts_user u ON u.id = p.user_id"""

_TOP_SQL = _USERS.format(
    page="SELECT 1 AS side, NULL::bigint AS rank, s.score, s.hands, s.user_id"
    " FROM games_boardscore s WHERE " + _ON_BOARD.format(b="s") + " ORDER BY s.score DESC,"
    " s.user_id LIMIT %(n)s"
)

# The rows ranked just below / above (score %(score)s, user %(user)s): the ties after / before
# me and the lower / higher scores, two index ranges (an OR of the two would scan from the
# top), merged and cut in the statement before the users are joined.
_BELOW = (
    "SELECT 1 AS side, NULL::bigint AS rank, b.* FROM ("
    "(SELECT s.score, s.hands, s.user_id FROM games_boardscore s WHERE {on} AND s.score = {score}"
    " AND s.user_id > {user} ORDER BY s.user_id LIMIT {n})"
    " UNION ALL (SELECT s.score, s.hands, s.user_id FROM games_boardscore s WHERE {on}"
    " AND s.score < {score} ORDER BY s.score DESC, s.user_id LIMIT {n})"
    ") AS b ORDER BY b.score DESC, b.user_id LIMIT {n}"
)
_ABOVE = (
    "SELECT -1 AS side, NULL::bigint AS rank, a.* FROM ("
    "(SELECT s.score, s.hands, s.user_id FROM games_boardscore s WHERE {on} AND s.score = {score}"
    " AND s.user_id < {user} ORDER BY s.user_id DESC LIMIT {n})"
    " UNION ALL (SELECT s.score, s.hands, s.user_id FROM games_boardscore s WHERE {on}"
    " AND s.score > {score} ORDER BY s.score, s.user_id DESC LIMIT {n})"
    ") AS a ORDER BY a.score, a.user_id DESC LIMIT {n}"
)
_AFTER_SQL = _USERS.format(
    page=_BELOW.format(on=_ON_BOARD.format(b="s"), score="%(score)s", user="%(user)s", n="%(n)s")
)


def _rank_expr(score: str, user: str) -> str:
    """The rank of the row (``score``, ``user``: SQL expressions) from the board's histogram:
    one plain index range per level (an OR of them is planned as one scan of the board's whole
    histogram, filtered), summed with the ties before it."""
    parts = []
    for k in range(BUCKET_LEVELS):
        top = ""
        if k < BUCKET_LEVELS - 1:
            top = f" AND h.bucket < ((({score}) >> {BUCKET_BITS * (k + 1)}) + 1) << {BUCKET_BITS}"
        parts.append(
            "(SELECT coalesce(sum(h.n), 0) FROM games_boardbucket h WHERE "
            + _ON_BOARD.format(b="h")
            + f" AND h.level = {k} AND h.bucket > (({score}) >> {BUCKET_BITS * k}){top})"
        )
    ties = (
        "(SELECT count(*) FROM games_boardscore t WHERE "
        + _ON_BOARD.format(b="t")
        + f" AND t.score = {score} AND t.user_id < {user})"
    )
    return "1 + " + " + ".join([*parts, ties])


_RANK_SQL = "SELECT " + _rank_expr("%(score)s::bigint", "%(user)s::bigint")

# Around me in one statement: my row with its rank, the rows above and below it.
_AROUND_SQL = f"""
WITH me AS MATERIALIZED (
    SELECT m.score, m.hands, m.user_id FROM games_boardscore m
    WHERE {_ON_BOARD.format(b="m")} AND m.user_id = %(user)s
)
SELECT p.side, p.rank, p.score, p.hands, p.user_id, u.username, u.display_name
FROM (
    SELECT 0 AS side, {_rank_expr("me.score", "me.user_id")} AS rank, me.* FROM me
    UNION ALL
    SELECT x.* FROM me, LATERAL ({
    _ABOVE.format(on=_ON_BOARD.format(b="s"), score="me.score", user="me.user_id", n="%(up)s")
}) AS x
    UNION ALL
    SELECT y.* FROM me, LATERAL ({
    _BELOW.format(on=_ON_BOARD.format(b="s"), score="me.score", user="me.user_id", n="%(down)s")
}) AS y
) AS p JOIN accounts_user u ON u.id = p.user_id"""


def _query(sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _order(row: tuple[Any, ...]) -> tuple[int, int]:
    return (-row[2], row[4])


def _rows(found: list[tuple[Any, ...]]) -> list[_Row]:
    return [_Row(*r[2:]) for r in sorted(found, key=_order)]


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


def board_rank(*, board: str, period: str, room: str, score: int, user_id: int) -> int:
    """The rank of the row (score, user id) on a board: one statement over the histogram."""
    params = {"board": board, "period": period, "room": room, "score": score, "user": user_id}
    return int(_query(_RANK_SQL, params)[0][0])


_VERSION_SQL = (
    "SELECT coalesce(sum(v.version), 0) FROM games_boardversion v WHERE " + _ON_BOARD.format(b="v")
)


# Each process remembers a board's version for CHAN_BOARD_VERSION_SECONDS (the lag a board read
# may have anyway, as a replica's): (board key, period, room) → (until, leaderboard_version).
_versions: dict[tuple[str, str, str], tuple[float, tuple[Any, ...] | None]] = {}
_VERSIONS_MAX = 4096


def board_versions_forget() -> None:
    """Forget the versions this process remembers (the settlement and the void call it, so that
    the process that wrote a board reads it anew at once; others within the seconds)."""
    _versions.clear()


@may_lag
def leaderboard_version(
    *,
    board: str,
    family: str | None = None,
    room: str | None = None,
    season: str | None = None,
) -> tuple[Any, ...] | None:
    """What every page of a board is a function of, besides its query: the board, its
    version (``games_boardversion``, bumped by each statement that writes the board's rows)
    and its season's close — so a page rendered under this value may be served again while it
    holds (version 0: never written, or loaded with the triggers off). None for a room's board
    never written (``leaderboard`` then says whether the room exists). Raises as
    ``leaderboard`` does for an unknown board or family. One index range of at most 8 rows,
    remembered by the process for ``CHAN_BOARD_VERSION_SECONDS``; may lag as the board's rows
    do."""
    key = board_key(board, family)
    if season is not None and not SEASON_RE.match(season):
        return None
    period, scope = season or ALL, room or ""
    seconds = settings.CHAN_BOARD_VERSION_SECONDS
    if seconds > 0:
        hit = _versions.get((key, period, scope))
        if hit is not None and hit[0] > time.monotonic():
            return hit[1]
    closed_at = season_closed_at(season) if season is not None else None
    version = _query(_VERSION_SQL, {"board": key, "period": period, "room": scope})[0][0]
    value = None if not version and scope else (key, period, scope, int(version), closed_at)
    # (a room's board never written: leaderboard() says whether the room exists)
    if seconds > 0:
        if len(_versions) >= _VERSIONS_MAX:
            _versions.clear()
        _versions[(key, period, scope)] = (time.monotonic() + seconds, value)
    return value


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
    on = {"board": key, "period": season or ALL, "room": room or ""}
    rated = board == "rating"
    me = None
    if around is not None:
        up = (limit - 1) // 2
        found = _query(_AROUND_SQL, {**on, "user": around.pk, "up": up, "down": limit})
        mine = [r for r in found if r[0] == 0]
        if not mine:
            first_rank = 1
            page: list[_Row] = []
        else:
            my_rank = int(mine[0][1])
            me = _entry(_Row(*mine[0][2:]), my_rank, rated)
            above = _rows([r for r in found if r[0] < 0])  # at most ``up``, all above me
            below = _rows([r for r in found if r[0] > 0])[: limit - len(above)]
            page = [*above, _Row(*mine[0][2:]), *below]
            first_rank = my_rank - len(above)
    elif cursor is not None:
        m = CURSOR_RE.match(cursor)
        if m is None:
            raise InvalidInput(_("Not a cursor of this board."), code="board_cursor_invalid")
        score, user_id, rank = int(m[1]), int(m[2]), int(m[3])
        page = _rows(_query(_AFTER_SQL, {**on, "score": score, "user": user_id, "n": limit + 1}))
        first_rank = rank + 1
    else:
        page = _rows(_query(_TOP_SQL, {**on, "n": limit + 1}))
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
