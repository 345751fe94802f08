"""A request's body read from an ASGI ``receive``, capped as Django caps it.

Django refuses a body larger than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (its ``RequestDataTooBig``:
the API's 413 problem, ``body_too_large``) and never reads more than that limit and one byte.
Every reader outside Django does the same (docs/edge.md): it keeps at most ``limit + 1`` bytes
and stops reading there, so a client's 200 MB body costs the process nothing but the limit.
What it kept is then enough for Django to answer the request as it answers it: its own 413
(the body's length is past the limit, whether the client sent ``Content-Length`` or chunks).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from django.conf import settings

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]


def body_limit() -> int:
    """The largest body Django accepts (``DATA_UPLOAD_MAX_MEMORY_SIZE``; None: no limit)."""
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 2**31


class Body(NamedTuple):
    body: bytes  # at most ``keep`` bytes of what the client sent
    ended: bool  # the client's last chunk was read (False: more may follow, unread)
    gone: Message | None  # not a body chunk (the client went away): the message read


async def body_read(receive: Receive, keep: int) -> Body:
    """Read the body until it ends or ``keep`` bytes came (``keep = limit + 1``: enough to
    know it is too large), holding no more than those ``keep`` bytes; the rest is left unread
    (the server discards it, its reads paused meanwhile by its flow control)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return Body(b"".join(chunks), False, message)
        chunk = message.get("body", b"")
        if size + len(chunk) > keep:
            chunk = chunk[: keep - size]
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return Body(b"".join(chunks), True, None)
        if size >= keep:
            return Body(b"".join(chunks), False, None)


async def body_drained(receive: Receive) -> Message | None:
    """Read the rest of a body, keeping none of it; the message that was not a body chunk (the
    client gone), if any."""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return message
        if not message.get("more_body", False):
            return None
