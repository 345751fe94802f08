"""The auditors' integrity API: the flags the integrity scan raised (games/integrity/), read
through the API as in the admin's review queue (docs/audit.md § Integrity signals). Reviews
(clear, freeze, ban) are staff's, in the admin."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import scopes
from chan_api.schema import COMMON_HEADERS
from games.api.integrity_serializers import (
    IntegrityFlagDetailSerializer,
    IntegrityFlagPageSerializer,
    IntegrityFlagQuerySerializer,
)
from games.api.schema import problem_responses
from games.selectors.integrity import integrity_flag_detail, integrity_flag_page

AUDITORS_403 = {403: "`auditors_only`: the flags are for auditors (`audit:read` through a token)."}


class IntegrityFlagListApi(APIView):
    required_scope = scopes.AUDIT_READ

    @extend_schema(
        operation_id="integrity_flags_list",
        tags=["audit"],
        summary="Integrity flags, newest first (auditors)",
        description="What the nightly integrity scan flagged (docs/audit.md): the signal, the "
        "players, the statistic against its threshold, the evidence hands, the review status. "
        "Filter by `status` and `signal`; page with `cursor`.",
        parameters=[*COMMON_HEADERS, IntegrityFlagQuerySerializer],
        responses={
            200: IntegrityFlagPageSerializer,
            **problem_responses(400, 403, descriptions=AUDITORS_403),
        },
    )
    def get(self, request: Request) -> Response:
        query = IntegrityFlagQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = integrity_flag_page(user=request.user, **query.validated_data)
        return Response(IntegrityFlagPageSerializer(page).data)


class IntegrityFlagDetailApi(APIView):
    required_scope = scopes.AUDIT_READ

    @extend_schema(
        operation_id="integrity_flags_retrieve",
        tags=["audit"],
        summary="One integrity flag and its review history (auditors)",
        parameters=[
            *COMMON_HEADERS,
            OpenApiParameter("flag_id", OpenApiTypes.INT, OpenApiParameter.PATH),
        ],
        responses={
            200: IntegrityFlagDetailSerializer,
            **problem_responses(403, 404, descriptions=AUDITORS_403),
        },
    )
    def get(self, request: Request, flag_id: int) -> Response:
        flag = integrity_flag_detail(user=request.user, flag_id=flag_id)
        return Response(IntegrityFlagDetailSerializer(flag).data)
