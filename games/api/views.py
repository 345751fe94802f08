"""Thin views of the games API: parse with an input serializer, call one service or selector,
render with an output serializer. Errors are domain errors, rendered as problem+json by chan_api.problems."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse, HttpResponseRedirect
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import scopes
from accounts.authentication import credential_key
from chan_api.represent import represented
from chan_api.schema import COMMON_HEADERS
from chan_api.strict_input import plain_int_query
from games.api.live_serializers import WaitQuerySerializer
from games.api.move_direct import move_request_hash, move_template_mark
from games.api.schema import (
    BAD_EVALUATE,
    BAD_JOIN,
    BAD_MOVE,
    BAD_QUERY,
    BAD_REPLAY,
    BAD_SCORE,
    BAD_SEAT,
    BAD_TABLE,
    ETAG,
    IDEMPOTENCY_KEY,
    IDEMPOTENT_REPLAYED,
    IF_NONE_MATCH,
    LINK_NEXT,
    LOCATION_CREATED,
    LOCATION_REDIRECT,
    problem_responses,
)
from games.api.serializers import (
    EvaluateInputSerializer,
    EvaluateOutputSerializer,
    EventsQuerySerializer,
    HandEventPageSerializer,
    HandExportSerializer,
    HandQuerySerializer,
    HandReplaySerializer,
    HandViewSerializer,
    HistoryPageSerializer,
    HistoryQuerySerializer,
    MoveCreatedSerializer,
    MoveInputSerializer,
    PlayerProfileSerializer,
    PresetSerializer,
    QuickJoinInputSerializer,
    ReplayQuerySerializer,
    RoomOutputSerializer,
    ScoreInputSerializer,
    ScoreOutputSerializer,
    SeatJoinInputSerializer,
    SeatReadyInputSerializer,
    SeatReadyOutputSerializer,
    TableCreateInputSerializer,
    TableHandSerializer,
    TableListQuerySerializer,
    TableOutputSerializer,
)
from games.export import hand_export_for_user
from games.hand_store import hand_wait_for_seq, long_poll_slot
from games.live.announce import lobby_topic, table_topic
from games.live.long_poll import (
    Pending,
    long_poll_deferrable,
    long_poll_pending,
    poll_not_modified_marked,
)
from games.live.rearm import etag_matches, if_none_match_tags
from games.live.render import hand_view_rendered
from games.live.streams import STREAM_RENDERERS, resume_cursor, stream_format, wsgi_stream
from games.selectors.hands import (
    hand_etag,
    hand_etag_for_user,
    hand_events_for_user,
    hand_get,
    hand_replay_for_user,
    hand_view_for_user,
)
from games.selectors.history import hand_history
from games.selectors.players import player_by_username, player_profile
from games.selectors.private_tables import table_visible_check
from games.selectors.reality_check import reality_check_for
from games.selectors.rooms import room_catalogue
from games.selectors.rules import rules_evaluate, rules_presets, rules_score
from games.selectors.tables import (
    table_hand_for_redirect,
    table_hands,
    table_page,
    table_summaries,
    table_summary,
)
from games.services.hands import move_submit
from games.services.tables import (
    fixed_deck_check,
    room_quick_join,
    seat_join,
    seat_leave,
    seat_ready,
    table_create,
)


def _query(serializer_class: type, request: Request) -> dict[str, Any]:
    plain = plain_int_query(serializer_class, request.query_params)  # the common case, cheaply
    if plain is not None:
        return plain
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _body(serializer_class: type, request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _table_body(table_id: int, *, user: Any = None) -> Any:
    # a private table: 404 to strangers, its invite code to its owner and seated players
    summary = table_summary(table_id=table_id, viewer=user)
    if user is not None and any(s["user_id"] == user.pk for s in summary["seats"]):
        summary["reality_check"] = reality_check_for(user=user)  # a seated player's own view
    return represented(TableOutputSerializer, summary)


def _table_response(table_id: int, code: int = status.HTTP_200_OK, *, user: Any = None) -> Response:
    return Response(_table_body(table_id, user=user), status=code)


TABLE_ID = OpenApiParameter("table_id", OpenApiTypes.INT, OpenApiParameter.PATH)
ROOM_SLUG = OpenApiParameter(
    "slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="A room's slug (`nen-dat`…)."
)
USERNAME = OpenApiParameter("username", OpenApiTypes.STR, OpenApiParameter.PATH)
HAND_ID = OpenApiParameter("hand_id", OpenApiTypes.INT, OpenApiParameter.PATH)


# --------------------------------------------------------------------------- tables


class TableListCreateApi(APIView):
    required_scope = {"GET": scopes.READ, "POST": scopes.PLAY}

    @extend_schema(
        operation_id="tables_list",
        tags=["tables"],
        summary="List tables that are not closed (newest first; cursor pages, `Link` header)",
        description=(
            "A JSON array of tables, newest first, `limit` (at most and by default 100) a page. "
            'When there are older tables the response has a `Link: <…&cursor=…>; rel="next"` '
            "header: follow it for the next page. A content `ETag`: `If-None-Match` → 304; with "
            "`?wait=N` (≤ 30 s) too, the answer comes as soon as a table changes."
        ),
        parameters=[TableListQuerySerializer, IF_NONE_MATCH, ETAG, LINK_NEXT, *COMMON_HEADERS],
        responses={
            200: TableOutputSerializer(many=True),
            304: OpenApiResponse(description="Not modified (the ETag still matches)."),
            **problem_responses(400, descriptions=BAD_QUERY),
        },
    )
    def get(self, request: Request) -> Response:
        from games.api.live_views import table_conditional

        filters = _query(TableListQuerySerializer, request)
        wait = filters.pop("wait", 0)
        page = table_page(**filters)
        response = table_conditional(
            request,
            wait=wait,
            topic=lobby_topic(),
            prefix="tables",
            render=lambda: TableOutputSerializer(table_summaries(page.tables), many=True).data,
        )
        if page.next_cursor is not None:
            query = request.query_params.copy()
            query["cursor"] = page.next_cursor
            url = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
            response["Link"] = f'<{url}>; rel="next"'
        return response

    @extend_schema(
        operation_id="tables_create",
        tags=["tables"],
        summary="Create a table; the creator sits down (seat 0 unless it asks for another)",
        parameters=[LOCATION_CREATED, *COMMON_HEADERS],
        request=TableCreateInputSerializer,
        responses={
            201: TableOutputSerializer,
            **problem_responses(409, request_body=True, table=True, descriptions=BAD_TABLE),
        },
    )
    def post(self, request: Request) -> Response:
        # Before the body's own validation: a production server refuses any deck, even a bad one.
        given = isinstance(request.data, dict) and (
            "deck" in request.data or "dealer" in request.data
        )
        fixed_deck_check(deck_given=given)
        data = _body(TableCreateInputSerializer, request)
        table = table_create(owner=request.user, **data)
        response = _table_response(table.pk, status.HTTP_201_CREATED, user=request.user)
        response["Location"] = reverse("games:table-detail", args=[table.pk])
        return response


class TableDetailApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="tables_retrieve",
        tags=["tables"],
        summary="One table with its seats (ETag; If-None-Match → 304; ?wait=N)",
        description=(
            "A content `ETag`: send it back in `If-None-Match` for a 304 while nothing changed; "
            "with `?wait=N` (≤ 30 s) too, the answer comes as soon as the table changes (a seat "
            "taken or freed, a player ready, a deal, a hand's end), else a 304 after N seconds."
        ),
        parameters=[TABLE_ID, WaitQuerySerializer, IF_NONE_MATCH, ETAG, *COMMON_HEADERS],
        responses={
            200: TableOutputSerializer,
            304: OpenApiResponse(description="Not modified (the ETag still matches)."),
            **problem_responses(400, 404),
        },
    )
    def get(self, request: Request, table_id: int) -> Response:
        from games.api.live_views import table_conditional

        wait = _query(WaitQuerySerializer, request)["wait"]
        return table_conditional(
            request,
            wait=wait,
            topic=table_topic(table_id),
            prefix=f"t{table_id}",
            render=lambda: _table_body(table_id, user=request.user),
        )


class SeatJoinApi(APIView):
    required_scope = scopes.PLAY

    @extend_schema(
        operation_id="tables_join",
        tags=["tables"],
        summary="Sit down at a table (optional seat; the lowest free one otherwise)",
        parameters=[TABLE_ID, *COMMON_HEADERS],
        request=SeatJoinInputSerializer,
        responses={
            200: TableOutputSerializer,
            **problem_responses(
                403, 404, 409, request_body=True, table=True, descriptions=BAD_JOIN
            ),
        },
    )
    def post(self, request: Request, table_id: int) -> Response:
        data = _body(SeatJoinInputSerializer, request)
        seat_join(table_id=table_id, user=request.user, **data)
        return _table_response(table_id, user=request.user)


class SeatLeaveApi(APIView):
    required_scope = scopes.BOT_PLAY

    @extend_schema(
        operation_id="tables_leave",
        tags=["tables"],
        summary="Stand up (mid-hand: the seat is played automatically to the end of the hand)",
        parameters=[TABLE_ID, *COMMON_HEADERS],
        request=None,
        responses={200: TableOutputSerializer, **problem_responses(404, 409)},
    )
    def post(self, request: Request, table_id: int) -> Response:
        seat_leave(table_id=table_id, user=request.user)
        return _table_response(table_id)


class SeatReadyApi(APIView):
    required_scope = scopes.BOT_PLAY

    @extend_schema(
        operation_id="tables_ready",
        tags=["tables"],
        summary="Say ready for the next hand; deals when ≥ 2 seated players are all ready",
        parameters=[TABLE_ID, *COMMON_HEADERS],
        request=SeatReadyInputSerializer,
        responses={
            200: SeatReadyOutputSerializer,
            **problem_responses(404, 409, request_body=True, descriptions=BAD_SEAT),
        },
    )
    def post(self, request: Request, table_id: int) -> Response:
        data = _body(SeatReadyInputSerializer, request)
        hand = seat_ready(table_id=table_id, user=request.user, **data)
        body = {"table": table_summary(table_id=table_id), "hand_id": hand.pk if hand else None}
        return Response(represented(SeatReadyOutputSerializer, body))


class TableHandListApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="tables_hands",
        tags=["tables"],
        summary="The table's hands, newest first (at most 100), with their stakes",
        parameters=[TABLE_ID, *COMMON_HEADERS],
        responses={200: TableHandSerializer(many=True), **problem_responses(404)},
    )
    def get(self, request: Request, table_id: int) -> Response:
        table_visible_check(table_id=table_id, user=request.user)
        return Response(TableHandSerializer(table_hands(table_id=table_id), many=True).data)


class TableHandRedirectApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="tables_hand",
        tags=["tables"],
        summary="Redirect (302) to the table's current hand (or its latest)",
        parameters=[TABLE_ID, LOCATION_REDIRECT, *COMMON_HEADERS],
        responses={
            302: OpenApiResponse(description="Found: `Location` is the hand's URL."),
            **problem_responses(404),
        },
    )
    def get(self, request: Request, table_id: int) -> Any:
        table_visible_check(table_id=table_id, user=request.user)
        hand_id = table_hand_for_redirect(table_id=table_id)
        return HttpResponseRedirect(reverse("games:hand-detail", args=[hand_id]))


# --------------------------------------------------------------------------- rooms (the lobby)


class RoomListApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="rooms_list",
        tags=["rooms"],
        summary="The rooms: names, requirements, fees, open tables and players seated",
        parameters=COMMON_HEADERS,
        responses={200: RoomOutputSerializer(many=True), **problem_responses()},
    )
    def get(self, request: Request) -> Response:
        return Response(RoomOutputSerializer(room_catalogue(), many=True).data)


class RoomQuickJoinApi(APIView):
    required_scope = scopes.PLAY

    @extend_schema(
        operation_id="rooms_quick_join",
        tags=["rooms"],
        summary="Sit at an open table of the room with a free seat and an affordable stake, "
        "or open one",
        description=(
            "Joins the fullest table of the room (then the oldest) that has a free seat and a "
            "stake the caller can afford (15 × stake; exactly `stake` when given): 200. When "
            "there is none, opens a table at `stake` (default: a hundredth of the room's "
            "minimum balance, at least 100) with the caller at seat 0: 201 with `Location`."
        ),
        parameters=[ROOM_SLUG, LOCATION_CREATED, *COMMON_HEADERS],
        request=QuickJoinInputSerializer,
        responses={
            200: TableOutputSerializer,
            201: TableOutputSerializer,
            **problem_responses(404, 409, request_body=True, table=True),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        data = _body(QuickJoinInputSerializer, request)
        table, created = room_quick_join(room=slug, user=request.user, **data)
        if not created:
            return _table_response(table.pk)
        response = _table_response(table.pk, status.HTTP_201_CREATED)
        response["Location"] = reverse("games:table-detail", args=[table.pk])
        return response


# --------------------------------------------------------------------------- history, players

BAD_HISTORY = {400: "`invalid`: `cursor` or `limit` is malformed (`errors` name it)."}


class MeHandListApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="me_hands",
        tags=["me"],
        summary="My hands, newest first (cursor pagination): my seat, result and Quan change",
        parameters=[HistoryQuerySerializer, *COMMON_HEADERS],
        responses={
            200: HistoryPageSerializer,
            **problem_responses(400, descriptions=BAD_HISTORY),
        },
    )
    def get(self, request: Request) -> Response:
        query = _query(HistoryQuerySerializer, request)
        cursor = query.pop("cursor", None)
        page = hand_history(user=request.user, cursor=int(cursor) if cursor else None, **query)
        return Response(HistoryPageSerializer(page).data)


class PlayerDetailApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="players_retrieve",
        tags=["players"],
        summary="A player's public profile: level, hands played, wins, biggest win, cước",
        parameters=[USERNAME, *COMMON_HEADERS],
        responses={200: PlayerProfileSerializer, **problem_responses(404)},
    )
    def get(self, request: Request, username: str) -> Response:
        profile = player_profile(user=player_by_username(username))
        return Response(PlayerProfileSerializer(profile).data)


class PlayerHandListApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="players_hands",
        tags=["players"],
        summary="A player's ended hands, newest first (cursor pagination)",
        parameters=[USERNAME, HistoryQuerySerializer, *COMMON_HEADERS],
        responses={
            200: HistoryPageSerializer,
            **problem_responses(400, 404, descriptions=BAD_HISTORY),
        },
    )
    def get(self, request: Request, username: str) -> Response:
        query = _query(HistoryQuerySerializer, request)
        player = player_by_username(username)
        cursor = query.pop("cursor", None)
        page = hand_history(
            user=player, ended_only=True, cursor=int(cursor) if cursor else None, **query
        )
        return Response(HistoryPageSerializer(page).data)


# --------------------------------------------------------------------------- hands


def _if_none_match(request: Request) -> list[str] | None:
    """The opaque tags of ``If-None-Match``; None without a usable header."""
    return if_none_match_tags(request.headers.get("If-None-Match", ""))


def _hand_headers(response: Response, etag: str) -> Response:
    """The headers of every answer of GET /hands/{id} (a long poll's pending one too)."""
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Authorization"
    return response


def _not_modified(etag: str) -> Response:
    return _hand_headers(Response(status=status.HTTP_304_NOT_MODIFIED), etag)


class HandDetailApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="hands_retrieve",
        tags=["hands"],
        summary="My view of a hand, or a spectator's (ETag; If-None-Match → 304; ?wait=N)",
        description=(
            "The caller's view: its own hand, every public thing (doors, mats, the card on "
            "offer), its legal moves, the deadline and the seed hash; after the end also the "
            "result, every hand and the revealed seed. A non-participant gets the spectator's "
            "view (`spectator: true`, `my_seat: null`): the public things only, never a card "
            "of any hand, the stock or the seed (403 `not_a_participant` where the table does "
            'not allow spectators). Strong `ETag` `"<hand id>-<seq>"`: send '
            "it back in `If-None-Match` to get a 304 while nothing changed. `?wait=N` (≤ 30 s) "
            "with `after_seq=S` answers as soon as the hand's seq is above S."
        ),
        parameters=[HAND_ID, HandQuerySerializer, IF_NONE_MATCH, ETAG, *COMMON_HEADERS],
        responses={
            200: HandViewSerializer,
            304: OpenApiResponse(description="Not modified (the ETag still matches)."),
            **problem_responses(400, 403, 404, descriptions=BAD_QUERY),
        },
    )
    def get(self, request: Request, hand_id: int) -> Response:
        query = _query(HandQuerySerializer, request)
        wait = query["wait"]
        tags = _if_none_match(request)
        if wait or tags is not None:
            # Cheap checks first: one row, no state and no view.
            version = hand_etag_for_user(hand_id=hand_id, user=request.user)
            # Wait only while there is nothing new to say: not when the client's ETag is
            # already stale, nor on a settled hand, which changes no more (but for a void by
            # staff). An ended hand not settled yet waits for its settlement.
            stale = tags is not None and not etag_matches(tags, version.etag)
            after_seq = query.get("after_seq", version.seq)
            if wait and not stale and not version.final and version.seq <= after_seq:
                if long_poll_deferrable(request):  # under ASGI: wait without this thread
                    pending = Pending(
                        "hand", hand_id, version.seq, after_seq, version.seat, wait, tags=tags
                    )
                    return _hand_headers(long_poll_pending(request, pending), version.etag)
                with long_poll_slot(token_id=credential_key(request.auth)):
                    hand_wait_for_seq(hand_id=hand_id, after_seq=after_seq, timeout=wait)
                version = hand_etag_for_user(hand_id=hand_id, user=request.user)
            if tags is not None and etag_matches(tags, version.etag):
                unchanged = _not_modified(version.etag)
                if not wait:  # the template of this client's next polls (games.live.rearm)
                    poll_not_modified_marked(request, unchanged, hand=hand_id, seat=version.seat)
                return unchanged
        else:
            version = hand_etag_for_user(hand_id=hand_id, user=request.user)  # 404 / 403 first
        if request.accepted_media_type != JSONRenderer.media_type:  # ?indent=… and the like
            hand = hand_get(hand_id=hand_id)
            view = hand_view_for_user(hand=hand, user=request.user)
            return _hand_headers(Response(view), hand_etag(hand.pk, hand.seq))
        # The hot read path renders the selector's JSON-ready view as it is (a serializer pass
        # would triple its cost), once per (hand, seq, seats' version, seat) in this process,
        # shared with the long polls (games.live.render); HandViewSerializer documents it, and
        # a test checks the two agree field for field.
        rendered = hand_view_rendered(
            hand_id=hand_id,
            seat=version.seat,
            seq=version.seq,
            seats_version=version.seats_version,
        )
        response = HttpResponse(rendered.body, content_type=JSONRenderer.media_type)
        response.chan_log_seq = rendered.seq  # type: ignore[attr-defined]  # the request's log line
        return _hand_headers(response, rendered.etag)


