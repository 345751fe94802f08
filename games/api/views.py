"""Thin views of the games API: parse with an input serializer, call one service or selector,
render with an output serializer. Errors are ApiProblems rendered as problem+json."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from django.http import HttpResponseRedirect
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chan_api.problems import bad_request
from games.api.schema import problem_responses
from games.api.serializers import (
    MAX_SEQ,
    EvaluateInputSerializer,
    EvaluateOutputSerializer,
    EventsQuerySerializer,
    HandEventPageSerializer,
    HandQuerySerializer,
    HandReplaySerializer,
    HandViewSerializer,
    MoveCreatedSerializer,
    MoveInputSerializer,
    PresetSerializer,
    ReplayQuerySerializer,
    ScoreInputSerializer,
    ScoreOutputSerializer,
    SeatJoinInputSerializer,
    SeatReadyInputSerializer,
    SeatReadyOutputSerializer,
    TableCreateInputSerializer,
    TableListQuerySerializer,
    TableOutputSerializer,
)
from games.selectors import (
    hand_etag,
    hand_etag_for_user,
    hand_events_for_user,
    hand_get,
    hand_replay_for_user,
    hand_view_for_user,
    hand_wait_for_seq,
    rules_evaluate,
    rules_presets,
    rules_score,
    table_hand_for_redirect,
    table_list,
    table_summaries,
    table_summary,
)
from games.services.hands import move_submit
from games.services.tables import seat_join, seat_leave, seat_ready, table_create

_IDEMPOTENCY_KEY_RE = re.compile(r"^[\x21-\x7e]{1,128}$")


def _query(serializer_class: type, request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _body(serializer_class: type, request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _table_response(table_id: int, code: int = status.HTTP_200_OK) -> Response:
    body = TableOutputSerializer(table_summary(table_id=table_id)).data
    return Response(body, status=code)


TABLE_ID = OpenApiParameter("table_id", OpenApiTypes.INT, OpenApiParameter.PATH)
HAND_ID = OpenApiParameter("hand_id", OpenApiTypes.INT, OpenApiParameter.PATH)


# --------------------------------------------------------------------------- tables


class TableListCreateApi(APIView):
    @extend_schema(
        operation_id="tables_list",
        tags=["tables"],
        summary="List open tables (newest first, at most 100)",
        parameters=[TableListQuerySerializer],
        responses={200: TableOutputSerializer(many=True), **problem_responses(400, 401, 429)},
    )
    def get(self, request: Request) -> Response:
        filters = _query(TableListQuerySerializer, request)
        tables = table_list(**filters)
        return Response(TableOutputSerializer(table_summaries(tables), many=True).data)

    @extend_schema(
        operation_id="tables_create",
        tags=["tables"],
        summary="Create a table; the creator sits down (seat 0 unless it asks for another)",
        request=TableCreateInputSerializer,
        responses={201: TableOutputSerializer, **problem_responses(400, 401, 413, 415, 429)},
    )
    def post(self, request: Request) -> Response:
        data = _body(TableCreateInputSerializer, request)
        table = table_create(owner=request.user, **data)
        response = _table_response(table.pk, status.HTTP_201_CREATED)
        response["Location"] = reverse("games:table-detail", args=[table.pk])
        return response


class TableDetailApi(APIView):
    @extend_schema(
        operation_id="tables_retrieve",
        tags=["tables"],
        summary="One table with its seats",
        parameters=[TABLE_ID],
        responses={200: TableOutputSerializer, **problem_responses(401, 404, 429)},
    )
    def get(self, request: Request, table_id: int) -> Response:
        return _table_response(table_id)


class SeatJoinApi(APIView):
    @extend_schema(
        operation_id="tables_join",
        tags=["tables"],
        summary="Sit down at a table (optional seat; the lowest free one otherwise)",
        parameters=[TABLE_ID],
        request=SeatJoinInputSerializer,
        responses={
            200: TableOutputSerializer,
            **problem_responses(400, 401, 404, 409, 413, 415, 429),
        },
    )
    def post(self, request: Request, table_id: int) -> Response:
        data = _body(SeatJoinInputSerializer, request)
        seat_join(table_id=table_id, user=request.user, **data)
        return _table_response(table_id)


class SeatLeaveApi(APIView):
    @extend_schema(
        operation_id="tables_leave",
        tags=["tables"],
        summary="Stand up (mid-hand: the seat is played automatically to the end of the hand)",
        parameters=[TABLE_ID],
        request=None,
        responses={200: TableOutputSerializer, **problem_responses(401, 404, 409, 429)},
    )
    def post(self, request: Request, table_id: int) -> Response:
        seat_leave(table_id=table_id, user=request.user)
        return _table_response(table_id)


class SeatReadyApi(APIView):
    @extend_schema(
        operation_id="tables_ready",
        tags=["tables"],
        summary="Say ready for the next hand; deals when ≥ 2 seated players are all ready",
        parameters=[TABLE_ID],
        request=SeatReadyInputSerializer,
        responses={
            200: SeatReadyOutputSerializer,
            **problem_responses(400, 401, 404, 409, 413, 415, 429),
        },
    )
    def post(self, request: Request, table_id: int) -> Response:
        data = _body(SeatReadyInputSerializer, request)
        hand = seat_ready(table_id=table_id, user=request.user, **data)
        body = {"table": table_summary(table_id=table_id), "hand_id": hand.pk if hand else None}
        return Response(SeatReadyOutputSerializer(body).data)


class TableHandRedirectApi(APIView):
    @extend_schema(
        operation_id="tables_hand",
        tags=["tables"],
        summary="Redirect (302) to the table's current hand (or its latest)",
        parameters=[TABLE_ID],
        responses={
            302: OpenApiResponse(description="Location: /api/v1/hands/{id}"),
            **problem_responses(401, 404, 429),
        },
    )
    def get(self, request: Request, table_id: int) -> Any:
        hand_id = table_hand_for_redirect(table_id=table_id)
        return HttpResponseRedirect(reverse("games:hand-detail", args=[hand_id]))


# --------------------------------------------------------------------------- hands


def _etag_matches(request: Request, etag: str) -> bool:
    header = request.headers.get("If-None-Match")
    if not header:
        return False
    return header.strip() == "*" or etag in [t.strip() for t in header.split(",")]


def _not_modified(etag: str) -> Response:
    response = Response(status=status.HTTP_304_NOT_MODIFIED)
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Authorization"
    return response


class HandDetailApi(APIView):
    @extend_schema(
        operation_id="hands_retrieve",
        tags=["hands"],
        summary="My view of a hand (ETag; If-None-Match → 304; ?wait=N long-polls)",
        description=(
            "The caller's view: its own hand, every public thing (doors, mats, the card on "
            "offer), its legal moves, the deadline and the seed hash; after the end also the "
            'result, every hand and the revealed seed. Strong `ETag` `"<hand id>-<seq>"`: send '
            "it back in `If-None-Match` to get a 304 while nothing changed. `?wait=N` (≤ 30 s) "
            "with `after_seq=S` answers as soon as the hand's seq is above S."
        ),
        parameters=[
            HAND_ID,
            HandQuerySerializer,
            OpenApiParameter("If-None-Match", OpenApiTypes.STR, OpenApiParameter.HEADER),
        ],
        responses={
            200: HandViewSerializer,
            304: OpenApiResponse(description="Not modified (the ETag still matches)."),
            **problem_responses(400, 401, 403, 404, 429),
        },
    )
    def get(self, request: Request, hand_id: int) -> Response:
        query = _query(HandQuerySerializer, request)
        wait = query["wait"]
        if wait or "If-None-Match" in request.headers:
            # Cheap checks first: one row, no state and no view.
            etag, seq = hand_etag_for_user(hand_id=hand_id, user=request.user)
            after_seq = query.get("after_seq", seq)
            if wait and seq <= after_seq:
                hand_wait_for_seq(hand_id=hand_id, after_seq=after_seq, timeout=wait)
                etag, seq = hand_etag_for_user(hand_id=hand_id, user=request.user)
            if _etag_matches(request, etag):
                return _not_modified(etag)
        hand = hand_get(hand_id=hand_id)
        view = hand_view_for_user(hand=hand, user=request.user)
        # The hot read path renders the selector's JSON-ready view as it is (a serializer pass
        # would triple its cost); HandViewSerializer documents it, and a test checks the two
        # agree field for field.
        response = Response(view)
        response["ETag"] = hand_etag(hand.pk, hand.seq)
        response["Cache-Control"] = "private, no-cache"
        response["Vary"] = "Authorization"
        return response


class HandEventListApi(APIView):
    @extend_schema(
        operation_id="hands_events",
        tags=["hands"],
        summary="My events of a hand, by seq (cursor: after_seq; at most 100 a page)",
        parameters=[HAND_ID, EventsQuerySerializer],
        responses={200: HandEventPageSerializer, **problem_responses(400, 401, 403, 404, 429)},
    )
    def get(self, request: Request, hand_id: int) -> Response:
        query = _query(EventsQuerySerializer, request)
        hand = hand_get(hand_id=hand_id)
        page = hand_events_for_user(hand=hand, user=request.user, **query)
        return Response(HandEventPageSerializer(page).data)


def _request_hash(hand_id: int, body: Any) -> str:
    canonical = json.dumps(
        {"hand": hand_id, "body": body}, sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _expected_seq(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEQ:
        raise bad_request(
            "invalid",
            "expected_seq must be a non-negative integer.",
            "expected_seq phải là số nguyên không âm.",
            errors={"expected_seq": ["must be a non-negative integer"]},
        )
    return value


def _idempotency_key(request: Request) -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is None:
        return None
    if not _IDEMPOTENCY_KEY_RE.match(key):
        raise bad_request(
            "invalid_idempotency_key",
            "Idempotency-Key must be 1 to 128 visible ASCII characters.",
            "Idempotency-Key phải gồm 1 đến 128 ký tự ASCII hiển thị.",
        )
    return key


class MoveSubmitApi(APIView):
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
        parameters=[
            HAND_ID,
            OpenApiParameter("Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER),
        ],
        request=MoveInputSerializer,
        responses={
            201: MoveCreatedSerializer,
            **problem_responses(400, 401, 403, 404, 409, 413, 415, 422, 429, move=True),
        },
    )
    def post(self, request: Request, hand_id: int) -> Response:
        body = request.data
        if not isinstance(body, dict):
            raise bad_request(
                "invalid_move",
                "A move must be a JSON object.",
                "Nước đi phải là một đối tượng JSON.",
            )
        move_json = dict(body)
        expected_seq = _expected_seq(move_json.pop("expected_seq", None))
        result = move_submit(
            hand_id=hand_id,
            user=request.user,
            move_json=move_json,
            expected_seq=expected_seq,
            idempotency_key=_idempotency_key(request),
            request_hash=_request_hash(hand_id, body),
        )
        response = Response(result.body, status=result.status)
        if result.replayed:
            response["Idempotent-Replayed"] = "true"
        return response


class HandReplayApi(APIView):
    @extend_schema(
        operation_id="hands_replay",
        tags=["hands"],
        summary="The full state at seq N (participants after the end; auditors any time)",
        parameters=[HAND_ID, ReplayQuerySerializer],
        responses={200: HandReplaySerializer, **problem_responses(400, 401, 403, 404, 429)},
    )
    def get(self, request: Request, hand_id: int) -> Response:
        query = _query(ReplayQuerySerializer, request)
        hand = hand_get(hand_id=hand_id)
        view = hand_replay_for_user(hand=hand, user=request.user, seq=query.get("seq"))
        return Response(HandReplaySerializer(view).data)


# --------------------------------------------------------------------------- rules


class RulesPresetListApi(APIView):
    @extend_schema(
        operation_id="rules_presets",
        tags=["rules"],
        summary="The ruleset presets, in full (default first)",
        responses={200: PresetSerializer(many=True), **problem_responses(401, 429)},
    )
    def get(self, request: Request) -> Response:
        return Response(PresetSerializer(rules_presets(), many=True).data)


class RulesEvaluateApi(APIView):
    @extend_schema(
        operation_id="rules_evaluate",
        tags=["rules"],
        summary="The calculator: does this hand win with this card, with which cước and score",
        request=EvaluateInputSerializer,
        responses={200: EvaluateOutputSerializer, **problem_responses(400, 401, 413, 415, 429)},
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
    @extend_schema(
        operation_id="rules_score",
        tags=["rules"],
        summary="Score a cước map under a ruleset: base + gà = total",
        request=ScoreInputSerializer,
        responses={200: ScoreOutputSerializer, **problem_responses(400, 401, 413, 415, 429)},
    )
    def post(self, request: Request) -> Response:
        data = _body(ScoreInputSerializer, request)
        result = rules_score(ruleset_spec=data.get("ruleset"), cuoc=data["cuoc"])
        return Response(ScoreOutputSerializer(result).data)
