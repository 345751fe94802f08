"""Parameters bound by the server and statements prepared (core/db_backend, the settings'
``server_side_binding`` and ``prepare_threshold``), with the two ways back to client-side
binding that libraries need: ``mogrify`` and ``client_side_binding``."""

from __future__ import annotations

import psycopg
import pytest
from django.db import DatabaseError, connection

from core.db_backend.base import ServerBindingCursor

pytestmark = pytest.mark.django_db

TWO_STATEMENTS = "SELECT set_config('chan.test_binding', %s, true); SELECT %s::int + 1"


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_parameters_are_bound_by_the_server() -> None:
    with connection.cursor() as cursor:
        assert isinstance(cursor.cursor, ServerBindingCursor)
        cursor.execute("SELECT %s::int + 1", [41])
        assert cursor.fetchone() == (42,)
        # The server saw a placeholder, not the value quoted into the text.
        assert b"$1" in cursor.cursor._query.query


def test_a_statement_run_more_than_the_threshold_is_prepared() -> None:
    assert connection.connection.prepare_threshold == 5
    sql = "SELECT %s::int * 2 AS chan_test_prepared"
    for n in range(4):
        with connection.cursor() as cursor:
            cursor.execute(sql, [n])
    assert not any("chan_test_prepared" in s for s in prepared_statements())
    for n in range(3):
        with connection.cursor() as cursor:
            cursor.execute(sql, [n])
            assert cursor.fetchone() == (2 * n,)
    assert any("chan_test_prepared" in s for s in prepared_statements())


def test_mogrify_merges_the_parameters_as_a_client_side_cursor_would() -> None:
    with connection.cursor() as cursor:
        merged = cursor.mogrify("SELECT %s, %s", ["it's", 7])
    assert merged == psycopg.ClientCursor(connection.connection).mogrify(
        "SELECT %s, %s", ["it's", 7]
    )
    assert merged == "SELECT 'it''s', 7"


def test_several_statements_with_parameters_need_client_side_binding() -> None:
    with pytest.raises(DatabaseError, match="multiple commands"), connection.cursor() as cursor:
        cursor.execute(TWO_STATEMENTS, ["x", 1])


@pytest.mark.django_db(transaction=True)
def test_client_side_binding_runs_them_and_puts_the_server_binding_back() -> None:
    with connection.client_side_binding(), connection.cursor() as cursor:
        cursor.execute(TWO_STATEMENTS, ["x", 1])
        cursor.nextset()
        assert cursor.fetchone() == (2,)
    with pytest.raises(RuntimeError), connection.client_side_binding():
        raise RuntimeError("the block failed")
    with connection.cursor() as cursor:
        assert isinstance(cursor.cursor, ServerBindingCursor)
