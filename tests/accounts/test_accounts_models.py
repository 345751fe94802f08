"""Database constraints on users and tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction

from accounts.models import ApiToken, User
from accounts.services import token_create

pytestmark = pytest.mark.django_db


def test_a_username_is_not_empty_nor_a_look_alike() -> None:
    User.objects.create(username="lan")
    for username in ("", "LAN"):
        with pytest.raises(IntegrityError), transaction.atomic():
            User.objects.create(username=username)


def test_a_level_starts_at_1() -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create(username="lan", level=0)


@pytest.mark.parametrize(
    "fields",
    [
        {"key_prefix": "abc"},
        {"key_prefix": "abcdefg!"},
        {"key_prefix": "abcdefg="},
        {"key_hash": "a" * 63},
        {"key_hash": "A" * 64},
        {"key_hash": "g" * 64},
    ],
)
def test_token_constraints(fields) -> None:
    user = User.objects.create(username="lan")
    values = {"user": user, "key_prefix": "Ab-_0123", "key_hash": "0123456789abcdef" * 4}
    with pytest.raises(IntegrityError), transaction.atomic():
        ApiToken.objects.create(**{**values, **fields})
    ApiToken.objects.create(**values)


def test_a_token_is_revoked_after_it_was_created() -> None:
    token, _ = token_create(user=User.objects.create(username="lan"))
    with pytest.raises(IntegrityError), transaction.atomic():
        ApiToken.objects.filter(pk=token.pk).update(
            revoked_at=token.created_at - timedelta(seconds=1)
        )
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=token.created_at)


def test_issued_tokens_pass_the_constraints() -> None:
    user = User.objects.create(username="lan")
    for _ in range(50):  # random URL-safe prefixes
        token_create(user=user)
    assert ApiToken.objects.filter(user=user).count() == 50
