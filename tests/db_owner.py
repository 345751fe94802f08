"""What only the tables' owner may do, for tests that fake a state the application cannot make.

The suite connects as the application's role (tests/conftest.py), which cannot disable a trigger
or replicate; :func:`as_owner` runs one statement through ``chan_test_as_owner``, a function the
owner made in the test database only, inside the test's own transaction (so it is rolled back
with it). Parameters are bound as literals (``%s`` placeholders).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection
from psycopg import sql


def as_owner(statement: str, params: Sequence[Any] = ()) -> None:
    text = sql.SQL(statement.replace("%s", "{}")).format(*(sql.Literal(p) for p in params))
    with connection.cursor() as cursor:
        cursor.execute("SELECT chan_test_as_owner(%s)", [text.as_string(cursor.connection)])


def owner_connect_params() -> dict[str, Any]:
    """psycopg.connect() keywords for the owner of the test database (a scratch database of
    its own, say)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    return {
        "host": db["HOST"] or "127.0.0.1",
        "port": db["PORT"] or 5432,
        "user": db["USER"],
        "password": db["PASSWORD"] or None,
    }


@contextmanager
def connected_as_owner() -> Iterator[None]:
    """The default connection reopened as the owner for the enclosed code (a migration's own
    steps, say), then as the application again: for transactional tests only (``django_db(
    transaction=True)``), since a transaction cannot change its role halfway."""
    from django.conf import settings

    saved = connection.settings_dict
    connection.close()
    connection.settings_dict = settings.DATABASES["default"]
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict = saved
