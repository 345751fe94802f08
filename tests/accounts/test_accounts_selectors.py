"""Selectors that read users and tokens."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from accounts.ledger import welcome_grant_book
from accounts.models import User
from accounts.selectors import token_list, user_balance, user_by_token, user_profile
from accounts.services import token_create, token_revoke

pytestmark = pytest.mark.django_db


def test_user_by_token_finds_the_owner():
    user = User.objects.create_user(username="lan")
    token, raw = token_create(user=user)
    assert user_by_token(raw) == (user, token)


def test_user_by_token_ignores_revoked_and_wrong_tokens():
    user = User.objects.create_user(username="lan")
    token, raw = token_create(user=user)
    assert user_by_token(raw[:-1] + ("A" if raw[-1] != "A" else "B")) is None
    assert user_by_token(raw[:8]) is None
    assert user_by_token("") is None
    token_revoke(user=user, token_id=token.pk)
    assert user_by_token(raw) is None


def test_user_by_token_ignores_inactive_users():
    user = User.objects.create_user(username="lan", is_active=False)
    _, raw = token_create(user=user)
    assert user_by_token(raw) is None


def test_user_by_token_tells_apart_tokens_sharing_a_prefix():
    from accounts.models import ApiToken

    first = User.objects.create_user(username="first")
    second = User.objects.create_user(username="second")
    raw_first = "samepfx_" + "a" * 35
    raw_second = "samepfx_" + "b" * 35
    for user, raw in ((first, raw_first), (second, raw_second)):
        ApiToken.objects.create(user=user, key_prefix=raw[:8], key_hash=ApiToken.hash_key(raw))
    assert user_by_token(raw_first)[0] == first
    assert user_by_token(raw_second)[0] == second


def test_token_list_is_own_tokens_newest_first():
    user = User.objects.create_user(username="lan")
    other = User.objects.create_user(username="other")
    older, _ = token_create(user=user, name="older")
    newer, _ = token_create(user=user, name="newer")
    token_create(user=other)
    assert list(token_list(user=user)) == [newer, older]


def test_user_balance_is_zero_without_a_wallet_and_the_wallet_balance_with_one():
    user = User.objects.create_user(username="lan")
    assert user_balance(user) == 0
    welcome_grant_book(user=user)
    assert user_balance(user) == 50_000


def test_user_profile_marks_auditors_by_permission_not_name():
    auditor = User.objects.create_user(username="someone")
    auditor.user_permissions.add(Permission.objects.get(codename="audit_hands"))
    named = User.objects.create_user(username="auditor")
    assert user_profile(user=User.objects.get(pk=auditor.pk)).is_auditor is True
    assert user_profile(user=named).is_auditor is False
    superuser = User.objects.create_superuser(username="root")
    assert user_profile(user=superuser).is_auditor is True
