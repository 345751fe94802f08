"""The in-process memory of tokens (accounts/token_cache.py): a bot's requests read its token
once every few seconds, and a revoke or a ban is seen at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from accounts import token_cache
from accounts.authentication import BearerTokenAuthentication
from accounts.models import ApiToken, User
from accounts.services import token_create, token_revoke, user_ban

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def remembered(settings) -> Iterator[None]:
    settings.CHAN_TOKEN_CACHE_SECONDS = 60
    token_cache.token_cache_clear()
    yield
    token_cache.token_cache_clear()


def auth(raw: str):
    request = Request(APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"Bearer {raw}"))
    return BearerTokenAuthentication().authenticate(request)


def test_a_remembered_token_reads_nothing(django_assert_num_queries) -> None:
    user = User.objects.create_user(username="lan")
    token, raw = token_create(user=user)
    auth(raw)  # looked up (and its use stamped)
    with django_assert_num_queries(0):
        found_user, found_token = auth(raw)
    assert (found_user, found_token) == (user, token)
    assert found_user.token_scopes == frozenset(token.scopes)


def test_each_hit_is_a_copy_of_its_own() -> None:
    user = User.objects.create_user(username="lan")
    _, raw = token_create(user=user)
    first, _ = auth(raw)
    first.username = "changed by a request"
    second, _ = auth(raw)
    assert second.username == "lan" and second is not first


def test_a_hits_copies_are_what_copy_copy_makes() -> None:
    import copy

    user = User.objects.create_user(username="lan")
    token, _raw = token_create(user=user)
    token = ApiToken.objects.select_related("user").get(pk=token.pk)
    for row in (token, token.user):
        mine, theirs = token_cache._copied(row), copy.copy(row)
        assert type(mine) is type(theirs)
        # (copy.copy goes through pickling, which leaves the Django version on the copy)
        skip = {"_state", "_django_version"}
        assert {k: v for k, v in vars(mine).items() if k not in skip} == {
            k: v for k, v in vars(theirs).items() if k not in skip
        }
        assert vars(mine._state) == vars(theirs._state)
        # its own state and fields cache: caching a relation on the copy leaves the row alone
        assert mine._state is not row._state
        assert mine._state.fields_cache is not row._state.fields_cache
    copied = token_cache._copied(token)
    copied.user = User(username="other")
    assert token.user.username == "lan"


def test_a_revoked_token_is_refused_at_once(django_assert_num_queries) -> None:
    user = User.objects.create_user(username="lan")
    token, raw = token_create(user=user)
    auth(raw)
    token_revoke(user=user, token_id=token.pk)
    with pytest.raises(AuthenticationFailed):
        auth(raw)


def test_a_banned_players_tokens_are_refused_at_once(
    make_user, django_capture_on_commit_callbacks
) -> None:
    staff, _ = make_user(is_staff=True)
    user = User.objects.create_user(username="lan")
    _, raw = token_create(user=user)
    auth(raw)
    with django_capture_on_commit_callbacks(execute=True):
        user_ban(user_id=user.pk, staff=staff, reason="cheating")
    with pytest.raises(AuthenticationFailed):
        auth(raw)


def test_an_expired_token_is_refused_though_remembered() -> None:
    user = User.objects.create_user(username="lan")
    token, raw = token_create(user=user)
    auth(raw)
    key = ApiToken.hash_key(raw)
    _, _, kept = token_cache._entries[key]
    kept.expires_at = timezone.now() - timedelta(seconds=1)  # as if it had lapsed since
    ApiToken.objects.filter(pk=token.pk).update(expires_at=kept.expires_at)
    with pytest.raises(AuthenticationFailed):
        auth(raw)


def test_the_memory_lasts_its_seconds_only(settings, monkeypatch) -> None:
    user = User.objects.create_user(username="lan")
    token, raw = token_create(user=user)
    auth(raw)
    # Revoked behind this process's back (another process, or SQL): seen once the entry lapses.
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    assert auth(raw) is not None  # still remembered
    now = token_cache.time.monotonic()
    monkeypatch.setattr(token_cache.time, "monotonic", lambda: now + 61)
    with pytest.raises(AuthenticationFailed):
        auth(raw)


def test_off_when_its_seconds_are_zero(settings, django_assert_num_queries) -> None:
    settings.CHAN_TOKEN_CACHE_SECONDS = 0
    user = User.objects.create_user(username="lan")
    _, raw = token_create(user=user)
    auth(raw)
    with django_assert_num_queries(1):
        auth(raw)
