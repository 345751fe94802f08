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
docs/decisions/one-flight-moves.md). An error in the block's statements still aborts the
transaction, whose rollback Django runs as before.

A block that ends its transaction (``statements_pipelined(commit=True)``) sends ``COMMIT`` in
its last flight: a move is then two round trips, BEGIN with the lock, the writes with the
commit (docs/decisions/one-flight-moves.md; its measured share is in bench/RESULTS.md).

Such a block may queue its ``COMMIT`` before it ends (:func:`commit_now`): the work left to
do in the client (a move's answer: its view and its JSON, 0.3-0.4 ms) then overlaps the
server's commit (its write to the disk) instead of coming before it. From then on the
transaction commits unless one of its statements was refused: a statement sent after the
``COMMIT`` would run outside it, and raises instead (:class:`StatementAfterCommit`), and the
block must not raise (its caller keeps the error of what it runs after the ``COMMIT`` and
raises it once the transaction has committed and its hooks have run: Django, seeing an
exception, would drop the hooks of a transaction the server has committed).

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
    db: Any  # Django's connection
    commit: bool  # the block may end its transaction (statements_pipelined's ``commit``)
    pending: list[Callable[[], None]] = field(default_factory=list)
    committed: bool = False  # COMMIT is queued: no statement may follow it


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


class StatementAfterCommit(RuntimeError):
    """A statement sent after its block queued the transaction's COMMIT (:func:`commit_now`)."""


def _refused_after_commit(execute: Any, sql: Any, params: Any, many: Any, context: Any) -> Any:
    """The execute wrapper of a block whose COMMIT is queued (Django's ``execute_wrapper``)."""
    raise StatementAfterCommit(f"a statement after the COMMIT was queued: {str(sql)[:80]}")


def commit_now() -> bool:
    """Inside ``statements_pipelined(commit=True)``, in the outermost ``transaction.atomic()``
    (not marked for rollback): queue ``COMMIT`` now, after the statements sent so far, and
    return True; the block sends no statement after it (one that it tries to send raises
    :class:`StatementAfterCommit`) and must not raise (module docstring). Anywhere else
    nothing is queued and False is returned: the transaction commits as it would have."""
    flight = _current.get()
    if flight is None or not flight.commit or flight.committed:
        return False
    if not _commit_sendable(flight.db):
        return False
    raw = flight.db.connection
    with raw.lock:
        raw.wait(raw._exec_command(b"COMMIT"))  # (queued in the pipeline: not sent yet)
        raw.wait(flight.pipeline._communicate_gen())  # sent, with what was queued before it
    flight.committed = True
    flight.db.execute_wrappers.append(_refused_after_commit)
    return True


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
        flight = _Flight(pipeline, db, commit)
        token = _current.set(flight)
        try:
            try:
                yield
            except BaseException:
                if flight.committed:  # (the server commits it all the same)
                    logger.error("a block raised after its COMMIT was queued", exc_info=True)
                raise
            if commit and not flight.committed:
                commit_now()
            committed = flight.committed
        finally:
            _current.reset(token)
            if _refused_after_commit in db.execute_wrappers:
                db.execute_wrappers.remove(_refused_after_commit)
    if committed:
        # The server committed (its answers are in, none refused): an error the block caught
        # after its COMMIT was queued (a statement refused there, by the ORM's
        # ``mark_for_rollback_on_error``) must not have Django roll back — nothing to undo —
        # and drop the commit's hooks.
        db.needs_rollback = False
    for fn in flight.pending:
        try:
            fn()
        except Exception:
            if committed:
                logger.error("a check refused after its transaction committed", exc_info=True)
            raise
