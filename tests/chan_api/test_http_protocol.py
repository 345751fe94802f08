"""The web worker's HTTP protocol (chan_api/http_protocol.py): an answer's head and body in one
write, the same bytes as uvicorn's own protocol, and a head whose body is late not held back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as StockProtocol
from uvicorn.server import ServerState

from chan_api.http_protocol import HttpToolsProtocol
from chan_api.uvicorn_worker import UvicornWorker


class Transport:
    """An asyncio transport that records each write and the close, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, bytes]] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        assert not self.closing, "written after close"
        self.events.append(("write", bytes(data)))

    def close(self) -> None:
        self.closing = True
        self.events.append(("close", b""))

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5555)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_write_buffer_limits(self, *args: Any, **kwargs: Any) -> None:
        pass

    @property
    def writes(self) -> list[bytes]:
        return [data for kind, data in self.events if kind == "write"]

    @property
    def sent(self) -> bytes:
        return b"".join(self.writes)


def answering(headers: list[tuple[bytes, bytes]], body: bytes) -> Any:
    """An app answering 200 with ``headers`` and ``body`` in one body message."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


plain = answering(
    [(b"content-type", b"application/json"), (b"content-length", b"11")], b'{"seq": 42}'
)
closing = answering([(b"content-length", b"2"), (b"connection", b"close")], b"ok")
plain.__name__, closing.__name__ = "plain", "closing"


async def not_modified(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", b'"7"')]})
    await send({"type": "http.response.body", "body": b""})


async def stream(scope: Any, receive: Any, send: Any) -> None:
    """A stream: its head, then its first event a while later, then more."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await asyncio.sleep(0.05)
    await send({"type": "http.response.body", "body": b"one\n", "more_body": True})
    await send({"type": "http.response.body", "body": b"two\n", "more_body": False})


async def fails_after_start(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    raise RuntimeError("the app failed after its start")


REQUEST = b"GET /api/v1/hands/1/state HTTP/1.1\r\nHost: test\r\n\r\n"


async def served(protocol_class: type, app: Any, request: bytes = REQUEST) -> Transport:
    config = Config(app=app, http=protocol_class, lifespan="off", log_level="critical")
    protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
    transport = Transport()
    protocol.connection_made(transport)
    protocol.data_received(request)
    await asyncio.wait_for(asyncio.gather(*protocol.tasks, return_exceptions=True), 5)
    await asyncio.sleep(0)
    protocol.connection_lost(None)
    return transport


@pytest.mark.parametrize("app", [plain, not_modified, closing], ids=lambda a: a.__name__)
def test_an_answer_is_one_write_of_the_same_bytes(app: Any) -> None:
    stock = asyncio.run(served(StockProtocol, app))
    ours = asyncio.run(served(HttpToolsProtocol, app))
    assert len(stock.writes) == 2  # uvicorn's own: the head, then the body
    assert ours.writes == [stock.sent]
    assert [kind for kind, _ in ours.events] == [kind for kind, _ in stock.events][1:]


def test_a_head_request_is_one_write_of_the_same_bytes() -> None:
    request = b"HEAD /api/v1/hands/1/state HTTP/1.1\r\nHost: test\r\n\r\n"
    stock = asyncio.run(served(StockProtocol, plain, request))
    ours = asyncio.run(served(HttpToolsProtocol, plain, request))
    assert ours.writes == [stock.sent]


def test_a_connection_close_answer_is_written_before_the_close() -> None:
    stock = asyncio.run(served(StockProtocol, closing))
    ours = asyncio.run(served(HttpToolsProtocol, closing))
    closes = [event for event in stock.events if event[0] == "close"]
    assert closes and stock.events[2:] == closes  # uvicorn's own: head, body, then its closes
    assert ours.events == [("write", stock.sent), *closes]
    assert ours.sent.endswith(b"\r\n\r\nok")


def test_a_stream_s_head_is_not_held_until_its_first_event() -> None:
    async def run() -> tuple[Transport, list[bytes]]:
        config = Config(app=stream, http=HttpToolsProtocol, lifespan="off", log_level="critical")
        protocol = HttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
        transport = Transport()
        protocol.connection_made(transport)
        protocol.data_received(REQUEST)
        await asyncio.sleep(0.02)  # the app has sent its head and waits for its first event
        early = list(transport.writes)
        await asyncio.wait_for(asyncio.gather(*protocol.tasks), 5)
        return transport, early

    ours, early = asyncio.run(run())
    stock = asyncio.run(served(StockProtocol, stream))
    assert len(early) == 1 and early[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert early[0].endswith(b"\r\n\r\n")
    assert ours.sent == stock.sent


def test_an_app_failing_after_its_start_still_writes_the_head_before_the_close() -> None:
    stock = asyncio.run(served(StockProtocol, fails_after_start))
    ours = asyncio.run(served(HttpToolsProtocol, fails_after_start))
    assert ours.events == stock.events
    assert ours.events[0][0] == "write" and ours.events[1][0] == "close"


def test_keep_alive_answers_on_one_connection_each_one_write() -> None:
    # Two requests on one connection, the second sent after the first's answer.
    async def run(protocol_class: type) -> Transport:
        config = Config(app=plain, http=protocol_class, lifespan="off", log_level="critical")
        protocol = protocol_class(config=config, server_state=ServerState(), app_state={})
        transport = Transport()
        protocol.connection_made(transport)
        for _ in range(2):
            protocol.data_received(REQUEST)
            await asyncio.wait_for(asyncio.gather(*protocol.tasks), 5)
            await asyncio.sleep(0)
        protocol.connection_lost(None)
        return transport

    stock = asyncio.run(run(StockProtocol))
    ours = asyncio.run(run(HttpToolsProtocol))
    assert len(ours.writes) == 2 and ours.sent == stock.sent


def test_the_web_worker_runs_this_protocol() -> None:
    assert UvicornWorker.CONFIG_KWARGS["http"] is HttpToolsProtocol
