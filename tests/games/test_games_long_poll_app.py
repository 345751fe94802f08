"""LongPollApp's own machinery (games/live/long_poll.py), in one process with no server: the
waiting gauge across event loops, and the stop signals' hook."""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from core import metrics
from games.live import long_poll
from games.live.long_poll import LongPollApp


def test_the_waiting_gauge_is_written_even_after_the_loop_that_owed_it_closed() -> None:
    gauge = long_poll._WaitingGauge()

    async def add_and_leave(n: int) -> None:
        gauge.add(n)  # its write is due 0.1 s later, on this loop, which closes at once

    async def add_and_stay(n: int) -> None:
        gauge.add(n)
        await asyncio.sleep(gauge.GAUGE_SECONDS * 2)

    asyncio.run(add_and_leave(3))
    asyncio.run(add_and_stay(2))
    assert metrics.LONG_POLLS_WAITING._value.get() == 5


def test_a_stop_signal_answers_the_waiters_then_reaches_the_servers_handler_once() -> None:
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    received: list[int] = []

    async def scenario() -> tuple[int, bool]:
        app = LongPollApp(app=None)  # type: ignore[arg-type]  # (Django is not reached here)
        waiter: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        app._waiting.add(waiter)
        app._answer_early_on_exit_signals()
        app._answer_early_on_exit_signals()  # a second lifespan: still one hook, not two
        signal.getsignal(signal.SIGTERM)(signal.SIGTERM, None)  # type: ignore[operator]
        result = await asyncio.wait_for(waiter, 1)
        return result, app._stopping

    def server_handler(signum: int, frame: Any) -> None:
        received.append(signum)

    try:
        signal.signal(signal.SIGTERM, server_handler)
        signal.signal(signal.SIGINT, server_handler)
        result, stopping = asyncio.run(scenario())
        # the waiter is answered as on its timeout, new polls will be too, and the server's
        # own handler ran once;
        assert (result, stopping, received) == (long_poll._TIMED_OUT, True, [signal.SIGTERM])
        # once the loop is gone, the hook still hands the signal on.
        signal.getsignal(signal.SIGINT)(signal.SIGINT, None)  # type: ignore[operator]
        assert received == [signal.SIGTERM, signal.SIGINT]
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
