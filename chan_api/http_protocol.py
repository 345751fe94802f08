"""uvicorn's httptools protocol, writing a response's head and body to the socket together.

uvicorn writes an answer's status line and headers (``http.response.start``) to the transport,
then its body (``http.response.body``) in a second write: two ``send`` system calls and two TCP
segments for every answer, however small. Under the load bench those two writes were 8 % of a
web worker's time, the head's alone 5.5 % (docs/decisions/lean-stack-memory.md).

Here the head is held until the body comes in the same turn of the event loop, and the two go in
one write. A head whose body does not come in that turn (a stream that waits for its first
event) is written alone at the end of the turn, as before: a client never waits longer for a
head than it did. What reaches the socket is the same bytes, in the same order; only how many
writes carry them changes. The worker class (chan_api/uvicorn_worker.py) names this protocol.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _HttpToolsProtocol
from uvicorn.protocols.http.httptools_impl import RequestResponseCycle


class HttpToolsProtocol(_HttpToolsProtocol):
    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        # The cycle was just made (its task has not run yet): give it the writes below.
        if type(self.cycle) is RequestResponseCycle:
            self.cycle.__class__ = _OneWriteCycle


class _Kept:
    """Stands in for the transport while uvicorn writes a response's head: keeps the bytes."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.chunks.append(data)


class _HeadHeld:
    """Stands in for the transport from a response's start until its head is written: the
    next write carries the head before its own bytes, a close writes the head first, and the
    end of the event loop's turn writes it alone. Then the cycle has its transport back."""

    def __init__(self, cycle: RequestResponseCycle, real: Any, head: bytes) -> None:
        self._cycle = cycle
        self._real = real
        self._head = head
        self._flush = asyncio.get_running_loop().call_soon(self.flush)

    def write(self, data: bytes) -> None:
        self._release()
        self._real.write(self._head + data)

    def close(self) -> None:
        self.flush()
        self._real.close()

    def flush(self) -> None:
        if self._cycle.transport is self:
            self._release()
            if not self._cycle.disconnected:
                self._real.write(self._head)

    def _release(self) -> None:
        self._flush.cancel()
        self._cycle.transport = self._real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _OneWriteCycle(RequestResponseCycle):
    async def send(self, message: Any) -> None:
        if message["type"] != "http.response.start" or self.response_started:
            await super().send(message)
            return
        real = self.transport
        kept = _Kept()
        self.transport = kept
        try:
            await super().send(message)
        finally:
            self.transport = real
        if kept.chunks:
            self.transport = _HeadHeld(self, real, b"".join(kept.chunks))
