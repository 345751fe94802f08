"""PostgreSQL through django-prometheus (queries counted), with a health check without a query.

Django's ``CONN_HEALTH_CHECKS`` runs ``SELECT 1`` on a kept connection before the first query of
each request: a round trip on every request (9 % of a web worker's samples under
bench/load_bench.py). This backend asks the socket instead. A connection whose server went away
(PostgreSQL restarted, the backend terminated, PgBouncer dropped the client) has something to
read — the server's FATAL notice, or the end of the stream — while a healthy idle connection has
nothing: nothing LISTENs on these connections and no query is outstanding between requests. So a
readable socket, or a connection psycopg already knows is broken, is closed and replaced, as
Django's check would; anything else is used as it is. A connection that was silently cut (no
FIN reaches us) fails its request once, as it would have failed Django's ``SELECT 1`` after the
TCP timeout; the request's error closes it (``close_if_unusable_or_obsolete``, unchanged, which
still runs ``SELECT 1`` after an error).
"""

from __future__ import annotations

import select
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property

import psycopg
from django.db.backends.postgresql import base as postgresql
from django.db.backends.postgresql.base import Cursor as ClientBindingCursor
from django.db.backends.postgresql.base import ServerBindingCursor as DjangoServerBindingCursor
from django_prometheus.db.backends.postgresql.base import DatabaseWrapper as PrometheusWrapper
from psycopg import pq

from core.db_backend.counted_cursor import counted_cursor_class
from core.pipeline import answers_wait


class ServerBindingCursor(DjangoServerBindingCursor):
    """Django's server-side binding cursor, with ``mogrify`` (psycopg gives it only to its
    client-side cursors): the query with its parameters merged, as a client-side cursor would
    send it. django-pghistory's ``Events`` queries build their SQL with it."""

    def mogrify(self, query, params=None) -> str:
        return psycopg.ClientCursor(self.connection).mogrify(query, params)

    # In a pipeline (core.pipeline) a statement's answer comes when the pipeline is synced: a
    # row count or description read before it would be -1 or None (the ORM reads an UPDATE's
    # count at once), so reading one waits for the answers first.
    @property
    def rowcount(self) -> int:
        if self.pgresult is None:
            answers_wait()
        return super().rowcount

    @property
    def description(self):
        if self.pgresult is None:
            answers_wait()
        return super().description


def connection_looks_usable(connection) -> bool:
    """Whether a psycopg connection idle between requests can be used without a round trip:
    open, not broken, idle (no transaction, no result pending), and its socket with nothing to
    read."""
    if connection.closed or connection.broken:
        return False
    pgconn = connection.pgconn
    if pgconn.status != pq.ConnStatus.OK:
        return False
    if pgconn.transaction_status != pq.TransactionStatus.IDLE:
        return False
    try:
        readable, _, _ = select.select([pgconn.socket], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return False
    return not readable


class DatabaseWrapper(PrometheusWrapper):
    def get_connection_params(self) -> dict:
        # Django's parameters, its cursor counted by core.db_backend.counted_cursor rather than
        # django-prometheus's wrapper (the same metrics, without a label lookup per statement).
        params = postgresql.DatabaseWrapper.get_connection_params(self)
        cursor = params["cursor_factory"]
        if self.settings_dict["OPTIONS"].get("server_side_binding") is True:
            cursor = ServerBindingCursor
        params["cursor_factory"] = counted_cursor_class(cursor, self.alias, self.vendor)
        return params

    def close_if_health_check_failed(self) -> None:
        if self.pool or self.connection is None or not self.health_check_enabled:
            return super().close_if_health_check_failed()
        if self.health_check_done:
            return None
        if not connection_looks_usable(self.connection):
            self.close()
        self.health_check_done = True
        return None

    @cached_property
    def _client_binding_cursor(self) -> type:
        return counted_cursor_class(ClientBindingCursor, self.alias, self.vendor)

    @contextmanager
    def client_side_binding(self) -> Iterator[None]:
        """Cursors made inside bind their parameters in the client (psycopg's ``ClientCursor``),
        as Django does by default, instead of the server (the setting's ``server_side_binding``).

        For SQL of several statements with parameters, which the extended protocol refuses
        ("cannot insert multiple commands into a prepared statement"): django-pghistory's
        ``pghistory.context`` prefixes each statement with its ``set_config`` calls. The
        connection's cursor factory is switched for the block and put back after it, whatever
        happens (a pooled connection goes back to the pool as it came)."""
        self.ensure_connection()
        raw = self.connection
        kept = raw.cursor_factory
        raw.cursor_factory = self._client_binding_cursor
        try:
            yield
        finally:
            raw.cursor_factory = kept
