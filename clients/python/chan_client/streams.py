"""Decoding push streams, without I/O: Server-Sent Events and NDJSON, line by line.

Both clients feed the lines they read to a decoder and get whole events back, so the parsing
is written (and tested) once. SSE follows the WHATWG rules: ``field: value`` lines, a blank line
ends an event, ``:`` starts a comment (the server's heartbeats), ``id`` is remembered as the
``Last-Event-ID`` to resume from, ``retry`` sets the reconnection delay.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One event of a stream: its ``id`` (the resume point), ``event`` name and decoded ``data``."""

    id: str | None
    event: str
    data: Any


@dataclass
class SseDecoder:
    """Feed it lines (without their line ending); it returns an event when one is complete."""

    last_event_id: str | None = None
    retry_ms: int | None = None
    _event: str = ""
    _data: list[str] = field(default_factory=list)
    _id: str | None = None

    def feed(self, line: str) -> StreamEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: the server's heartbeat
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> StreamEvent | None:
        if self._id is not None:
            self.last_event_id = self._id
        if not self._data:
            self._event, self._id = "", None
            return None
        raw = "\n".join(self._data)
        try:
            data: Any = json.loads(raw)
        except ValueError:
            data = raw
        event = StreamEvent(self.last_event_id, self._event or "message", data)
        self._event, self._data, self._id = "", [], None
        return event


def ndjson_event(line: str) -> StreamEvent | None:
    """One NDJSON line as an event (blank lines are heartbeats); its ``id`` from ``cursor``/``seq``."""
    if not line.strip():
        return None
    data = json.loads(line)
    if isinstance(data, dict) and set(data) == {"heartbeat"}:
        return None  # the server's heartbeat
    mark = data.get("cursor", data.get("seq")) if isinstance(data, dict) else None
    kind = data.get("kind") or data.get("type") if isinstance(data, dict) else None
    return StreamEvent(None if mark is None else str(mark), kind or "message", data)
