"""The hand feed's waiter table (games/live/subscription.py), in one event loop with no Redis and no
database: announcements wake the waiters their seq passes, after ``prepare`` when it is set."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from games.live import subscription as hand_feed
from games.live.subscription import HandFeed


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def feed() -> HandFeed:
    return HandFeed(url="", poll_seconds=3600)  # announcements come from the test alone


def test_an_announcement_wakes_the_waiters_it_passes_and_keeps_the_others() -> None:
    async def scenario() -> tuple[list[int], bool, int]:
        f = feed()
        at_3, at_5, other_hand = f.wait_future(1, 3), f.wait_future(1, 5), f.wait_future(2, 0)
        f.announce(1, 4)
        await asyncio.sleep(0)
        return [at_3.result()], at_5.done() or other_hand.done(), f.waiting

    woken, others_done, waiting = run(scenario())
    assert woken == [4] and not others_done and waiting == 2


def test_a_waiter_that_comes_after_the_announcement_is_answered_at_once() -> None:
    async def scenario() -> int:
        f = feed()
        f.announce(7, 9)
        return f.wait_future(7, 8).result()

    assert run(scenario()) == 9


def test_the_waiters_wake_only_once_their_answers_are_prepared() -> None:
    async def scenario() -> list[str]:
        f = feed()
        log: list[str] = []

        async def prepare(hand: int, seq: int, tags: list[Any]) -> None:
            log.append(f"prepare {hand}:{seq} {sorted(tags)}")
            await asyncio.sleep(0.05)
            log.append("prepared")

        f.prepare = prepare
        waiters = [f.wait_future(1, 0, tag) for tag in ("b", "a")]
        for w in waiters:
            w.add_done_callback(lambda w: log.append(f"woken {w.result()}"))
        f.announce(1, 1)
        await asyncio.gather(*waiters)
        return log

    assert run(scenario()) == ["prepare 1:1 ['a', 'b']", "prepared", "woken 1", "woken 1"]


@pytest.mark.parametrize("trouble", ["fails", "hangs"])
def test_a_prepare_that_fails_or_hangs_still_wakes_the_waiters(monkeypatch, trouble) -> None:
    monkeypatch.setattr(hand_feed, "PREPARE_SECONDS", 0.1)

    async def scenario() -> tuple[int, float]:
        f = feed()

        async def prepare(hand: int, seq: int, tags: list[Any]) -> None:
            if trouble == "fails":
                raise RuntimeError("the database is away")
            await asyncio.sleep(60)

        f.prepare = prepare
        loop = asyncio.get_running_loop()
        started = loop.time()
        waiter = f.wait_future(1, 0)
        f.announce(1, 1)
        return await asyncio.wait_for(waiter, 5), loop.time() - started

    seq, took = run(scenario())
    assert seq == 1 and took < 1


def test_a_waiter_settled_by_its_owner_is_left_alone_and_forgotten() -> None:
    async def scenario() -> tuple[int, int, int]:
        f = feed()
        timed_out, other = f.wait_future(1, 0), f.wait_future(1, 0)
        timed_out.set_result(-2)  # its owner's timeout
        f.forget(1, timed_out)
        waiting = f.waiting
        f.announce(1, 1)
        f.forget(1, other)
        return timed_out.result(), waiting, f.waiting

    assert run(scenario()) == (-2, 1, 0)


def test_a_hand_that_is_gone_wakes_its_waiters_without_preparing() -> None:
    async def scenario() -> int:
        f = feed()

        async def prepare(hand: int, seq: int, tags: list[Any]) -> None:
            raise AssertionError("nothing to prepare for a hand that is gone")

        f.prepare = prepare
        waiter = f.wait_future(3, 5)
        f.announce(3, -1)
        return await waiter

    assert run(scenario()) == -1


def test_what_the_subscription_heard_is_forgotten_when_it_drops(tmp_path) -> None:
    """``seq_known`` (a re-arm judged with no read trusts it): a hand's seq as heard on the open
    subscription; nothing while it is down, and nothing heard before it opened again."""
    import redis

    from games.live.announce import feed_channel
    from tests.faults.harness import free_port, process_stop, redis_server

    port = free_port()
    server = redis_server(port, tmp_path)  # (its own: the test kills its subscribers)
    url = f"redis://127.0.0.1:{port}/0"
    publisher = redis.Redis.from_url(url)

    async def until(check: Any) -> None:
        for _ in range(200):
            if check():
                return
            await asyncio.sleep(0.02)
        raise AssertionError("not within 4 s")

    async def scenario() -> list[int | None]:
        f = HandFeed(url=url, poll_seconds=3600)
        await f.start()
        seen = [f.seq_known(5)]  # nothing heard yet
        publisher.publish(feed_channel(), "5:7")
        await until(lambda: f.seq_known(5) == 7)
        seen += [f.seq_known(5), f.seq_known(6)]
        epoch = f.epoch
        publisher.client_kill_filter(_type="pubsub")
        await until(lambda: f.epoch > epoch)
        seen.append(f.seq_known(5))  # down, or open again: forgotten either way
        await until(f._subscribed.is_set)
        seen.append(f.seq_known(5))
        publisher.publish(feed_channel(), "5:8")
        await until(lambda: f.seq_known(5) == 8)
        seen.append(f.seq_known(5))
        assert f._started is not None and f._poller is not None
        f._started.cancel()
        f._poller.cancel()
        return seen

    try:
        assert run(scenario()) == [None, 7, None, None, None, 8]
    finally:
        publisher.close()
        process_stop(server)


def test_a_read_from_before_the_subscription_opened_again_is_not_taken_as_heard(
    monkeypatch,
) -> None:
    """A read of the waited hands' seqs started while the subscription was down and answered
    after it opened again (whose own read counts) neither wakes nor is remembered."""
    f = HandFeed(url="redis://127.0.0.1:1/0", poll_seconds=3600)

    def read_while_it_reopens(topics: list[Any]) -> dict[Any, int]:
        f._opened += 1  # (the subscription opened again meanwhile)
        return {topic: 3 for topic in topics}

    monkeypatch.setattr(hand_feed, "_topic_seqs", read_while_it_reopens)

    async def scenario() -> tuple[bool, int | None]:
        waiter = f.wait_future(5, 0)
        await f.read_waited_hands()
        return waiter.done(), f._latest.get(5)

    assert run(scenario()) == (False, None)


def test_a_moves_record_is_handed_to_the_hand_store_not_parsed_as_seqs(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move's record (``"m<hand>:<seq> <JSON>"``, games.live.announce.announce_record) goes
    to ``hand_store.hand_move_heard`` as heard; the seq entries around it wake as before; and a
    process that only makes moves (no waiter) listens from its first move
    (``start_soon``)."""
    import redis

    from games.live.announce import feed_channel
    from tests.faults.harness import free_port, process_stop, redis_server

    heard: list[bytes] = []
    monkeypatch.setattr(hand_feed, "hand_move_heard", heard.append)
    port = free_port()
    server = redis_server(port, tmp_path)
    url = f"redis://127.0.0.1:{port}/0"
    publisher = redis.Redis.from_url(url)

    async def scenario() -> list[int | None]:
        f = HandFeed(url=url, poll_seconds=3600)
        f.start_soon()
        for _ in range(200):
            if f._subscribed.is_set():
                break
            await asyncio.sleep(0.02)
        publisher.publish(feed_channel(), 'm5:7 {"type":"draw"}')
        publisher.publish(feed_channel(), "5:7")
        for _ in range(200):
            if f.seq_known(5) == 7:
                break
            await asyncio.sleep(0.02)
        assert f._started is not None and f._poller is not None
        f._started.cancel()
        f._poller.cancel()
        return [f.seq_known(5)]

    try:
        assert run(scenario()) == [7]
        assert heard == [b'm5:7 {"type":"draw"}']
    finally:
        publisher.close()
        process_stop(server)
