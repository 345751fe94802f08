"""``GET /api/v1/leaderboards/{board}``: thin over ``games.selectors.leaderboards``."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import OrderedDict
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import scopes
from chan_api.schema import COMMON_HEADERS
from chan_api.strict_input import QueryIntegerField
from core.ascii_digits import ascii_int
from games.api.live_views import _conditional_headers, _matches, if_none_match
from games.api.schema import ETAG, IF_NONE_MATCH, problem_responses
from games.selectors.leaderboards import (
    BOARD_PAGE_DEFAULT,
    BOARD_PAGE_MAX,
    CURSOR_RE,
    SEASON_RE,
    leaderboard,
    leaderboard_version,
)


class LeaderboardQuerySerializer(serializers.Serializer):
    family = serializers.CharField(
        required=False,
        max_length=32,
        help_text="The rating board's ruleset family (a preset; `chan_van_van` by default). "
        "Ignored by `quan` and `xp`.",
    )
    room = serializers.CharField(
        required=False, max_length=32, help_text="A room's slug: its hands only."
    )
    season = serializers.RegexField(
        SEASON_RE,
        required=False,
        help_text="A week `2026-W49` or a month `2026-12` (Asia/Ho_Chi_Minh); all time without.",
    )
    around = serializers.ChoiceField(
        choices=["me"], required=False, help_text="`me`: the page centred on my own row."
    )
    cursor = serializers.RegexField(
        CURSOR_RE, required=False, help_text="The `next` of the previous page (opaque)."
    )
    limit = QueryIntegerField(min_value=1, max_value=BOARD_PAGE_MAX, default=BOARD_PAGE_DEFAULT)


class LeaderboardEntrySerializer(serializers.Serializer):
    rank = serializers.IntegerField(help_text="1 for the top; ties go to the older account.")
    username = serializers.CharField()
    display_name = serializers.CharField()
    score = serializers.IntegerField(
        help_text="`rating`: the rating after its latest hand; `quan`: net Quan won; `xp`: XP."
    )
    hands = serializers.IntegerField(help_text="Hands counted on this board.")
    provisional = serializers.BooleanField(help_text="A rating of fewer than 20 hands.")


class LeaderboardPageSerializer(serializers.Serializer):
    board = serializers.ChoiceField(choices=["rating", "quan", "xp"])
    family = serializers.CharField(allow_null=True, help_text="The rating board's family.")
    room = serializers.CharField(allow_null=True)
    season = serializers.CharField(allow_null=True)
    closed = serializers.BooleanField(
        help_text="The season is closed: these are its final standings (its prizes paid)."
    )
    closed_at = serializers.DateTimeField(
        allow_null=True, help_text="When the season closed (UTC); null while it runs."
    )
    results = LeaderboardEntrySerializer(many=True)
    me = LeaderboardEntrySerializer(
        allow_null=True, help_text="With `?around=me`: my own row (null if I am not ranked)."
    )
    next = serializers.CharField(
        allow_null=True, source="next_cursor", help_text="Pass as `cursor` for the next page."
    )


_PLAIN = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
_QUERY_KEYS = ("family", "room", "season", "around", "cursor", "limit")


def _query_fast(params: Any) -> dict[str, Any] | None:
    """The query as ``LeaderboardQuerySerializer`` reads it, without building the serializer
    (its fields are deep-copied on every request: a fifth of the page's time), when every known
    parameter is given once in its plain form; None for anything else, which the serializer
    then reads (and refuses with its usual errors)."""
    q: dict[str, Any] = {}
    for name in _QUERY_KEYS:
        values = params.getlist(name)
        if not values:
            continue
        if len(values) > 1:
            return None
        value = values[0]
        if name == "limit":
            value = ascii_int(value)
            if value is None or not 1 <= value <= BOARD_PAGE_MAX:
                return None
        elif name == "season":
            if not SEASON_RE.match(value) or not value.isascii() or "\n" in value:
                return None
        elif name == "cursor":
            if not CURSOR_RE.match(value) or not value.isascii() or "\n" in value:
                return None
        elif name == "around":
            if value != "me":
                return None
        elif not _PLAIN.match(value) or "\n" in value:
            return None
        q[name] = value
    q.setdefault("limit", BOARD_PAGE_DEFAULT)
    return q


class PageCache:
    """Rendered board pages (body bytes and ETag) in this process, least recently used first
    out, keyed by what the page is a function of: ``leaderboard_version`` (the board, its
    version, its season's close) and the query (cursor, limit, and who asks for around-me).
    A transaction that writes a board bumps its version, so a read after its commit renders
    anew; an entry also expires after ``CHAN_BOARD_PAGE_SECONDS`` (what the version does not
    cover: a player's new display name)."""

    def __init__(self) -> None:
        self._pages: OrderedDict[tuple[Any, ...], tuple[float, bytes, str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> tuple[bytes, str] | None:
        with self._lock:
            hit = self._pages.get(key)
            if hit is None:
                return None
            if hit[0] < time.monotonic():
                del self._pages[key]
                return None
            self._pages.move_to_end(key)
            return hit[1], hit[2]

    def put(self, key: tuple[Any, ...], content: bytes, etag: str) -> None:
        size = settings.CHAN_BOARD_PAGES
        with self._lock:
            self._pages[key] = (time.monotonic() + settings.CHAN_BOARD_PAGE_SECONDS, content, etag)
            self._pages.move_to_end(key)
            while len(self._pages) > size:
                self._pages.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._pages.clear()


board_pages = PageCache()


def _render(board: str, around: Any, q: dict[str, Any]) -> tuple[bytes, str]:
    page = leaderboard(board=board, around=around, **q)
    # The page is plain JSON already (the serializer is its schema): built as is and encoded
    # once, as DRF's JSONRenderer would (compact, UTF-8), the content ETag a digest of those
    # bytes.
    body = {**page._asdict(), "next": page.next_cursor}
    del body["next_cursor"]
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    return content, f'"board-{hashlib.sha256(content).hexdigest()[:24]}"'


BOARD = OpenApiParameter(
    "board",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    enum=["rating", "quan", "xp"],
    description="`rating`, `quan` or `xp`.",
)


class LeaderboardApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="leaderboards_retrieve",
        tags=["leaderboards"],
        summary="A leaderboard: top N or around me, overall, by room or season (ETag)",
        description=(
            "Ranks by `score` (ties: the older account first), `limit` a page (default 50, at "
            "most 100); `next` is the cursor of the next page. `?room=` counts that room's "
            "hands only, `?season=` one week or month in Asia/Ho_Chi_Minh (a closed season's "
            "board stays readable). A content `ETag`: `If-None-Match` → 304."
        ),
        parameters=[BOARD, LeaderboardQuerySerializer, IF_NONE_MATCH, ETAG, *COMMON_HEADERS],
        responses={
            200: LeaderboardPageSerializer,
            304: OpenApiResponse(description="Not modified (the ETag still matches)."),
            **problem_responses(
                400,
                404,
                descriptions={
                    400: "`invalid` (a query parameter), `board_family_unknown`.",
                    404: "`board_not_found` (not rating, quan or xp), `room_not_found`.",
                },
            ),
        },
    )
    def get(self, request: Request, board: str) -> HttpResponse:
        q = _query_fast(request.query_params)
        if q is None:
            query = LeaderboardQuerySerializer(data=request.query_params)
            query.is_valid(raise_exception=True)
            q = dict(query.validated_data)
        around = request.user if q.pop("around", None) == "me" else None
        key = None
        if settings.CHAN_BOARD_PAGES > 0:
            version = leaderboard_version(
                board=board, family=q.get("family"), room=q.get("room"), season=q.get("season")
            )
            if version is not None:
                key = (version, q.get("cursor"), q["limit"], around.pk if around else None)
        hit = board_pages.get(key) if key is not None else None
        if hit is None:
            content, etag = _render(board, around, q)
            if key is not None:
                board_pages.put(key, content, etag)
        else:
            content, etag = hit
        if _matches(if_none_match(request), etag):
            return _conditional_headers(Response(status=status.HTTP_304_NOT_MODIFIED), etag)
        return _conditional_headers(HttpResponse(content, content_type="application/json"), etag)
