"""BearerTokenAuthentication on its own, with a bare request."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from accounts.authentication import BearerTokenAuthentication
from accounts.models import ApiToken, User
from accounts.services import token_create

pytestmark = pytest.mark.django_db


def request_with(header: str | None) -> Request:
    extra = {} if header is None else {"HTTP_AUTHORIZATION": header}
    return Request(APIRequestFactory().get("/", **extra))


def test_no_header_is_anonymous():
    assert BearerTokenAuthentication().authenticate(request_with(None)) is None


def test_a_live_token_authenticates_and_stamps_last_used():
    user = User.objects.create_user(username="lan")
    token, raw = token_create(user=user)
    assert BearerTokenAuthentication().authenticate(request_with(f"Bearer {raw}")) == (user, token)
    assert ApiToken.objects.get(pk=token.pk).last_used_at is not None


def test_last_used_is_not_rewritten_within_a_minute(django_assert_num_queries):
    user = User.objects.create_user(username="lan")
    token, raw = token_create(user=user)
    auth = BearerTokenAuthentication()
    auth.authenticate(request_with(f"Bearer {raw}"))
    with django_assert_num_queries(1):  # the lookup only
        auth.authenticate(request_with(f"Bearer {raw}"))
    ApiToken.objects.filter(pk=token.pk).update(
        last_used_at=token.created_at - timedelta(minutes=5)
    )
    with django_assert_num_queries(2):  # lookup and stamp
        auth.authenticate(request_with(f"Bearer {raw}"))


@pytest.mark.parametrize(
    "header", ["Bearer", "Bearer x y", "Basic abc", "Bearer ???????????????????"]
)
def test_malformed_headers_fail(header):
    with pytest.raises(AuthenticationFailed):
        BearerTokenAuthentication().authenticate(request_with(header))


def test_the_challenge_is_bearer():
    assert (
        BearerTokenAuthentication().authenticate_header(request_with(None)) == 'Bearer realm="api"'
    )
