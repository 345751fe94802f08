"""Django's WSGI application served to an ASGI server from a fixed pool of threads.

Each request costs one hop: the event loop reads the body, one pool thread runs the whole
WSGI application (middleware, view, response) exactly as gunicorn's ``gthread`` worker would,
and the loop sends what it returned. Django's own ASGI handler hops between the loop and a
thread for every signal and every synchronous middleware, and gives each request a thread of
its own (so ``CONN_MAX_AGE`` connections die with it); measured here it served half the
requests per second of ``gthread`` (docs/decisions/). The pool's threads live as long as the
process, so each keeps its persistent database connection, as ``gthread``'s threads do.

Every response of this API is small and complete (JSON, the admin's pages, static files), so a
response is collected whole in the thread; a request body is read before the hop, and at most
``DATA_UPLOAD_MAX_MEMORY_SIZE`` plus one byte of it is kept (chan_api/request_body.py): Django
refuses a larger one with its 413. A body sent in chunks (no ``Content-Length``) is given to
Django with the length of what was kept, so that Django reads it, and refuses it when it is
too large, as it does a body sent with its length.
"""

from __future__ import annotations

import asyncio
import io
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from chan_api.request_body import body_drained, body_read

logger = logging.getLogger(__name__)

Scope = dict[str, Any]
Message = dict[str, Any]
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def wsgi_environ(scope: Scope, body: bytes) -> dict[str, Any]:
    """The WSGI environ (PEP 3333) of an ASGI HTTP scope; ``asgi.scope`` keeps the scope."""
    root_path = scope.get("root_path", "")
    path = scope["path"]
    if root_path and path.startswith(root_path):
        path = path[len(root_path) :]
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client") or ("", 0)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": root_path.encode("utf-8").decode("latin-1"),
        "PATH_INFO": path.encode("utf-8").decode("latin-1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1] or 80),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "REMOTE_ADDR": str(client[0]),
        "REMOTE_PORT": str(client[1]),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "asgi.scope": scope,
    }
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        value = raw_value.decode("latin-1")
        key = name if name in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{name}"
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    if body and "CONTENT_LENGTH" not in environ:  # (sent in chunks: Django reads its length)
        environ["CONTENT_LENGTH"] = str(len(body))
    return environ


class WsgiInThreads:
    """The ASGI application that runs ``app`` in a pool of ``threads`` threads."""

    def __init__(
        self,
        app: WsgiApp,
        *,
        threads: int,
        max_body: int,
        on_startup: Callable[[], None] | None = None,
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.on_startup = on_startup  # run at the lifespan's startup, before any request
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="django")

    async def __call__(
        self, scope: Scope, receive: Callable[[], Awaitable[Message]], send: Any
    ) -> None:
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if scope["type"] != "http":
            return
        body = await self._body(receive)
        loop = asyncio.get_running_loop()
        status, headers, content = await loop.run_in_executor(
            self.executor, self._respond, scope, body
        )
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    async def _body(self, receive: Callable[[], Awaitable[Message]]) -> bytes:
        """At most ``max_body`` bytes of the body; the rest read and dropped (what comes after
        the body is the client's disconnect, which a long poll waits for)."""
        read = await body_read(receive, self.max_body)
        if not read.ended and read.gone is None:
            await body_drained(receive)  # (the client went away: Django answers to nobody)
        return read.body

    def _respond(self, scope: Scope, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None):
            started[:] = [status, headers]
            return lambda data: None  # the legacy write(): unused by Django

        result = self.app(wsgi_environ(scope, body), start_response)
        try:
            content = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()  # Django's request_finished: connections closed or kept
        status, headers = started
        return (
            int(status.split(" ", 1)[0]),
            [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers],
            content,
        )

    async def _lifespan(self, receive: Callable[[], Awaitable[Message]], send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self.on_startup is not None:
                    try:
                        self.on_startup()
                    except Exception:  # tuning only: the server can serve without it
                        logger.exception("the web process's startup hook failed")
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.executor.shutdown(wait=False)
                await send({"type": "lifespan.shutdown.complete"})
                return
