"""Thin views of tables among friends: challenges and blocks. Private tables are
``POST /tables {"private": true}`` and ``POST /tables/{id}/join {"code"}`` (games.api.views)."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import scopes
from chan_api.schema import COMMON_HEADERS
from games.api.friends_serializers import (
    BlockOutputSerializer,
    ChallengeCreateInputSerializer,
    ChallengeListQuerySerializer,
    ChallengeOutputSerializer,
)
from games.api.schema import LOCATION_CREATED, problem_responses
from games.api.views import USERNAME, _body, _query
from games.selectors.blocks import block_list
from games.selectors.challenges import challenge_get, challenge_list, challenge_summaries
from games.services.blocks import block_delete, block_put
from games.services.challenges import (
    challenge_accept,
    challenge_cancel,
    challenge_decline,
    challenge_send,
)

CHALLENGE_ID = OpenApiParameter("challenge_id", OpenApiTypes.INT, OpenApiParameter.PATH)

BAD_CHALLENGE = {
    400: "`invalid` (`errors` name the fields), `cannot_challenge_self`, `cannot_challenge_bot`, "
    "`invalid_room`.",
    403: "`player_blocked`: one of us blocks the other.",
    404: "`not_found`: no such player.",
    409: "`challenge_pending` (mine to that player still waits for an answer); my own limits "
    "(`limit_exceeded`, `loss_limit_reached`, `cooling_off`, `self_excluded`).",
}
BAD_ANSWER = {
    403: "`not_challenged` (I sent it: only the challenged answers), `player_blocked` (accept: "
    "a block since), `player_banned`.",
    404: "`not_found`: no such challenge of mine.",
    409: "`challenge_expired`, `challenge_answered` (with `status`); accept: what refuses "
    "either seat (`insufficient_balance`, `room_requirements_not_met`, the players' limits).",
}


def _challenge_response(challenge_id: int, user: object, code: int = 200) -> Response:
    challenge = challenge_get(challenge_id=challenge_id, user=user)
    body = challenge_summaries([challenge], user=user)[0]
    return Response(ChallengeOutputSerializer(body).data, status=code)


class ChallengeListCreateApi(APIView):
    required_scope = {"GET": scopes.READ, "POST": scopes.PLAY}

    @extend_schema(
        operation_id="challenges_list",
        tags=["friends"],
        summary="My challenges, sent and received, newest first (at most 100)",
        parameters=[ChallengeListQuerySerializer, *COMMON_HEADERS],
        responses={
            200: ChallengeOutputSerializer(many=True),
            **problem_responses(400, descriptions={400: "`invalid`: `box` or `status`."}),
        },
    )
    def get(self, request: Request) -> Response:
        filters = _query(ChallengeListQuerySerializer, request)
        rows = challenge_list(user=request.user, **filters)
        return Response(
            ChallengeOutputSerializer(challenge_summaries(rows, user=request.user), many=True).data
        )

    @extend_schema(
        operation_id="challenges_create",
        tags=["friends"],
        summary="Challenge a player to a private table (pending until accepted, declined or "
        "expired, 10 minutes)",
        parameters=[LOCATION_CREATED, *COMMON_HEADERS],
        request=ChallengeCreateInputSerializer,
        responses={
            201: ChallengeOutputSerializer,
            **problem_responses(403, 404, 409, request_body=True, descriptions=BAD_CHALLENGE),
        },
    )
    def post(self, request: Request) -> Response:
        data = _body(ChallengeCreateInputSerializer, request)
        challenge = challenge_send(challenger=request.user, **data)
        response = _challenge_response(challenge.pk, request.user, status.HTTP_201_CREATED)
        response["Location"] = reverse("games:challenge-detail", args=[challenge.pk])
        return response


class ChallengeDetailApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="challenges_retrieve",
        tags=["friends"],
        summary="One of my challenges",
        parameters=[CHALLENGE_ID, *COMMON_HEADERS],
        responses={200: ChallengeOutputSerializer, **problem_responses(404)},
    )
    def get(self, request: Request, challenge_id: int) -> Response:
        return _challenge_response(challenge_id, request.user)


class ChallengeAcceptApi(APIView):
    required_scope = scopes.PLAY

    @extend_schema(
        operation_id="challenges_accept",
        tags=["friends"],
        summary="Accept a challenge: a private table opens with both of us seated",
        description="The challenger owns the table (seat 0), I sit at seat 1; both seats hold "
        "their stakes as any seat does. `table_id` names the table.",
        parameters=[CHALLENGE_ID, *COMMON_HEADERS],
        request=None,
        responses={
            200: ChallengeOutputSerializer,
            **problem_responses(403, 404, 409, descriptions=BAD_ANSWER),
        },
    )
    def post(self, request: Request, challenge_id: int) -> Response:
        challenge_accept(challenge_id=challenge_id, user=request.user)
        return _challenge_response(challenge_id, request.user)


class ChallengeDeclineApi(APIView):
    required_scope = scopes.PLAY

    @extend_schema(
        operation_id="challenges_decline",
        tags=["friends"],
        summary="Decline a challenge",
        parameters=[CHALLENGE_ID, *COMMON_HEADERS],
        request=None,
        responses={
            200: ChallengeOutputSerializer,
            **problem_responses(403, 404, 409, descriptions=BAD_ANSWER),
        },
    )
    def post(self, request: Request, challenge_id: int) -> Response:
        challenge_decline(challenge_id=challenge_id, user=request.user)
        return _challenge_response(challenge_id, request.user)


class ChallengeCancelApi(APIView):
    required_scope = scopes.PLAY

    @extend_schema(
        operation_id="challenges_cancel",
        tags=["friends"],
        summary="Cancel a challenge I sent, before it is answered",
        description="The challenged player gets a `challenge_cancelled` entry in its feed.",
        parameters=[CHALLENGE_ID, *COMMON_HEADERS],
        request=None,
        responses={
            200: ChallengeOutputSerializer,
            **problem_responses(
                403,
                404,
                409,
                descriptions={
                    403: "`not_challenger` (it was sent to me: decline it instead).",
                    404: "`not_found`: no such challenge of mine.",
                    409: "`challenge_expired`, `challenge_answered` (with `status`).",
                },
            ),
        },
    )
    def post(self, request: Request, challenge_id: int) -> Response:
        challenge_cancel(challenge_id=challenge_id, user=request.user)
        return _challenge_response(challenge_id, request.user)


def _block_body(block: object) -> dict:
    return {
        "user": {"id": block.blocked_id, "username": block.blocked.username},  # type: ignore[attr-defined]
        "created_at": block.created_at,  # type: ignore[attr-defined]
    }


class BlockListApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="me_blocks_list",
        tags=["friends"],
        summary="The players I block, newest first",
        parameters=[*COMMON_HEADERS],
        responses={200: BlockOutputSerializer(many=True), **problem_responses()},
    )
    def get(self, request: Request) -> Response:
        rows = [_block_body(b) for b in block_list(user=request.user)]
        return Response(BlockOutputSerializer(rows, many=True).data)


class BlockDetailApi(APIView):
    required_scope = scopes.PLAY

    @extend_schema(
        operation_id="me_blocks_put",
        tags=["friends"],
        summary="Block a player (idempotent: 201 the first time, 200 after)",
        parameters=[USERNAME, *COMMON_HEADERS],
        request=None,
        responses={
            200: BlockOutputSerializer,
            201: BlockOutputSerializer,
            **problem_responses(
                400, 404, descriptions={400: "`cannot_block_self`.", 404: "No such player."}
            ),
        },
    )
    def put(self, request: Request, username: str) -> Response:
        block, created = block_put(user=request.user, username=username)
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(BlockOutputSerializer(_block_body(block)).data, status=code)

    @extend_schema(
        operation_id="me_blocks_delete",
        tags=["friends"],
        summary="Lift a block (idempotent: 204 whether or not there was one)",
        parameters=[USERNAME, *COMMON_HEADERS],
        request=None,
        responses={204: None, **problem_responses(404)},
    )
    def delete(self, request: Request, username: str) -> Response:
        block_delete(user=request.user, username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)
