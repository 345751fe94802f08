"""Accounts endpoints, mounted at /api/v1/ by chan_api/urls.py."""

from django.urls import path

from accounts.api.views import (
    LedgerHeadApi,
    MeBonusApi,
    MeCoolOffApi,
    MeDetailApi,
    MeLedgerApi,
    MeLimitsApi,
    MeSelfExclusionApi,
    MeTokenListCreateApi,
    MeTokenRevokeApi,
    TokenCheckApi,
    TokenCreateApi,
    TokenListApi,
    TokenLogoutApi,
    TokenRevokeApi,
    UserRegisterApi,
)

urlpatterns = [
    path("auth/register", UserRegisterApi.as_view(), name="auth-register"),
    path("auth/token", TokenCreateApi.as_view(), name="auth-token"),
    path("auth/logout", TokenLogoutApi.as_view(), name="auth-logout"),
    path("auth/check", TokenCheckApi.as_view(), name="auth-check"),
    path("auth/tokens", TokenListApi.as_view(), name="auth-tokens"),
    path("auth/tokens/<int:token_id>", TokenRevokeApi.as_view(), name="auth-token-revoke"),
    path("me", MeDetailApi.as_view(), name="me"),
    path("me/tokens", MeTokenListCreateApi.as_view(), name="me-tokens"),
    path("me/tokens/<int:token_id>", MeTokenRevokeApi.as_view(), name="me-token-revoke"),
    path("me/bonus", MeBonusApi.as_view(), name="me-bonus"),
    path("me/ledger", MeLedgerApi.as_view(), name="me-ledger"),
    path("me/limits", MeLimitsApi.as_view(), name="me-limits"),
    path("me/cool-off", MeCoolOffApi.as_view(), name="me-cool-off"),
    path("me/self-exclusion", MeSelfExclusionApi.as_view(), name="me-self-exclusion"),
    path("ledger/head", LedgerHeadApi.as_view(), name="ledger-head"),
]
