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
the transaction around it commits, so its ``transaction.atomic`` rolls back as it would have.

On another database than PostgreSQL the block changes nothing and the registered functions run
at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.db import connections

_pending: ContextVar[list[Callable[[], None]] | None] = ContextVar("chan_pipeline", default=None)
_flight: ContextVar[Any] = ContextVar("chan_pipeline_flight", default=None)  # psycopg's Pipeline


def in_pipeline() -> bool:
    """Whether the statements sent now go in a pipeline (answers arrive later)."""
    return _pending.get() is not None


def answers_wait() -> None:
    """Wait for the answers of every statement sent so far (one round trip; nothing outside a
    pipeline). A cursor's row count and description ask for it (``core.db_backend``): the
    ORM reads an UPDATE's or a DELETE's count right after sending it."""
    flight = _flight.get()
    if flight is not None:
        flight.sync()


def after_answers(fn: Callable[[], None]) -> None:
    """Run ``fn`` once the answers of the statements sent so far are in: at once outside a
    pipeline; at the end of the enclosing :func:`statements_pipelined` block inside one."""
    pending = _pending.get()
    if pending is None:
        fn()
    else:
        pending.append(fn)


@contextmanager
def statements_pipelined(using: str = "default") -> Iterator[None]:
    """Send the block's statements on connection ``using`` without waiting for each answer
    (module docstring). Nested blocks join the outer one. Errors from the server are raised as
    Django's database errors, from the statement whose rows were read or from the block's end."""
    if _pending.get() is not None:
        yield
        return
    db = connections[using]
    if db.vendor != "postgresql":
        yield
        return
    db.ensure_connection()
    pending: list[Callable[[], None]] = []
    token = _pending.set(pending)
    try:
        with db.wrap_database_errors, db.connection.pipeline() as flight:
            flight_token = _flight.set(flight)
            try:
                yield
            finally:
                _flight.reset(flight_token)
    finally:
        _pending.reset(token)
    for fn in pending:
        fn()
