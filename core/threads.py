"""Blocking work from the event loop: :func:`in_thread`.

``asgiref``'s ``sync_to_async(func, thread_sensitive=False)(*args)`` does the same for the
code here, at a cost paid on every call: a new ``SyncToAsync`` (its constructor inspects
``func``), a thread handler that records the loop for ``async_to_sync`` (nothing here calls
it), a shield around the executor's future and the copy of the thread's context changes back
into the caller's (nothing here sets a context variable that outlives the call). Together they
were a sixth of a long poll's re-arm in the event loop (docs/decisions/lean-move.md). What the event loop's code needs is kept: the work runs in the loop's default
executor, in a copy of the caller's context (the request id and the log's bound variables go
with it), its exception is raised to the caller, and a caller cancelled while it runs stops
waiting at once, as with ``sync_to_async`` (the thread finishes the work on its own).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import TypeVar

_R = TypeVar("_R")


async def in_thread(func: Callable[..., _R], /, *args: object) -> _R:
    """``func(*args)`` in the event loop's default executor, in a copy of this context."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, contextvars.copy_context().run, func, *args)
