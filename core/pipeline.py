"""Statements sent in one flight: psycopg's pipeline mode on a Django connection.

Outside a pipeline every statement is a round trip: the client sends it and waits for its
answer before sending the next. Inside :func:`statements_pipelined` a statement whose answer is
not read at once is sent and the client goes on; the server still runs the statements one after
the other, in the order sent, each (under READ COMMITTED) with a snapshot taken when it starts,
so a statement sent after a lock sees what was committed while the lock was awaited, exactly as
it would one round trip later. Reading a cursor's rows, row count or description waits for
everything sent so far (one round trip for all of it), so the ORM's own statements stay correct
inside a block (they are only not batched); leaving the block waits for the rest.

What the code after a statement needs from its answer (a row count to check, rows returned) is
registered with :func:`after_answers` and runs once the answers are in: at once outside a
pipeline, when the block ends inside one. A check that raises there raises from the block, before
the transaction around it commits (unless the block commits it: ``commit`` below), so its
``transaction.atomic`` rolls back as it would have.

A block entered inside a transaction not yet begun (``transaction.atomic()`` has turned
autocommit off; psycopg sends ``BEGIN`` with the first statement) sends ``BEGIN`` without a
Sync and without waiting for its answer: it goes in the flight of the block's first statements.
psycopg's own ``BEGIN`` in a pipeline waits for its answer, a round trip of its own before every
pipelined transaction's first statement (6.9 % of a move's time under bench/api_bench.py:
docs/decisions.md, "The thirteenth round"). An error in the block's statements still aborts the
transaction, whose rollback Django runs as before.

A block that ends its transaction (``statements_pipelined(commit=True)``) sends ``COMMIT`` in
its last flight: a move is then two round trips, BEGIN with the lock, the writes with the
commit (the commit's own round trip was 12.7 % of a move's time: "The thirteenth round").

On another database than PostgreSQL the block changes nothing and the registered functions run
at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.db import connections
from psycopg import pq

logger = logging.getLogger(__name__)


@dataclass
class _Flight:
    pipeline: Any  # psycopg's Pipeline
    pending: list[Callable[[], None]] = field(default_factory=list)


_current: ContextVar[_Flight | None] = ContextVar("chan_pipeline", default=None)


def in_pipeline() -> bool:
    """Whether the statements sent now go in a pipeline (answers arrive later)."""
    return _current.get() is not None


def answers_wait() -> None:
    """Wait for the answers of every statement sent so far (one round trip; nothing outside a
    pipeline). A cursor's row count and description ask for it (``core.db_backend``): the
    ORM reads an UPDATE's or a DELETE's count right after sending it."""
    flight = _current.get()
    if flight is not None:
        flight.pipeline.sync()


def after_answers(fn: Callable[[], None]) -> None:
    """Run ``fn`` once the answers of the statements sent so far are in: at once outside a
    pipeline; at the end of the enclosing :func:`statements_pipelined` block inside one."""
    flight = _current.get()
    if flight is None:
        fn()
    else:
        flight.pending.append(fn)


@contextmanager
def _begun_unanswered(raw: Any) -> Iterator[None]:
    """Inside psycopg connection ``raw``'s pipeline: queue ``BEGIN``, without the Sync and the
    wait for its answer psycopg's ``_start_query`` adds, if a transaction is to begin
    (autocommit off, none open). It goes with the block's first statements; its answer comes
    with theirs. libpq learns that the transaction is open only from the server's next
    ReadyForQuery (at a Sync), so until the block ends psycopg is told autocommit is on: it
    would otherwise send a ``BEGIN`` of its own, and wait, once the first answers are read."""
    if raw.autocommit or raw.pgconn.transaction_status != pq.TransactionStatus.IDLE:
        yield
        return
    with raw.lock:
        raw.wait(raw._exec_command(raw._get_tx_start_command()))
    raw._autocommit = True
    try:
        yield
    finally:
        raw._autocommit = False


def _commit_sendable(db: Any) -> bool:
    """Whether the transaction around the block may commit with its last flight: the block is
    in the outermost ``transaction.atomic()`` itself (no savepoint open), which is not marked
    for rollback."""
    return (
        db.in_atomic_block
        and len(db.atomic_blocks) == 1
        and not db.savepoint_ids
        and not db.needs_rollback
    )


@contextmanager
def statements_pipelined(using: str = "default", *, commit: bool = False) -> Iterator[None]:
    """Send the block's statements on connection ``using`` without waiting for each answer
    (module docstring). Nested blocks join the outer one. Errors from the server are raised as
    Django's database errors, from the statement whose rows were read or from the block's end.

    ``commit``: the block is the last work of the outermost ``transaction.atomic()`` around it
    (nothing runs in that transaction after it): when it ends without an exception, ``COMMIT``
    goes in its last flight, and the transaction commits with the answers of its last
    statements rather than in a round trip of its own. A statement that fails aborts the
    transaction at the server, which skips the ``COMMIT`` (the block raises; Django rolls
    back). Django's commit then finds the connection idle (psycopg sends nothing) and runs the
    ``on_commit`` hooks. The checks registered with :func:`after_answers` run after the
    commit: with ``commit``, the block's statements must refuse at the server (a constraint,
    an error), never in such a check; one that raises anyway is logged as an error, committed.
    """
    db = connections[using]
    if _current.get() is not None or db.vendor != "postgresql":
        yield
        return
    db.ensure_connection()
    raw = db.connection
    committed = False
    with (
        db.wrap_database_errors,
        raw.pipeline() as pipeline,
        _begun_unanswered(raw),
    ):
        flight = _Flight(pipeline)
        token = _current.set(flight)
        try:
            yield
            if commit and _commit_sendable(db):
                with raw.lock:
                    raw.wait(raw._exec_command(b"COMMIT"))
                committed = True
        finally:
            _current.reset(token)
    for fn in flight.pending:
        try:
            fn()
        except Exception:
            if committed:
                logger.error("a check refused after its transaction committed", exc_info=True)
            raise