class HandEventListApi(APIView):
    required_scope = scopes.READ
    renderer_classes = [JSONRenderer, *STREAM_RENDERERS]

    @extend_schema(
        operation_id="hands_events",
        tags=["hands"],
        summary="My events of a hand, or a spectator's, by seq (cursor: after_seq; ≤ 100; ?wait=N)",
        description=(
            "With `after_seq`, `?wait=N` (≤ 30 s) long-polls: the page comes as soon as there "
            "is an event after `after_seq`, or after N seconds empty (at most 10 long polls "
            "wait at once per token, as for `GET /hands/{id}`). With `Accept: "
            "text/event-stream` (Server-Sent Events) or `application/x-ndjson` the events "
            "come as a stream instead: the same events for the same seat, `Last-Event-ID` (or "
            "`after_seq`) resumes, heartbeats every 15 s (docs/api.md, streams)."
        ),
        parameters=[HAND_ID, EventsQuerySerializer, *COMMON_HEADERS],
        responses={
            200: HandEventPageSerializer,
            **problem_responses(400, 403, 404, descriptions=BAD_QUERY),
        },
    )
    def get(self, request: Request, hand_id: int) -> Response:
        query = _query(EventsQuerySerializer, request)
        fmt = stream_format(request)
        if fmt is not None:
            return _hand_events_stream(request, hand_id, fmt, query.get("after_seq"))
        wait = query.pop("wait")
        after_seq = query.get("after_seq")
        if wait and after_seq is not None:
            version = hand_etag_for_user(hand_id=hand_id, user=request.user)
            if not version.final and version.seq <= after_seq:
                if long_poll_deferrable(request):  # under ASGI: wait without this thread
                    limit = query["limit"]
                    pending = Pending(
                        "events", hand_id, version.seq, after_seq, version.seat, wait, limit=limit
                    )
                    return long_poll_pending(request, pending)
                with long_poll_slot(token_id=credential_key(request.auth)):
                    hand_wait_for_seq(hand_id=hand_id, after_seq=after_seq, timeout=wait)
        hand = hand_get(hand_id=hand_id)
        page = hand_events_for_user(hand=hand, user=request.user, **query)
        return Response(HandEventPageSerializer(page).data)


def _hand_events_stream(request: Request, hand_id: int, fmt: str, after_seq: int | None) -> Any:
    """The hand's events as a stream for the caller's seat (a spectator's where allowed)."""
    version = hand_etag_for_user(hand_id=hand_id, user=request.user)  # 404 / 403 first
    hand_events_for_user(hand=hand_get(hand_id=hand_id), user=request.user, limit=1)
    cursor = resume_cursor(request, after_seq, -1)
    if long_poll_deferrable(request):
        pending = Pending("stream", hand_id, version.seq, cursor, version.seat, 0, stream=fmt)
        return long_poll_pending(request, pending)
    return wsgi_stream("events", hand_id, version.seat, cursor, fmt)


class MoveSubmitApi(APIView):
    required_scope = scopes.BOT_PLAY

    @extend_schema(
        operation_id="hands_moves_create",
        tags=["hands"],
        summary="Make a move (the rules core's move JSON, optional expected_seq)",
        description=(
            'The body is one move, e.g. `{"type": "discard", "card": "7N"}`, '
            '`{"type": "eat", "card": "7N", "with": "7V"}`, `{"type": "draw"}`, '
            '`{"type": "u"}`, plus an optional `expected_seq`. Send an `Idempotency-Key` '
            "header to retry safely: a repeat with the same key and body returns the first "
            "response (header `Idempotent-Replayed: true`) and appends nothing."
        ),
        parameters=[HAND_ID, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, *COMMON_HEADERS],
        request=MoveInputSerializer,
        responses={
            201: MoveCreatedSerializer,
            **problem_responses(
                403, 404, 409, 422, move=True, request_body=True, descriptions=BAD_MOVE
            ),
        },
    )
    def post(self, request: Request, hand_id: int) -> Response:
        body = request.data
        # The service refuses a body that is not an object and a bad expected_seq (with the seq).
        move_json = dict(body) if isinstance(body, dict) else body
        expected_seq = move_json.pop("expected_seq", None) if isinstance(body, dict) else None
        result = move_submit(
            hand_id=hand_id,
            user=request.user,
            move_json=move_json,
            expected_seq=expected_seq,
            idempotency_key=request.headers.get("Idempotency-Key"),
            request_hash=move_request_hash(hand_id, body),
            render=lambda hand, state: hand_view_for_user(
                hand=hand, user=request.user, state=state
            ),
        )
        response = Response(result.body, status=result.status)
        if result.replayed:
            response["Idempotent-Replayed"] = "true"
        move_template_mark(request, response, result.replayed)  # (games.api.move_direct)
        return response


class HandReplayApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="hands_replay",
        tags=["hands"],
        summary="The full state at seq N (participants after the end; auditors any time)",
        parameters=[HAND_ID, ReplayQuerySerializer, *COMMON_HEADERS],
        responses={
            200: HandReplaySerializer,
            **problem_responses(400, 403, 404, 409, descriptions=BAD_REPLAY),
        },
    )
    def get(self, request: Request, hand_id: int) -> Response:
        query = _query(ReplayQuerySerializer, request)
        hand = hand_get(hand_id=hand_id)
        view = hand_replay_for_user(hand=hand, user=request.user, seq=query.get("seq"))
        return Response(HandReplaySerializer(view).data)


EXPORT_FORBIDDEN = {
    403: "`hand_not_ended` (a participant, before the end) or `not_a_participant`.",
    409: BAD_REPLAY[409],
}


class HandExportApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="hands_export",
        tags=["hands"],
        summary="The hand as one document for python -m games.rules.verify (after the end)",
        description="Participants once the hand has ended (`403 hand_not_ended` before), "
        "auditors (`accounts.audit_hands`) any time. docs/audit.md says how to settle a dispute "
        "with it.",
        parameters=[HAND_ID, *COMMON_HEADERS],
        responses={
            200: HandExportSerializer,
            **problem_responses(403, 404, 409, descriptions=EXPORT_FORBIDDEN),
        },
    )
    def get(self, request: Request, hand_id: int) -> Response:
        hand = hand_get(hand_id=hand_id)
        return Response(
            HandExportSerializer(hand_export_for_user(hand=hand, user=request.user)).data
        )


