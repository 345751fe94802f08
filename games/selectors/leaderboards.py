"""Reading the leaderboards (issue 25, ``games_boardscore``): a page of ranks by score (ties by
the older account, the lower user id), from the top or around a player, keyset-paged.

Top N is one range of the index (board, period, room, score desc, user id); a page after a
cursor another (the cursor carries the rank it continues from, so no page counts). Around a
player costs one index-only count of the rows above it, plus two ranges."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from django.utils.translation import gettext_lazy as _

from core.db_router import may_lag
from core.errors import InvalidInput, NotFound
from games.models import BoardScore, Room
from games.rating_terms import ALL, PROVISIONAL_HANDS, RATING_PREFIX
from games.rules.ruleset import DEFAULT_PRESET, PRESETS

BOARDS = ("rating", "quan", "xp")
BOARD_PAGE_DEFAULT, BOARD_PAGE_MAX = 50, 100
SEASON_RE = re.compile(r"^(?:\d{4}-W(?:0[1-9]|[1-4]\d|5[0-3])|\d{4}-(?:0[1-9]|1[0-2]))$")
CURSOR_RE = re.compile(r"^(-?\d{1,19})\.(\d{1,19})\.(\d{1,9})$")


class BoardPage(NamedTuple):
    board: str
    family: str | None
    room: str | None
    season: str | None
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


def _after(rows: Any, score: int, user_id: int, n: int) -> list[_Row]:
    """The ``n`` rows ranked just below (score, user id), best first: my ties after me, then
    the lower scores — two index ranges (an OR of the two would scan from the top)."""
    out = _fetch(rows.filter(score=score, user_id__gt=user_id)[:n]) if n > 0 else []
    if len(out) < n:
        out += _fetch(rows.filter(score__lt=score)[: n - len(out)])
    return out


def _before(rows: Any, score: int, user_id: int, n: int) -> list[_Row]:
    """The ``n`` rows ranked just above (score, user id), best first (backward index ranges)."""
    near = (
        _fetch(rows.filter(score=score, user_id__lt=user_id).order_by("-user_id")[:n])
        if n > 0
        else []
    )
    if len(near) < n:
        near += _fetch(rows.filter(score__gt=score).order_by("score", "-user_id")[: n - len(near)])
    return near[::-1]


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
            # Two plain index ranges (an OR of the two would not be one): index-only counts.
            my_rank = (
                rows.filter(score__gt=mine.score).count()
                + rows.filter(score=mine.score, user_id__lt=mine.user_id).count()
                + 1
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
        results,
        me,
        next_cursor,
    )
