"""Thin views: parse with an input serializer, call services/selectors, render an output."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import scopes
from accounts.api.schema import (
    ACCOUNT_LOCKED,
    BAD_CREDENTIALS,
    SIGNUP_LIMIT,
    BonusAlreadyClaimedSerializer,
    problem_responses,
)
from accounts.api.serializers import (
    BonusOutputSerializer,
    CoolOffInputSerializer,
    ExclusionOutputSerializer,
    LedgerHeadOutputSerializer,
    LedgerPageOutputSerializer,
    LedgerQuerySerializer,
    LimitsInputSerializer,
    LimitsOutputSerializer,
    MeTokenCreatedOutputSerializer,
    MeTokenCreateInputSerializer,
    ProfileOutputSerializer,
    RegisterInputSerializer,
    SelfExclusionInputSerializer,
    TokenCheckOutputSerializer,
    TokenCreateInputSerializer,
    TokenIssuedOutputSerializer,
    TokenOutputSerializer,
)
from accounts.api.throttles import AuthRateThrottle
from accounts.ledger import bonus_claim, next_bonus_at
from accounts.ledger_selectors import ledger_head, ledger_page, wallet_balance
from accounts.limit_selectors import limits_view
from accounts.limits import cool_off_start, limits_set, self_exclusion_start
from accounts.models import ApiToken, PlayerExclusion, User
from accounts.selectors import token_list, user_profile
from accounts.services import (
    oauth_token_revoke,
    token_create,
    token_revoke,
    user_authenticate,
    user_register,
)
from chan_api.schema import COMMON_HEADERS
from chan_api.throttles import client_address
from transparency.selectors import ledger_log_proofs


def _issued(user: User, token: ApiToken, raw: str) -> Response:
    body = {"token": raw, "token_id": token.pk, "user": user_profile(user=user)}
    return Response(TokenIssuedOutputSerializer(body).data, status=status.HTTP_201_CREATED)


class UserRegisterApi(APIView):
    """Open to anyone. Authenticates by the body, so a stale bearer header does not matter."""

    required_scope = scopes.PUBLIC
    authentication_classes = ()
    permission_classes = (AllowAny,)
    throttle_classes = (AuthRateThrottle,)

    @extend_schema(
        operation_id="auth_register",
        tags=["auth"],
        summary="Create an account and its first token",
        parameters=COMMON_HEADERS,
        request=RegisterInputSerializer,
        responses={
            201: TokenIssuedOutputSerializer,
            **problem_responses(
                409,
                authenticated=False,
                request_body=True,
                descriptions={429: SIGNUP_LIMIT},
            ),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = RegisterInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():
            user = user_register(**serializer.validated_data, address=client_address(request))
            token, raw = token_create(user=user, name="registration")
        return _issued(user, token, raw)


class TokenCreateApi(APIView):
    """Log in: trade a username and password for a new token."""

    required_scope = scopes.PUBLIC
    authentication_classes = ()
    permission_classes = (AllowAny,)
    throttle_classes = (AuthRateThrottle,)

    @extend_schema(
        operation_id="auth_token_create",
        tags=["auth"],
        summary="Log in and get a new token",
        parameters=COMMON_HEADERS,
        request=TokenCreateInputSerializer,
        responses={
            201: TokenIssuedOutputSerializer,
            **problem_responses(
                401,
                authenticated=False,
                request_body=True,
                descriptions={**BAD_CREDENTIALS, 429: ACCOUNT_LOCKED},
            ),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = TokenCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        # Outside a transaction: a refused login's count in the lockout must stay.
        user = user_authenticate(
            username=data["username"], password=data["password"], request=request._request
        )
        token, raw = token_create(user=user, name=data.get("name", ""), scopes=data.get("scopes"))
        return _issued(user, token, raw)


class TokenLogoutApi(APIView):
    """Revoke the token this request was made with."""

    required_scope = scopes.ANY

    @extend_schema(
        operation_id="auth_logout",
        tags=["auth"],
        summary="Log out (revoke the current token)",
        parameters=COMMON_HEADERS,
        request=None,
        responses={204: None, **problem_responses()},
    )
    def post(self, request: Request) -> Response:
        if isinstance(request.auth, ApiToken):
            token_revoke(user=request.user, token_id=request.auth.pk)
        else:  # an OAuth access token: it and its refresh token end
            oauth_token_revoke(access=request.auth)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenCheckApi(APIView):
    """The cheapest authenticated request: the token lookup is its only query."""

    required_scope = scopes.ANY

    @extend_schema(
        operation_id="auth_check",
        tags=["auth"],
        summary="Check my token; read the server's clock (to align with hand deadlines)",
        parameters=COMMON_HEADERS,
        responses={200: TokenCheckOutputSerializer, **problem_responses()},
    )
    def get(self, request: Request) -> Response:
        body = {
            "user_id": request.user.pk,
            "username": request.user.username,
            "now": timezone.now(),
        }
        return Response(TokenCheckOutputSerializer(body).data)


class TokenListApi(APIView):
    required_scope = scopes.TOKENS

    @extend_schema(
        operation_id="auth_tokens_list",
        tags=["auth"],
        summary="List my tokens (newest first, at most 100)",
        parameters=COMMON_HEADERS,
        responses={200: TokenOutputSerializer(many=True), **problem_responses()},
    )
    def get(self, request: Request) -> Response:
        tokens = token_list(user=request.user)
        return Response(TokenOutputSerializer(tokens, many=True).data)


class TokenRevokeApi(APIView):
    required_scope = scopes.TOKENS

    @extend_schema(
        operation_id="auth_tokens_revoke",
        tags=["auth"],
        summary="Revoke one of my tokens",
        parameters=COMMON_HEADERS,
        responses={204: None, **problem_responses(404)},
    )
    def delete(self, request: Request, token_id: int) -> Response:
        token_revoke(user=request.user, token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeTokenListCreateApi(APIView):
    """My personal tokens: list them, or mint one with chosen scopes (its secret shown once)."""

    required_scope = scopes.TOKENS

    @extend_schema(
        operation_id="me_tokens_list",
        tags=["me"],
        summary="List my personal tokens (newest first, at most 100)",
        parameters=COMMON_HEADERS,
        responses={200: TokenOutputSerializer(many=True), **problem_responses()},
    )
    def get(self, request: Request) -> Response:
        return Response(TokenOutputSerializer(token_list(user=request.user), many=True).data)

    @extend_schema(
        operation_id="me_tokens_create",
        tags=["me"],
        summary="Create a personal token with the scopes I choose (the secret is shown once)",
        parameters=COMMON_HEADERS,
        request=MeTokenCreateInputSerializer,
        responses={
            201: MeTokenCreatedOutputSerializer,
            **problem_responses(request_body=True),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = MeTokenCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        token, raw = token_create(
            user=request.user,
            name=data.get("name", ""),
            scopes=data["scopes"],
            expires_in=data.get("expires_in"),
            granted_by=request.user.token_scopes,
            expires_by=getattr(request.auth, "expires_at", None),
        )
        # MeTokenCreatedOutputSerializer's shape: the token as listed, plus its secret this once.
        body = {**TokenOutputSerializer(token).data, "token": raw}
        return Response(body, status=status.HTTP_201_CREATED)


class MeTokenRevokeApi(APIView):
    required_scope = scopes.TOKENS

    @extend_schema(
        operation_id="me_tokens_revoke",
        tags=["me"],
        summary="Revoke one of my personal tokens",
        parameters=COMMON_HEADERS,
        responses={204: None, **problem_responses(404)},
    )
    def delete(self, request: Request, token_id: int) -> Response:
        token_revoke(user=request.user, token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeDetailApi(APIView):
    required_scope = scopes.READ

    @extend_schema(
        operation_id="me_retrieve",
        tags=["me"],
        summary="My profile",
        parameters=COMMON_HEADERS,
        responses={200: ProfileOutputSerializer, **problem_responses()},
    )
    def get(self, request: Request) -> Response:
        return Response(ProfileOutputSerializer(user_profile(user=request.user)).data)


@dataclass(frozen=True, slots=True)
class BonusClaimed:
    transaction_id: int
    amount: int
    balance: int
    claimed_at: datetime
    next_claim_at: datetime


class MeBonusApi(APIView):
    required_scope = scopes.PLAY

    @extend_schema(
        operation_id="me_bonus_claim",
        tags=["me"],
        summary="Claim today's bonus (once per calendar day in Asia/Ho_Chi_Minh)",
        parameters=COMMON_HEADERS,
        request=None,
        responses={
            201: BonusOutputSerializer,
            **problem_responses(
                409,
                descriptions={
                    409: "`bonus_already_claimed`, with `next_claim_at` (UTC): the bonus "
                    "of this calendar day (Asia/Ho_Chi_Minh) was already booked; "
                    "`cooling_off` or `self_excluded` (with `ends_at`): no bonus during a "
                    "break the player took (docs/api.md, limits)."
                },
                body=BonusAlreadyClaimedSerializer,
            ),
        },
    )
    def post(self, request: Request) -> Response:
        tx = bonus_claim(user=request.user)
        body = BonusClaimed(
            transaction_id=tx.pk,
            amount=tx.entries.get(account__user=request.user).amount,
            balance=wallet_balance(request.user),
            claimed_at=tx.created_at,
            next_claim_at=next_bonus_at(tx.created_at),
        )
        return Response(BonusOutputSerializer(body).data, status=status.HTTP_201_CREATED)


class MeLedgerApi(APIView):
    required_scope = scopes.LEDGER_READ

    @extend_schema(
        operation_id="me_ledger",
        tags=["me"],
        summary="My Quan statement, newest first (cursor pagination)",
        parameters=[LedgerQuerySerializer, *COMMON_HEADERS],
        responses={
            200: LedgerPageOutputSerializer,
            **problem_responses(
                400,
                descriptions={400: "`invalid`: a query parameter is malformed (`errors` name it)."},
            ),
        },
    )
    def get(self, request: Request) -> Response:
        query = LedgerQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        asked = dict(query.validated_data)
        with_proofs = asked.pop("proofs")
        page = ledger_page(user=request.user, **asked)
        head, found = None, {}
        if with_proofs:
            head, proofs = ledger_log_proofs(
                [(e.transaction_id, e.transaction.hash) for e in page.entries]
            )
            found = {e.pk: proof for e, proof in zip(page.entries, proofs, strict=True)}
        body = {"entries": page.entries, "next_cursor": page.next_cursor, "log_head": head}
        return Response(LedgerPageOutputSerializer(body, context={"proofs": found}).data)


class LedgerHeadApi(APIView):
    """The ledger's head for auditors: any signed-in user (the last transaction's id and hash
    and the count are not secret; they let anyone hold the books to what they saw)."""

    required_scope = scopes.LEDGER_READ

    @extend_schema(
        operation_id="ledger_head",
        tags=["me"],
        summary="The Quan ledger's hash chain head (docs/audit.md)",
        parameters=COMMON_HEADERS,
        responses={200: LedgerHeadOutputSerializer, **problem_responses()},
    )
    def get(self, request: Request) -> Response:
        return Response(LedgerHeadOutputSerializer(ledger_head()).data)


# --------------------------------------------------------------------------- self-set limits

LIMITS_400 = {400: "`invalid`: a limit or `days` is malformed or out of range (`errors` name it)."}


def _exclusion_response(exclusion: PlayerExclusion) -> Response:
    body = {
        "kind": exclusion.kind,
        "days": exclusion.days,
        "starts_at": exclusion.starts_at,
        "ends_at": exclusion.ends_at,
        "permanent": exclusion.ends_at is None,
    }
    return Response(ExclusionOutputSerializer(body).data, status=status.HTTP_201_CREATED)


class MeLimitsApi(APIView):
    required_scope = {"GET": scopes.READ, "PUT": scopes.LIMITS}

    @extend_schema(
        operation_id="me_limits_retrieve",
        tags=["me"],
        summary="My limits: loss limits, highest stake, reality check; cool-off, self-exclusion",
        parameters=COMMON_HEADERS,
        responses={200: LimitsOutputSerializer, **problem_responses()},
    )
    def get(self, request: Request) -> Response:
        return Response(LimitsOutputSerializer(limits_view(user=request.user)).data)

    @extend_schema(
        operation_id="me_limits_update",
        tags=["me"],
        summary="Set my limits (lower: at once; raise or remove: 24 hours later, pending)",
        parameters=COMMON_HEADERS,
        request=LimitsInputSerializer,
        responses={
            200: LimitsOutputSerializer,
            **problem_responses(request_body=True, descriptions=LIMITS_400),
        },
    )
    def put(self, request: Request) -> Response:
        serializer = LimitsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        limits_set(user=request.user, changes=serializer.validated_data)
        return Response(LimitsOutputSerializer(limits_view(user=request.user)).data)


class MeCoolOffApi(APIView):
    required_scope = scopes.LIMITS

    @extend_schema(
        operation_id="me_cool_off",
        tags=["me"],
        summary="Take a break of 1 to 42 days, at once (cannot be undone)",
        parameters=COMMON_HEADERS,
        request=CoolOffInputSerializer,
        responses={
            201: ExclusionOutputSerializer,
            **problem_responses(request_body=True, descriptions=LIMITS_400),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = CoolOffInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return _exclusion_response(cool_off_start(user=request.user, **serializer.validated_data))


class MeSelfExclusionApi(APIView):
    required_scope = scopes.LIMITS

    @extend_schema(
        operation_id="me_self_exclusion",
        tags=["me"],
        summary="Exclude myself for 183 days or more (null: permanently), at once",
        parameters=COMMON_HEADERS,
        request=SelfExclusionInputSerializer,
        responses={
            201: ExclusionOutputSerializer,
            **problem_responses(request_body=True, descriptions=LIMITS_400),
        },
    )
    def post(self, request: Request) -> Response:
        serializer = SelfExclusionInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        exclusion = self_exclusion_start(user=request.user, **serializer.validated_data)
        return _exclusion_response(exclusion)
