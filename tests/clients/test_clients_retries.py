"""chan_client's retries against a stub HTTP server that answers from a script: 429 and 503 are
waited out for their ``Retry-After``, other 5xx and dropped connections with a jittered
exponential backoff, 4xx are raised at once, and a move keeps its ``Idempotency-Key``."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from chan_client import ApiError, ChanClient, RetryLater, RetryPolicy
from chan_client.bot import choose_move
from chan_client.bot import main as bot_main
from chan_client.client import parse_retry_after

from tests.faults.harness import free_port

PROBLEM = "application/problem+json"


class Stub:
    """Answers each request with the next scripted ``(status, headers, body)``; records them."""

    def __init__(self, script: list[tuple[int, dict[str, str], Any]]) -> None:
        self.script = list(script)
        self.seen: list[tuple[str, str, dict[str, str], Any]] = []


@pytest.fixture
def stub() -> Iterator[tuple[Stub, str]]:
    state = Stub([])

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            state.seen.append((self.command, self.path, dict(self.headers), body))
            status, headers, payload = state.script.pop(0)
            data = json.dumps(payload).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def recording_client(base: str, **policy: Any) -> tuple[ChanClient, list[float]]:
    sleeps: list[float] = []
    client = ChanClient(
        base,
        token="t0ken",
        retry=RetryPolicy(**policy),
        sleep=sleeps.append,
        rng=random.Random(1),
    )
    return client, sleeps


def problem(status: int, code: str, **headers: str) -> tuple[int, dict[str, str], Any]:
    return status, {"Content-Type": PROBLEM, **headers}, {"status": status, "code": code}


def test_429_and_503_wait_for_retry_after_and_other_5xx_back_off(stub) -> None:
    # Given a server that is throttling, then down for a moment, then behind a failing proxy,
    state, base = stub
    state.script = [
        problem(429, "throttled", **{"Retry-After": "1"}),
        problem(503, "service_unavailable", **{"Retry-After": "2"}),
        (502, {"Content-Type": "text/html"}, "bad gateway"),
        (200, {"Content-Type": "application/json"}, {"user_id": 1}),
    ]
    client, sleeps = recording_client(base, base_delay=0.2)
    # when a request is sent,
    assert client.check() == {"user_id": 1}
    # then it was tried four times, waiting for each Retry-After (plus at most base_delay of
    # jitter) and, without one, a jittered backoff of at most base_delay × 2^(attempt-1).
    assert len(state.seen) == 4
    assert 1 <= sleeps[0] <= 1.2 and 2 <= sleeps[1] <= 2.2 and 0 <= sleeps[2] <= 0.8
    assert client.stats.requests == 4 and client.stats.retries == 3
    assert client.stats.statuses == {429: 1, 503: 1, 502: 1, 200: 1}
    # Every attempt carried the token.
    assert all(h["Authorization"] == "Bearer t0ken" for _, _, h, _ in state.seen)


def test_retries_end_with_the_last_answer_raised(stub) -> None:
    state, base = stub
    state.script = [problem(503, "service_unavailable", **{"Retry-After": "1"})] * 3
    client, sleeps = recording_client(base, attempts=3)
    with pytest.raises(ApiError) as raised:
        client.me()
    assert (raised.value.status, raised.value.code) == (503, "service_unavailable")
    assert len(state.seen) == 3 and len(sleeps) == 2


@pytest.mark.parametrize(
    ("status", "code"), [(429, "signup_limit"), (429, "throttled"), (503, "service_unavailable")]
)
def test_a_retry_after_beyond_the_wait_cap_is_raised_at_once_saying_when(
    stub, status, code
) -> None:
    # Given a server that will not take the request again for a day,
    state, base = stub
    state.script = [problem(status, code, **{"Retry-After": "85721"})]
    client, sleeps = recording_client(base, max_delay=5)
    before = datetime.now(UTC)
    # when the client is asked, it neither waits nor retries: it raises at once
    with pytest.raises(RetryLater) as raised:
        client.me()
    assert sleeps == [] and len(state.seen) == 1 and client.stats.retries == 0
    # an ApiError (the refusal's status and code) that says how long and until when.
    error = raised.value
    assert isinstance(error, ApiError) and (error.status, error.code) == (status, code)
    assert error.retry_after == 85721.0
    assert before + timedelta(seconds=85721) <= error.retry_at
    assert error.retry_at <= datetime.now(UTC) + timedelta(seconds=85721)
    assert "retry after 85721 s" in str(error) and error.retry_at.isoformat() in str(error)


def test_a_retry_after_within_the_cap_is_waited_out(stub) -> None:
    state, base = stub
    state.script = [
        problem(429, "throttled", **{"Retry-After": "5"}),
        (200, {"Content-Type": "application/json"}, {}),
    ]
    client, sleeps = recording_client(base, max_delay=5)
    client.me()
    assert sleeps == [5]


def test_chan_bot_stops_at_once_on_a_hopeless_429_saying_when(stub, capsys) -> None:
    # Given a server whose address may sign up no more accounts for a day,
    state, base = stub
    state.script = [
        problem(429, "signup_limit", **{"Retry-After": "85721"}),
        problem(401, "invalid_credentials"),
    ]
    # when chan-bot is started for a new player,
    code = bot_main(["--url", base, "--username", "newbie", "--password", "pw", "--create"])
    # then it asked once (and tried to log in), waited for nothing, and says when to come back.
    out, err = capsys.readouterr()
    assert code == 1 and len(state.seen) == 2
    assert "429 signup_limit" in err and "85721 s" in err and "try again after" in err
    assert json.loads(out.splitlines()[-1])["retries"] == 0


def test_a_4xx_is_raised_at_once_with_its_problem(stub) -> None:
    state, base = stub
    state.script = [problem(409, "stale_seq")]
    client, sleeps = recording_client(base)
    with pytest.raises(ApiError) as raised:
        client.move(1, {"type": "draw"}, expected_seq=3)
    assert (raised.value.status, raised.value.code) == (409, "stale_seq")
    assert sleeps == [] and len(state.seen) == 1


def test_a_retried_move_keeps_its_idempotency_key_and_expected_seq(stub) -> None:
    # Given a move whose first answer is lost to a 503 and whose retry succeeds,
    state, base = stub
    state.script = [
        problem(503, "service_unavailable", **{"Retry-After": "1"}),
        (201, {"Content-Type": "application/json"}, {"seq": 8, "state": {"seq": 8}}),
    ]
    client, _ = recording_client(base)
    assert client.move(5, {"type": "discard", "card": "7N"}, expected_seq=7)["seq"] == 8
    # then both attempts sent the same body and the same key.
    (m1, p1, h1, b1), (m2, p2, h2, b2) = state.seen
    assert (m1, p1) == (m2, p2) == ("POST", "/api/v1/hands/5/moves")
    assert b1 == b2 == {"type": "discard", "card": "7N", "expected_seq": 7}
    assert h1["Idempotency-Key"] == h2["Idempotency-Key"] and len(h1["Idempotency-Key"]) == 32


def test_a_refused_connection_is_retried_then_raised() -> None:
    client, sleeps = recording_client(f"http://127.0.0.1:{free_port()}", attempts=3)
    with pytest.raises(httpx.ConnectError):
        client.check()
    assert len(sleeps) == 2 and client.stats.statuses == {0: 3}


def test_a_long_poll_304_keeps_the_view(stub) -> None:
    state, base = stub
    state.script = [(304, {"ETag": '"5-3"'}, "")]
    client, _ = recording_client(base)
    assert client.hand(5, wait=2, after_seq=3, etag='"5-3"') == (None, '"5-3"')
    method, path, headers, _ = state.seen[0]
    assert path == "/api/v1/hands/5?wait=2&after_seq=3"
    assert headers["If-None-Match"] == '"5-3"'


def test_retry_after_as_an_http_date() -> None:
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


# ---------------------------------------------------------------------------- the bot's choice


def view(hand: list[str], legal: list[dict[str, Any]], mode: str = "basic") -> dict[str, Any]:
    return {"hand": hand, "legal_moves": legal, "mode": mode, "seq": 3, "status": "playing"}


def test_the_bot_says_u_when_offered_in_basic_mode() -> None:
    legal = [{"type": "u", "seat": 1}, {"type": "draw", "seat": 1}]
    assert choose_move(view(["2V", "2V"], legal), random.Random(0)) == legal[0]


def test_the_bot_never_says_u_in_advanced_mode() -> None:
    legal = [{"type": "u", "seat": 1}, {"type": "draw", "seat": 1}]
    assert choose_move(view(["2V", "3N"], legal, "advanced"), random.Random(0)) == legal[1]


def test_the_bot_eats_a_chan_from_a_lone_card() -> None:
    legal = [
        {"type": "eat", "card": "7N", "with": "7V", "seat": 0},
        {"type": "eat", "card": "7N", "with": "7N", "seat": 0},
        {"type": "draw", "seat": 0},
    ]
    assert choose_move(view(["7N", "7V", "9S"], legal), random.Random(0)) == legal[1]


def test_the_bot_throws_its_least_useful_card() -> None:
    hand = ["2V", "2V", "3N", "4S", "4V"]
    legal = [{"type": "discard", "card": c, "seat": 0} for c in ("2V", "3N", "4S", "4V")]
    assert choose_move(view(hand, legal), random.Random(0)) == legal[1]  # the lone 3N


def test_the_bot_has_nothing_to_do_out_of_turn() -> None:
    assert choose_move(view(["2V"], []), random.Random(0)) is None
