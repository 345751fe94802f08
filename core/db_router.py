"""Reads that may lag go to the replica; everything else reads and writes the primary.

A selector whose answer may be a few seconds old (an ended hand's export, a history, a profile,
a leaderboard) is marked :func:`may_lag`. While it runs, :class:`LaggingReadsRouter` sends its
ORM reads to the ``replica`` alias (``DATABASE_REPLICA_URL``) when all of these hold:

* a replica is configured;
* its replay lag, measured at most every ``CHAN_REPLICA_CHECK_SECONDS`` in each process, is at
  most ``CHAN_REPLICA_MAX_LAG_SECONDS`` (a replica that does not answer counts as lagging);
* the primary's connection is not inside a transaction: a service (which decides a move or moves
  money, always in ``transaction.atomic``) that calls a marked selector reads the primary.

Every other read, unmarked or outside the window, goes to the primary, and so does every raw
``connection.cursor()`` (the hot path's and the ledger's). A marked read that fails on the
replica is read again on the primary, once, and the replica counts as down until the next check.
A checker that must see a row and the rows it must agree with at one moment reads them inside
:func:`snapshot_reads`: one transaction on the primary, where every read of it stays.
docs/decisions/pgbouncer-and-replicas.md says why a marker and a context variable rather than
``.using()`` in each query.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction

from core import metrics

log = logging.getLogger(__name__)

REPLICA = "replica"
P = ParamSpec("P")
R = TypeVar("R")

_lagging: ContextVar[bool] = ContextVar("chan_lagging_reads", default=False)
_replica_used: ContextVar[bool] = ContextVar("chan_replica_used", default=False)

# 0 when the replica has replayed all it received from a streaming primary; else the age of the
# last transaction it replayed (an idle primary with a broken stream counts as lagging: nobody
# can tell how far behind it is). Not a replica (pg_is_in_recovery() false): 0. A role without
# pg_read_all_stats sees the WAL receiver's pid but not its status: a receiver running counts.
LAG_SQL = """
SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0
    WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn()
         AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver
                     WHERE pid IS NOT NULL AND coalesce(status, 'streaming') = 'streaming')
         THEN 0
    ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 'Infinity')
END::float8
"""


@dataclass(frozen=True, slots=True)
class ReplicaCheck:
    """The last measure of this process: when (monotonic), and the lag (None: did not answer)."""

    at: float
    lag: float | None


_check_lock = threading.Lock()
_last_check = ReplicaCheck(at=float("-inf"), lag=None)


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


def replica_lag_measure() -> float | None:
    """The replica's replay lag in seconds, read from the replica now; None if it did not answer."""
    connection = connections[REPLICA]
    try:
        with connection.cursor() as cursor:
            cursor.execute(LAG_SQL)
            return float(cursor.fetchone()[0])
    except DatabaseError as exc:
        log.warning("replica did not answer: %s", exc)
        connection.close()
        return None


def replica_lag() -> float | None:
    """The replica's lag as last measured in this process (again once the check is older than
    ``CHAN_REPLICA_CHECK_SECONDS``); None if it did not answer."""
    global _last_check
    now = time.monotonic()
    with _check_lock:
        last = _last_check
    if now - last.at < settings.CHAN_REPLICA_CHECK_SECONDS:
        return last.lag
    lag = replica_lag_measure()
    metrics.replica_lag_measured(lag)
    with _check_lock:
        _last_check = ReplicaCheck(at=time.monotonic(), lag=lag)
    return lag


def replica_mark_down() -> None:
    """The replica failed a read: the primary serves the marked reads until the next check."""
    global _last_check
    with _check_lock:
        _last_check = ReplicaCheck(at=time.monotonic(), lag=None)


def replica_fresh() -> bool:
    lag = replica_lag()
    return lag is not None and lag <= settings.CHAN_REPLICA_MAX_LAG_SECONDS


def read_alias() -> str:
    """The alias a read issued now goes to: the replica only inside :func:`lagging_reads`, with a
    fresh replica and the primary outside any transaction; else the primary."""
    if not _lagging.get() or not replica_configured():
        return DEFAULT_DB_ALIAS
    if connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS
    if not replica_fresh():
        return DEFAULT_DB_ALIAS
    _replica_used.set(True)
    return REPLICA


@contextmanager
def _reads(*, may_lag: bool) -> Iterator[None]:
    token = _lagging.set(may_lag)
    try:
        yield
    finally:
        _lagging.reset(token)


def lagging_reads() -> AbstractContextManager[None]:
    """The reads inside may be served by a fresh replica (see the module's docstring)."""
    return _reads(may_lag=True)


def primary_reads() -> AbstractContextManager[None]:
    """The reads inside go to the primary, even within :func:`lagging_reads`."""
    return _reads(may_lag=False)


@contextmanager
def snapshot_reads() -> Iterator[None]:
    """The reads inside see one snapshot of the primary: a REPEATABLE READ, READ ONLY
    transaction, for a checker that reads a row and then the rows it must agree with while the
    system goes on writing (a hand and its log). Inside a transaction already, they are read in
    that transaction, at its isolation."""
    connection = connections[DEFAULT_DB_ALIAS]
    outer = connection.in_atomic_block
    with primary_reads(), transaction.atomic(using=DEFAULT_DB_ALIAS):
        if not outer:  # the first statement of the transaction, before any read
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


def may_lag(func: Callable[P, R]) -> Callable[P, R]:
    """Mark a selector whose reads may come from the replica (and so be a few seconds old).

    If a read fails on the replica, the selector runs again on the primary."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        used = _replica_used.set(False)
        try:
            with lagging_reads():
                try:
                    result = func(*args, **kwargs)
                    metrics.lagging_read(replica=_replica_used.get())
                    return result
                except DatabaseError:
                    if not _replica_used.get():
                        raise
                    log.warning("a read failed on the replica; reading the primary", exc_info=True)
                    connections[REPLICA].close()
                    replica_mark_down()
            with primary_reads():
                result = func(*args, **kwargs)
            metrics.lagging_read(replica=False)
            return result
        finally:
            _replica_used.reset(used)

    wrapper.may_lag = True  # type: ignore[attr-defined]
    return wrapper


class LaggingReadsRouter:
    """Django's router (``DATABASE_ROUTERS``): reads by :func:`read_alias`, writes and
    migrations on the primary only."""

    def db_for_read(self, model: type[Any], **hints: Any) -> str:
        return read_alias()

    def db_for_write(self, model: type[Any], **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # one database: the replica is a copy of the primary

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS
