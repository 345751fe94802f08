"""The Python client is complete: a method for every operation of the schema on both clients,
the sync client written from the async one, streams decoded and resumed, and the async client
playing a whole hand against the real app."""

from __future__ import annotations

import asyncio
import inspect
import random
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from chan_client import ApiError, AsyncChanClient, ChanClient, RetryPolicy
from chan_client.bot import choose_move
from chan_client.operations import OPERATIONS
from chan_client.streams import SseDecoder, ndjson_event

CLIENT_DIR = Path(__file__).resolve().parents[2] / "clients" / "python"
PASSWORD = "a-long-enough-Passw0rd!"


def schema_operations(schema: dict) -> set[str]:
    return {
        op["operationId"]
        for item in schema["paths"].values()
        for method, op in item.items()
        if method in {"get", "post", "put", "patch", "delete"}
    }


@pytest.fixture(scope="module")
def schema() -> dict:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def test_every_operation_of_the_schema_has_a_method(schema) -> None:
    operations = schema_operations(schema)
    assert operations - set(OPERATIONS) == set(), "operations the client lacks"
    assert set(OPERATIONS) - operations == set(), "methods for operations the server dropped"
    for name in OPERATIONS.values():
        sync, asynchronous = getattr(ChanClient, name), getattr(AsyncChanClient, name)
        assert not inspect.iscoroutinefunction(sync), name
        assert inspect.iscoroutinefunction(asynchronous) or inspect.isasyncgenfunction(
            asynchronous
        ), name


def test_the_sync_client_is_written_from_the_async_one() -> None:
    checked = subprocess.run(
        [sys.executable, str(CLIENT_DIR / "unasync.py"), "--check"], capture_output=True
    )
    assert checked.returncode == 0, checked.stderr.decode()


def test_sse_lines_decode_to_events_and_remember_the_resume_point() -> None:
    decoder = SseDecoder()
    lines = [": heartbeat", "", "id: 4", "event: move", 'data: {"seq": 4}', ""]
    events = [e for e in (decoder.feed(line) for line in lines) if e is not None]
    assert [(e.id, e.event, e.data) for e in events] == [("4", "move", {"seq": 4})]
    assert decoder.last_event_id == "4"
    # multi-line data joins with newlines; retry sets the reconnection delay; an id persists
    for line in ["retry: 1500", "data: a", "data: b", ""]:
        last = decoder.feed(line)
    assert last is not None and (last.id, last.data) == ("4", "a\nb")
    assert decoder.retry_ms == 1500
    assert ndjson_event("") is None
    assert ndjson_event('{"seq": 7, "type": "discard"}').id == "7"


def test_a_dropped_stream_resumes_from_the_last_event_id() -> None:
    seen_resume: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen_resume.append(request.headers.get("Last-Event-ID"))
        if len(seen_resume) == 1:
            return httpx.Response(200, content=b"id: 1\ndata: {\"seq\": 1}\n\nid: 2\ndata: {")
        return httpx.Response(200, content=b"id: 3\ndata: {\"seq\": 3}\n\n")

    class Dropping(httpx.MockTransport):
        calls = 0

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            response = super().handle_request(request)
            Dropping.calls += 1
            if Dropping.calls == 1:  # the first connection breaks after two events
                body = response.content

                def broken():
                    yield body
                    raise httpx.ReadError("connection reset")

                return httpx.Response(200, content=broken())
            return response

    client = ChanClient("http://chan.test", transport=Dropping(handler), sleep=lambda s: None)
    events = list(client.hand_stream(9))
    assert [e.data for e in events] == [{"seq": 1}, {"seq": 3}]
    assert seen_resume == [None, "1"]


def test_the_async_client_retries_a_429_with_the_servers_delay() -> None:
    answers = iter([httpx.Response(429, headers={"Retry-After": "2"}, json={"code": "throttled"})])
    slept: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        return next(answers, httpx.Response(200, json={"presets": []}))

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def run() -> object:
        async with AsyncChanClient(
            "http://chan.test",
            transport=httpx.MockTransport(handler),
            sleep=sleep,
            rng=random.Random(1),
            retry=RetryPolicy(base_delay=0.1),
        ) as client:
            return await client.presets()

    assert asyncio.run(run()) == {"presets": []}
    assert len(slept) == 1 and 2.0 <= slept[0] <= 2.1


@pytest.mark.django_db(transaction=True)
def test_two_async_players_play_a_hand_to_its_end_and_page_their_history(live_server) -> None:
    async def play(client: AsyncChanClient, hand_id: int, rng: random.Random) -> dict:
        view, etag = await client.hand(hand_id)
        assert view is not None
        while view["status"] != "ended":
            move = choose_move(view, rng)
            if move is None:
                fresh, etag = await client.hand(
                    hand_id, wait=5, after_seq=view["seq"], etag=etag
                )
                view = fresh or view
                continue
            try:
                view = (await client.move(hand_id, move, expected_seq=view["seq"]))["state"]
            except ApiError as e:
                assert e.code in {"stale_seq", "not_your_turn", "wrong_phase", "hand_over"}
                view, etag = await client.hand(hand_id)
                assert view is not None
        return view

    async def run() -> None:
        a, b = AsyncChanClient(live_server.url), AsyncChanClient(live_server.url)
        async with a, b:
            await asyncio.gather(
                a.login_or_register("async_a", PASSWORD), b.login_or_register("async_b", PASSWORD)
            )
            table = await a.create_table(name="async", stake=10, max_seats=2)
            await b.join(table["id"])
            await a.ready(table["id"])
            hand_id = (await b.ready(table["id"]))["hand_id"]
            assert hand_id is not None and await a.table_hand(table["id"]) == hand_id
            views = await asyncio.gather(
                play(a, hand_id, random.Random(1)), play(b, hand_id, random.Random(2))
            )
            assert all(v["status"] == "ended" for v in views)
            events = [e async for e in a.all_events(hand_id, wait=1)]
            assert [e["seq"] for e in events] == list(range(len(events)))
            assert len(events) > 1 and events[0]["type"] == "deal"
            history = [h async for h in a.paginate("/api/v1/me/hands", limit=1)]
            assert [h["id"] for h in history] == [hand_id]
            statement = await a.my_ledger(limit=50)
            assert statement["results"], "the settlement is on a's statement"
            assert (await a.me())["username"] == "async_a"

    asyncio.run(run())
