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


def test_answers_rendered_together_share_one_job_and_its_failure() -> None:
    calls: list[list[int]] = []
    fail = [True]

    def render_all(seats: list[int]) -> dict[int, str]:
        calls.append(seats)
        if fail[0]:
            raise RuntimeError("the database is away")
        return {seat: f"view of {seat}" for seat in seats}

    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        answers = long_poll._Answers()
        keys = {("hand", 7, 3, seat): seat for seat in (0, 2, 3)}
        # a job that fails fails each of its answers with its error;
        failed = await asyncio.gather(
            *answers.futures_together(keys, render_all), return_exceptions=True
        )
        # the next wake-up renders them again, in one job, for every seat at once;
        fail[0] = False
        again = await asyncio.gather(*answers.futures_together(keys, render_all))
        # and answers rendered already are not rendered a third time (a seat joins: only it is).
        more = {**keys, ("hand", 7, 3, 1): 1}
        kept = await asyncio.gather(*answers.futures_together(more, render_all))
        return failed, again, kept

    failed, again, kept = asyncio.run(scenario())
    assert [type(e) for e in failed] == [RuntimeError] * 3
    assert again == ["view of 0", "view of 2", "view of 3"]
    assert kept == ["view of 0", "view of 2", "view of 3", "view of 1"]
    assert calls == [[0, 2, 3], [0, 2, 3], [1]]


def test_answers_rendered_together_are_returned_even_when_the_kept_ones_overflow() -> None:
    async def scenario() -> list[Any]:
        answers = long_poll._Answers()
        old = ("hand", 1, 1, 0)
        await asyncio.gather(*answers.futures_together({old: 0}, lambda seats: {0: "old"}))
        for i in range(long_poll._ANSWERS_KEPT - 1):  # full: the old answer is the oldest
            answers._kept[("filler", i)] = asyncio.get_running_loop().create_future()
        # when: a wake-up needs the old answer and a new one, which pushes the old one out
        new = ("hand", 1, 1, 2)
        found = answers.futures_together({old: 0, new: 2}, lambda seats: {2: "new"})
        assert len(answers._kept) == long_poll._ANSWERS_KEPT
        return await asyncio.gather(*found)

    assert asyncio.run(scenario()) == ["old", "new"]
