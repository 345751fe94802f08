"""Services that write users and tokens."""

from __future__ import annotations

import pytest

from accounts.models import ApiToken, User
from accounts.services import (
    token_create,
    token_mark_used,
    token_revoke,
    user_authenticate,
    user_password_set,
    user_register,
)
from core.errors import Conflict, DomainError, InvalidInput, NotAuthenticated, NotFound

pytestmark = pytest.mark.django_db

STRONG = "tam-van-cuu-sach-42"


def test_user_register_stores_a_hashed_password():
    user = user_register(username="lan", password=STRONG, display_name="Lan")
    user.refresh_from_db()
    assert user.display_name == "Lan"
    assert user.password != STRONG
    assert user.check_password(STRONG)


def test_user_register_reports_every_invalid_field_at_once():
    with pytest.raises(DomainError) as caught:
        user_register(username="bad name", password="123")
    assert isinstance(caught.value, InvalidInput)
    assert caught.value.code == "invalid"
    assert set(caught.value.errors) == {"username", "password"}


def test_user_register_refuses_a_taken_name_in_any_case():
    user_register(username="Lan", password=STRONG)
    with pytest.raises(DomainError) as caught:
        user_register(username="lAN", password=STRONG)
    assert (type(caught.value), caught.value.code) == (Conflict, "username_taken")


def test_the_database_refuses_usernames_differing_only_in_case():
    from django.db import IntegrityError, transaction

    User.objects.create_user(username="lan")
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create_user(username="LAN")


def test_user_authenticate(rf):
    user = user_register(username="lan", password=STRONG)
    request = rf.post("/api/v1/auth/token")
    assert user_authenticate(username="lan", password=STRONG, request=request) == user
    assert User.objects.get(pk=user.pk).last_login is not None
    with pytest.raises(DomainError) as caught:
        user_authenticate(username="lan", password="nope", request=rf.post("/api/v1/auth/token"))
    assert (type(caught.value), caught.value.code) == (NotAuthenticated, "invalid_credentials")


def test_token_create_stores_only_a_hash_of_the_plaintext():
    user = User.objects.create_user(username="lan")
    token, raw = token_create(user=user, name="phone")
    row = ApiToken.objects.filter(pk=token.pk).values().get()
    assert raw not in {str(value) for value in row.values()}
    assert row["key_hash"] == ApiToken.hash_key(raw)
    assert len(row["key_hash"]) == 64
    assert row["key_prefix"] == raw[:8]
    assert len(raw) >= 40


def test_token_create_gives_different_tokens_each_time():
    user = User.objects.create_user(username="lan")
    raws = {token_create(user=user)[1] for _ in range(20)}
    assert len(raws) == 20


def test_token_revoke_is_idempotent_and_keeps_the_first_time():
    user = User.objects.create_user(username="lan")
    token, _ = token_create(user=user)
    first = token_revoke(user=user, token_id=token.pk).revoked_at
    assert first is not None
    assert token_revoke(user=user, token_id=token.pk).revoked_at == first


def test_token_revoke_of_another_users_token_is_404():
    owner = User.objects.create_user(username="owner")
    other = User.objects.create_user(username="other")
    token, _ = token_create(user=owner)
    with pytest.raises(DomainError) as caught:
        token_revoke(user=other, token_id=token.pk)
    assert isinstance(caught.value, NotFound)
    token.refresh_from_db()
    assert token.revoked_at is None


def test_token_mark_used_writes_at_most_once_a_minute(django_assert_num_queries):
    from datetime import timedelta

    user = User.objects.create_user(username="lan")
    token, _ = token_create(user=user)
    with django_assert_num_queries(1):
        token_mark_used(token=token)
    stamped = token.last_used_at
    with django_assert_num_queries(0):
        token_mark_used(token=token)
    assert ApiToken.objects.get(pk=token.pk).last_used_at == stamped

    token.last_used_at = stamped - timedelta(minutes=2)
    with django_assert_num_queries(1):
        token_mark_used(token=token)
    assert token.last_used_at > stamped


def test_user_password_set_validates():
    user = User.objects.create_user(username="lan")
    with pytest.raises(DomainError):
        user_password_set(user=user, password="password")
    user_password_set(user=user, password=STRONG)
    assert User.objects.get(pk=user.pk).check_password(STRONG)