# --------------------------------------------------------------------------- rules


class RulesPresetListApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="rules_presets",
        tags=["rules"],
        summary="The ruleset presets, in full (default first)",
        parameters=COMMON_HEADERS,
        responses={200: PresetSerializer(many=True), **problem_responses()},
    )
    def get(self, request: Request) -> Response:
        return Response(PresetSerializer(rules_presets(), many=True).data)


class RulesEvaluateApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="rules_evaluate",
        tags=["rules"],
        summary="The calculator: does this hand win with this card, with which cước and score",
        description=(
            "Whether `hand` + `mat` (the 19-set) wins on `card` from `source`, with which cước "
            "and how many points. `context` may hold `first_draw`, `previous_winner`, "
            "`dealt_hand` and `nhai` (accepted; nhái only matter for the gà góp pot, never for "
            "cước, so they never change the answer); any other key is a 400. When `win` is "
            "false, `cuoc` is empty and `reason` says why."
        ),
        parameters=COMMON_HEADERS,
        request=EvaluateInputSerializer,
        responses={
            200: EvaluateOutputSerializer,
            **problem_responses(request_body=True, descriptions=BAD_EVALUATE),
        },
    )
    def post(self, request: Request) -> Response:
        data = _body(EvaluateInputSerializer, request)
        result = rules_evaluate(
            ruleset_spec=data.get("ruleset"),
            mat=data.get("mat", []),
            hand=data["hand"],
            card=data["card"],
            source=data["source"],
            context=data.get("context"),
        )
        return Response(result)


class RulesScoreApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="rules_score",
        tags=["rules"],
        summary="Score a cước map under a ruleset: base + gà = total",
        description=(
            '`{"cuoc": {}}` (an empty win) is a 200 with every score 0. A cước the ruleset '
            "turns off scores nothing."
        ),
        parameters=COMMON_HEADERS,
        request=ScoreInputSerializer,
        responses={
            200: ScoreOutputSerializer,
            **problem_responses(request_body=True, descriptions=BAD_SCORE),
        },
    )
    def post(self, request: Request) -> Response:
        data = _body(ScoreInputSerializer, request)
        result = rules_score(ruleset_spec=data.get("ruleset"), cuoc=data["cuoc"])
        return Response(ScoreOutputSerializer(result).data)
