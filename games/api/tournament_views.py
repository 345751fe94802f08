"""Thin views of arenas: ``/api/v1/tournaments`` — the list, one arena, joining and
leaving, and its live standings (ETag, ``?wait=N``). Staff create (here or in the admin); edits
and cancellations are the admin's."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import scopes
from chan_api.schema import COMMON_HEADERS
from core.errors import PermissionDenied
from games.api.live_serializers import WaitQuerySerializer
from games.api.live_views import table_conditional
from games.api.schema import ETAG, IF_NONE_MATCH, LOCATION_CREATED, problem_responses
from games.api.tournament_serializers import (
    TournamentCreateInputSerializer,
    TournamentListQuerySerializer,
    TournamentOutputSerializer,
    TournamentStandingsSerializer,
)
from games.api.views import _body, _query
from games.live.announce import arena_topic
from games.selectors.tournaments import (
    tournament_get,
    tournament_list,
    tournament_standings,
    tournament_summary,
)
from games.services.tournaments import tournament_create, tournament_join, tournament_leave

TOURNAMENT_ID = OpenApiParameter("tournament_id", OpenApiTypes.INT, OpenApiParameter.PATH)

BAD_JOIN = {
    403: "`player_banned`, `account_frozen`.",
    404: "`tournament_not_found`.",
    409: "`already_entered`, `tournament_started` (a newcomer after the start), "
    "`tournament_closed` (finished or cancelled, with `status`), `insufficient_balance` (the "
    "fee and a seat's hold, with `needed`, `available`, `held`), `room_requirements_not_met`, "
    "my own limits (`cooling_off`, `self_excluded`, `loss_limit_reached`, `limit_exceeded`).",
}
BAD_LEAVE = {
    404: "`tournament_not_found`.",
    409: "`not_entered`, `tournament_closed` (with `status`).",
}


def _tournament_response(tournament_id: int, user: Any, code: int = 200) -> Response:
    body = tournament_summary(tournament_get(tournament_id=tournament_id), user=user)
    return Response(TournamentOutputSerializer(body).data, status=code)


class TournamentListCreateApi(APIView):
    required_scope = {"GET": scopes.READ, "POST": scopes.PLAY}

    @extend_schema(
        operation_id="tournaments_list",
        tags=["tournaments"],
        summary="The arenas, latest start first (at most 100), optionally of one status",
        parameters=[TournamentListQuerySerializer, *COMMON_HEADERS],
        responses={
            200: TournamentOutputSerializer(many=True),
            **problem_responses(400, descriptions={400: "`invalid`: `status`."}),
        },
    )
    def get(self, request: Request) -> Response:
        filters = _query(TournamentListQuerySerializer, request)
        rows = [tournament_summary(t, user=request.user) for t in tournament_list(**filters)]
        return Response(TournamentOutputSerializer(rows, many=True).data)

    @extend_schema(
        operation_id="tournaments_create",
        tags=["tournaments"],
        summary="Schedule an arena (staff only)",
        description="Its tables are `table_size`-seat tables of `room` at `stake`; the entry "
        "fee is held when a player joins and taken into the pool at `starts_at`; at `ends_at` "
        "the pool is paid by `payout` (percent by rank).",
        parameters=[LOCATION_CREATED, *COMMON_HEADERS],
        request=TournamentCreateInputSerializer,
        responses={
            201: TournamentOutputSerializer,
            **problem_responses(
                403,
                request_body=True,
                descriptions={
                    400: "`invalid` (`errors` name the fields), `invalid_room`, `invalid_ruleset`.",
                    403: "`staff_only`.",
                },
            ),
        },
    )
    def post(self, request: Request) -> Response:
        if not request.user.is_staff:
            raise PermissionDenied(_("Only staff may create tournaments."), code="staff_only")
        data = _body(TournamentCreateInputSerializer, request)
        tournament = tournament_create(staff=request.user, **data)
        response = _tournament_response(tournament.pk, request.user, status.HTTP_201_CREATED)
        response["Location"] = reverse("games:tournament-detail", args=[tournament.pk])
        return response


class TournamentDetailApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="tournaments_retrieve",
        tags=["tournaments"],
        summary="One arena: its terms, status, players, pool and my entry",
        parameters=[TOURNAMENT_ID, *COMMON_HEADERS],
        responses={200: TournamentOutputSerializer, **problem_responses(404)},
    )
    def get(self, request: Request, tournament_id: int) -> Response:
        return _tournament_response(tournament_id, request.user)


class TournamentJoinApi(APIView):
    required_scope = scopes.PLAY

    @extend_schema(
        operation_id="tournaments_join",
        tags=["tournaments"],
        summary="Enter an arena (its entry fee held); while it runs, rejoin after withdrawing",
        parameters=[TOURNAMENT_ID, *COMMON_HEADERS],
        request=None,
        responses={
            200: TournamentOutputSerializer,
            **problem_responses(403, 404, 409, descriptions=BAD_JOIN),
        },
    )
    def post(self, request: Request, tournament_id: int) -> Response:
        tournament_join(tournament_id=tournament_id, user=request.user)
        return _tournament_response(tournament_id, request.user)


class TournamentLeaveApi(APIView):
    required_scope = scopes.PLAY

    @extend_schema(
        operation_id="tournaments_leave",
        tags=["tournaments"],
        summary="Leave an arena: before its start the fee's hold is released; while it runs, "
        "withdraw (no more tables; points and fee stay)",
        parameters=[TOURNAMENT_ID, *COMMON_HEADERS],
        request=None,
        responses={
            200: TournamentOutputSerializer,
            **problem_responses(404, 409, descriptions=BAD_LEAVE),
        },
    )
    def post(self, request: Request, tournament_id: int) -> Response:
        tournament_leave(tournament_id=tournament_id, user=request.user)
        return _tournament_response(tournament_id, request.user)


class TournamentStandingsApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="tournaments_standings",
        tags=["tournaments"],
        summary="An arena's live standings (ETag; If-None-Match → 304; ?wait=N)",
        description=(
            "Every entrant by arena points, then wins. A content `ETag`: send it back in "
            "`If-None-Match` for a 304 while nothing changed; with `?wait=N` (≤ 30 s) too, the "
            "answer comes as soon as the standings change (a hand scored, a table opened, a "
            "player joined or withdrew, the start, the end), else a 304 after N seconds."
        ),
        parameters=[TOURNAMENT_ID, WaitQuerySerializer, IF_NONE_MATCH, ETAG, *COMMON_HEADERS],
        responses={
            200: TournamentStandingsSerializer,
            304: OpenApiResponse(description="Not modified (the ETag still matches)."),
            **problem_responses(400, 404),
        },
    )
    def get(self, request: Request, tournament_id: int) -> Response:
        wait = _query(WaitQuerySerializer, request)["wait"]
        tournament_get(tournament_id=tournament_id)  # 404 before any wait
        return table_conditional(
            request,
            wait=wait,
            topic=arena_topic(tournament_id),
            prefix=f"a{tournament_id}",
            render=lambda: tournament_standings(tournament_id=tournament_id),
        )
