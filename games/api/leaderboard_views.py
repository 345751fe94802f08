"""``GET /api/v1/leaderboards/{board}`` (issue 25): thin over ``games.selectors.leaderboards``."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import scopes
from chan_api.schema import COMMON_HEADERS
from chan_api.strict_input import QueryIntegerField
from games.api.live_views import _conditional_headers, _matches, content_etag, if_none_match
from games.api.schema import ETAG, IF_NONE_MATCH, problem_responses
from games.selectors.leaderboards import (
    BOARD_PAGE_DEFAULT,
    BOARD_PAGE_MAX,
    CURSOR_RE,
    SEASON_RE,
    leaderboard,
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
    def get(self, request: Request, board: str) -> Response:
        query = LeaderboardQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = dict(query.validated_data)
        around = request.user if q.pop("around", None) == "me" else None
        page = leaderboard(board=board, around=around, **q)
        # The page is plain JSON already (the serializer is its schema): built as is, for speed.
        body = {**page._asdict(), "next": page.next_cursor}
        del body["next_cursor"]
        etag = content_etag("board", body)
        if _matches(if_none_match(request), etag):
            return _conditional_headers(Response(status=status.HTTP_304_NOT_MODIFIED), etag)
        return _conditional_headers(Response(body), etag)
