"""The transparency log's API (docs/api.md, docs/audit.md): for any signed-in user, what a
monitor needs to hold the server to the heads it signed."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import scopes
from chan_api.schema import COMMON_HEADERS
from games.api.schema import problem_responses
from transparency.api.serializers import (
    ConsistencyProofSerializer,
    ConsistencyQuerySerializer,
    InclusionProofSerializer,
    InclusionQuerySerializer,
    LogKeySerializer,
    TreeHeadSerializer,
)
from transparency.selectors import (
    log_consistency,
    log_inclusion,
    log_key_data,
    tree_head_data,
    tree_head_latest,
)

EMPTY_404 = {404: "`log_empty`: no head has been signed yet."}
BAD_SIZE = {
    400: "`invalid` (`errors` name the query parameter: missing, not digits, out of range, "
    "`first` above `second`, `leaf` not 64 lowercase hex digits) or `size_out_of_range` (a "
    "size above the log's)."
}


class LogHeadApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="log_head",
        tags=["log"],
        summary="The transparency log's latest signed tree head",
        description="docs/audit.md says how to check it and hold later heads to it.",
        parameters=COMMON_HEADERS,
        responses={200: TreeHeadSerializer, **problem_responses(404, descriptions=EMPTY_404)},
    )
    def get(self, request: Request) -> Response:
        return Response(TreeHeadSerializer(tree_head_data(tree_head_latest())).data)


class LogKeyApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="log_key",
        tags=["log"],
        summary="The public key of the latest signed tree head",
        parameters=COMMON_HEADERS,
        responses={200: LogKeySerializer, **problem_responses(404, descriptions=EMPTY_404)},
    )
    def get(self, request: Request) -> Response:
        return Response(LogKeySerializer(log_key_data()).data)


class LogConsistencyApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="log_consistency",
        tags=["log"],
        summary="The proof that the log of `first` leaves is a prefix of the log of `second`",
        parameters=[*COMMON_HEADERS, ConsistencyQuerySerializer],
        responses={
            200: ConsistencyProofSerializer,
            **problem_responses(400, descriptions=BAD_SIZE),
        },
    )
    def get(self, request: Request) -> Response:
        query = ConsistencyQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(ConsistencyProofSerializer(log_consistency(**query.validated_data)).data)


class LogInclusionApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="log_inclusion",
        tags=["log"],
        summary="The proof that a leaf is in the log of `size` leaves",
        parameters=[*COMMON_HEADERS, InclusionQuerySerializer],
        responses={
            200: InclusionProofSerializer,
            **problem_responses(
                400,
                404,
                descriptions={
                    **BAD_SIZE,
                    404: "`leaf_not_found`: no such leaf among the first `size`.",
                },
            ),
        },
    )
    def get(self, request: Request) -> Response:
        query = InclusionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(InclusionProofSerializer(log_inclusion(**query.validated_data)).data)
