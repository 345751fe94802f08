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

import psycopg
from django_prometheus.db.backends.postgresql.base import DatabaseWrapper as PrometheusWrapper
from psycopg import pq


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
    def close_if_health_check_failed(self) -> None:
        if self.pool or self.connection is None or not self.health_check_enabled:
            return super().close_if_health_check_failed()
        if self.health_check_done:
            return None
        if not connection_looks_usable(self.connection):
            self.close()
        self.health_check_done = True
        return None
