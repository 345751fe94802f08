"""Fixtures shared by the whole suite."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def make_user(db: None) -> Callable[..., tuple[Any, str]]:
    """Factory: ``user, token = make_user(username=..., password=..., **fields)``.

    The token is the plaintext bearer token. Without a password the user has an unusable one
    (no slow hashing); pass ``password=`` to log in with it.
    """
    from accounts.models import User
    from accounts.services import token_create

    counter = itertools.count(1)

    def factory(
        username: str | None = None, password: str | None = None, **fields: Any
    ) -> tuple[User, str]:
        name = username or f"player{next(counter)}"
        user = User.objects.create_user(username=name, password=password, **fields)
        _, raw = token_create(user=user)
        return user, raw

    return factory
