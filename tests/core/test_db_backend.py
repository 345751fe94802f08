"""The database backend's health check (core/db_backend): a kept connection is checked by its
socket, not by a ``SELECT 1``; one whose server side went away is replaced before it is used."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection, connections

from core.db_backend.base import connection_looks_usable
from tests.db_owner import owner_connect_params

pytestmark = pytest.mark.django_db(transaction=True)


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def terminate(pid: int) -> None:
    """End that server process from outside, as a PostgreSQL restart or an operator would."""
    with psycopg.connect(**owner_connect_params(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        for _ in range(100):  # until it is gone
            row = admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
            if row is None:
                return
            time.sleep(0.02)


def next_request() -> None:
    """What Django does between two requests on a kept connection (``close_old_connections``)."""
    connection.close_if_unusable_or_obsolete()


def test_the_backend_is_the_projects() -> None:
    assert type(connections["default"]).__module__ == "core.db_backend.base"
    assert connection.settings_dict["CONN_HEALTH_CHECKS"] is True


def test_a_healthy_kept_connection_is_used_again_without_a_query(monkeypatch) -> None:
    pid = backend_pid()
    next_request()

    def no_round_trip() -> bool:
        raise AssertionError("the health check sent SELECT 1")

    monkeypatch.setattr(connection, "is_usable", no_round_trip)
    assert connection_looks_usable(connection.connection)
    assert backend_pid() == pid  # the same server process: checked, kept, not replaced


def test_a_connection_whose_server_process_ended_is_replaced_before_the_request_uses_it() -> None:
    pid = backend_pid()
    next_request()
    terminate(pid)
    deadline = time.monotonic() + 5
    while connection_looks_usable(connection.connection) and time.monotonic() < deadline:
        time.sleep(0.02)  # the server's notice and the end of the stream reach the socket
    assert not connection_looks_usable(connection.connection)
    # The request's first query runs on a new connection instead of failing.
    assert backend_pid() != pid


def test_a_connection_in_a_transaction_or_closed_is_not_taken_as_idle() -> None:
    backend_pid()
    raw = connection.connection
    raw.execute("BEGIN")
    try:
        assert not connection_looks_usable(raw)
    finally:
        raw.execute("ROLLBACK")
    assert connection_looks_usable(raw)
    connection.close()
    assert not connection_looks_usable(raw)


def _sample(name: str, **labels: str) -> float:
    from prometheus_client import REGISTRY

    return (
        REGISTRY.get_sample_value(name, {"alias": "default", "vendor": "postgresql", **labels})
        or 0.0
    )


def test_statements_are_counted_in_django_prometheus_series() -> None:
    """core.db_backend.counted_cursor counts what django-prometheus's wrapper counts: each
    statement, its duration, each executemany's rows, and a failed statement by its type."""
    before = {
        "exec": _sample("django_db_execute_total"),
        "many": _sample("django_db_execute_many_total"),
        "timed": _sample("django_db_query_duration_seconds_count"),
        "errors": _sample("django_db_errors_total", type="UndefinedTable"),
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.executemany("SELECT %s", [(1,), (2,), (3,)])
        with pytest.raises(Exception, match="no_such_table"):
            cursor.execute("SELECT * FROM no_such_table")
    assert _sample("django_db_execute_total") - before["exec"] == 5
    assert _sample("django_db_execute_many_total") - before["many"] == 3
    assert _sample("django_db_query_duration_seconds_count") - before["timed"] == 3
    assert _sample("django_db_errors_total", type="UndefinedTable") - before["errors"] == 1


def test_client_side_binding_cursors_are_counted_too() -> None:
    before = _sample("django_db_execute_total")
    with connection.client_side_binding(), connection.cursor() as cursor:
        cursor.execute("SELECT 1; SELECT 2")
    assert _sample("django_db_execute_total") - before == 1
