"""Fixtures shared by the whole suite.

The settings see pytest (``PYTEST_VERSION``) and give the suite a test-only ``SECRET_KEY`` and
fixed decks; pytest-django keeps ``DEBUG`` off, as in production.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> None:
    """The hand log refuses TRUNCATE unless ``chan.allow_log_truncate`` is on (migration games
    0004); Django empties the test database with TRUNCATE after each transactional test, so that
    test database, and it alone, turns it on."""
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        name = connection.ops.quote_name(connection.settings_dict["NAME"])
        cursor.execute(f"ALTER DATABASE {name} SET chan.allow_log_truncate = 'on'")
        cursor.execute("SET chan.allow_log_truncate = 'on'")  # this connection is already open


@pytest.fixture(autouse=True)
def _default_rooms(request: pytest.FixtureRequest) -> None:
    """The rooms are seeded by a migration; a transactional test empties every table after it,
    so each database test puts back the missing ones."""
    if request.node.get_closest_marker("django_db") is None and not {
        "db",
        "transactional_db",
        "live_server",
    } & set(request.fixturenames):
        return
    from games.services.rooms import rooms_seed

    rooms_seed()


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def make_user(db: None) -> Callable[..., tuple[Any, str]]:
    """Factory: ``user, token = make_user(username=..., password=..., **fields)``.

    The token is the plaintext bearer token. Without a password the user has an unusable one
    (no slow hashing); pass ``password=`` to log in with it.
    """
    from accounts.ledger import welcome_grant_book
    from accounts.models import User
    from accounts.services import token_create

    counter = itertools.count(1)

    def factory(
        username: str | None = None, password: str | None = None, **fields: Any
    ) -> tuple[User, str]:
        name = username or f"player{next(counter)}"
        user = User.objects.create_user(username=name, password=password, **fields)
        welcome_grant_book(user=user)  # as registration does: every player starts with Quan
        _, raw = token_create(user=user)
        return user, raw

    return factory
