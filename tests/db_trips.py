"""Round trips to PostgreSQL, counted from libpq's own trace of the protocol messages.

A round trip is a flight of messages from the client answered by the server before the client
sends again: in the trace, each run of frontend (``F``) lines that follows backend (``B``)
lines, or starts it. What psycopg sends in a pipeline counts once per flight, however many
statements it holds; a statement outside one counts once.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.db import connection
from psycopg import pq


@dataclass
class Trips:
    """What a :func:`round_trips_counted` block sent: its flights, each the messages sent."""

    flights: list[list[str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.flights)

    def statements(self) -> list[str]:
        """The SQL of every statement sent (Parse and Query messages), in order."""
        sent = []
        for flight in self.flights:
            for line in flight:
                kind, _, rest = line.partition("\t")
                if kind in ("Parse", "Query"):
                    sent.append(rest)
        return sent


def trips_read(trace: str) -> Trips:
    trips = Trips()
    last = "B"
    for line in trace.splitlines():
        direction, _, rest = line.partition("\t")
        if direction not in ("F", "B"):  # a message's text running over lines
            if last == "F" and trips.flights and trips.flights[-1]:
                trips.flights[-1][-1] += "\n" + line
            continue
        if direction == "F":
            if last == "B":
                trips.flights.append([])
            _length, _, message = rest.partition("\t")
            if message.split("\t")[0] not in ("Sync", "Flush"):
                trips.flights[-1].append(message.strip())
        last = direction
    return trips


@contextmanager
def round_trips_counted() -> Iterator[Trips]:
    """Count the round trips the block makes on Django's default connection. Statements are
    not prepared inside it (a prepared statement's Bind names it, without its text)."""
    connection.ensure_connection()
    raw = connection.connection
    pgconn = raw.pgconn
    threshold, raw.prepare_threshold = raw.prepare_threshold, None
    trips = Trips()
    with tempfile.TemporaryFile() as trace:
        pgconn.trace(trace.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            yield trips
        finally:
            raw.prepare_threshold = threshold
            pgconn.untrace()
            trace.seek(0)
            trips.flights = trips_read(trace.read().decode("utf-8", "replace")).flights
