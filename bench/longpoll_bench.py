"""Thousands of waiting long polls on one server, and one move that wakes them all.

    .venv/bin/python bench/longpoll_bench.py [--users 500] [--polls 10] [--workers 2]

It starts the production server (gunicorn with uvicorn workers, ``deploy/gunicorn.conf.py``) on
a scratch database and the cache's Redis (``bench/load_bench.py``'s scratch server), makes
``--users`` players with tokens, and deals two hands: A, whose waiters are measured, and B,
whose moves are timed. Then:

1. **idle**: ``--moves`` moves on hand B, one after another, none waiting: their round trips;
2. ``users × polls`` long polls (``GET /hands/A?wait=30&after_seq=S``, every user a spectator
   but A's four players, 10 polls per token: the per-token limit) are opened on their own
   connections by one asyncio client, until the server's ``chan_long_polls_waiting`` says they
   all wait; the server's memory (RSS of gunicorn and its workers) is read then;
3. **busy**: ``--moves`` moves on hand B while they wait: their round trips;
4. one move on hand A: every poll's answer time from the moment the move was sent, and whether
   it is a 200 at the new seq.

It prints ``long polls: N waiting, woken W/N, p50 … ms, p99 … ms, rss … MiB, move … x idle``,
then each figure against its goal: woken N/N, p99 <= 250 ms, rss <= 1024 MiB,
move <= 2x idle (the medians' ratio).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api_bench import ROOT  # noqa: E402
from chan_client.bot import choose_move  # noqa: E402
from load_bench import add_server_args, quantile, scratch_server  # noqa: E402

GOALS = {"p99_ms": 250.0, "rss_mib": 1024.0, "move_x_idle": 2.0}
METRICS_TOKEN = "bench-metrics-token-0123456789"

# Users and tokens are made in the scratch database directly: registering 500 users through the
# API would spend minutes hashing passwords, which is not what this bench measures.
_MAKE_USERS = """
import json, sys
import django
django.setup()
from accounts.ledger import welcome_grant_book
from accounts.models import User
from accounts.services import token_create
tokens = []
for i in range(int(sys.argv[1])):
    user = User.objects.create_user(username=f"lp{sys.argv[2]}_{i}", password=None)
    welcome_grant_book(user=user)
    tokens.append(token_create(user=user)[1])
print(json.dumps(tokens))
"""


def make_tokens(env: dict, n: int) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", _MAKE_USERS, str(n), str(os.getpid())],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "chan_api.settings"},
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise SystemExit(f"making the users failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------- a small client


class Connection:
    """One keep-alive HTTP/1.1 connection (asyncio streams; the bench's own CPU stays small)."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: object = None) -> tuple[int, bytes]:
        """One request; once more on a new connection if the server closed an idle one."""
        try:
            return await self._request(method, path, body)
        except (asyncio.IncompleteReadError, ConnectionError):
            self.close()
            return await self._request(method, path, body)

    async def _request(self, method: str, path: str, body: object) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        payload = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {self.token}\r\nContent-Length: {len(payload)}\r\n"
            + ("Content-Type: application/json\r\n" if payload else "")
            + "\r\n"
        )
        self.writer.write(head.encode() + payload)
        return await self.response()

    async def response(self) -> tuple[int, bytes]:
        assert self.reader is not None
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
        body = await self.reader.readexactly(length) if length else b""
        return status, body

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class Poll(asyncio.Protocol):
    """One client keeping a long poll waiting on its own connection: it polls again whenever
    one ends before the move (a timeout), as real clients do; the answer after the move is kept,
    with the time it arrived. A bare protocol, not streams: the bench shares the server's CPUs,
    and reading 5,000 answers through streams cost it four times as much."""

    def __init__(
        self,
        token: str,
        path: str,
        move_sent: asyncio.Event,
        early: Counter[str],
        done: asyncio.Future[None],
    ) -> None:
        self.request = (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n"
        ).encode()
        self.move_sent, self.early, self.done = move_sent, early, done
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.status, self.body, self.answered = 0, b"", 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buffer[: end + 2]).lower()  # (with the last line's CRLF)
        at = head.find(b"\r\ncontent-length:")
        length = int(head[at + 17 : head.find(b"\r\n", at + 2)]) if at >= 0 else 0
        if len(self.buffer) < end + 4 + length:
            return
        status, body = int(head[9:12]), bytes(self.buffer[end + 4 : end + 4 + length])
        del self.buffer[: end + 4 + length]
        if not self.move_sent.is_set():
            self.early[str(status)] += 1
            self.transport.write(self.request)  # type: ignore[union-attr]
            return
        self.status, self.body, self.answered = status, body, time.perf_counter()
        if not self.done.done():
            self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.early["connection lost"] += 1
            self.done.set_result(None)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def call(conn: Connection, method: str, path: str, body: object = None) -> object:
    status, raw = await conn.request(method, path, body)
    data = json.loads(raw) if raw else None
    if not 200 <= status < 300:
        raise SystemExit(f"{method} {path}: {status} {data}")
    return data


async def ready_all(players: list[Connection], table_id: int) -> int:
    """Everyone says ready; the last one deals: the new hand's id."""
    hand_id = None
    for p in players:
        data = await call(p, "POST", f"/api/v1/tables/{table_id}/ready", {})
        hand_id = data["hand_id"] or hand_id
    assert hand_id is not None
    return hand_id


async def deal(port: int, tokens: list[str], name: str) -> tuple[int, int, list[Connection]]:
    """A table of four (stake 10) with these tokens, everyone ready: (table, hand, players)."""
    players = [Connection(port, t) for t in tokens]
    table = await call(players[0], "POST", "/api/v1/tables", {"name": name, "stake": 10})
    for p in players[1:]:
        await call(p, "POST", f"/api/v1/tables/{table['id']}/join", {})
    return table["id"], await ready_all(players, table["id"]), players


async def one_move(players: list[Connection], hand_id: int, rng: random.Random) -> float | None:
    """The seat whose turn it is makes the chan-bot's move: its round trip (None: hand over)."""
    for p in players:
        view = await call(p, "GET", f"/api/v1/hands/{hand_id}")
        if view["status"] == "ended":
            return None
        move = choose_move(view, rng)
        if move is not None:
            body = {**move, "expected_seq": view["seq"]}
            started = time.perf_counter()
            await call(p, "POST", f"/api/v1/hands/{hand_id}/moves", body)
            return time.perf_counter() - started
    return None


class TimedTable:
    """Hand B's table: moves timed one after another, the next hand dealt when one ends."""

    def __init__(self, port: int, tokens: list[str], rng: random.Random) -> None:
        self.port, self.tokens, self.rng = port, tokens, rng
        self.table_id = self.hand_id = 0
        self.players: list[Connection] = []

    async def moves(self, n: int) -> list[float]:
        if not self.players:
            self.table_id, self.hand_id, self.players = await deal(self.port, self.tokens, "B")
        times: list[float] = []
        while len(times) < n:
            took = await one_move(self.players, self.hand_id, self.rng)
            if took is None:
                self.hand_id = await ready_all(self.players, self.table_id)
            else:
                times.append(took)
        return times


async def waiting_now(port: int) -> int:
    conn = Connection(port, METRICS_TOKEN)
    status, raw = await conn.request("GET", "/metrics")
    conn.close()
    if status != 200:
        raise SystemExit(f"GET /metrics: {status} {raw[:300]!r}")
    for line in raw.decode().splitlines():
        if line.startswith("chan_long_polls_waiting"):
            return int(float(line.split()[-1]))
    return 0


def server_rss_mib(root_pid: int) -> float:
    """The resident memory of the server's process group (gunicorn and its workers)."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.getpgid(int(pid)) != root_pid:
                continue
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except (OSError, ProcessLookupError):
            continue
    return total / 1024


async def bench(args: argparse.Namespace, port: int, server_pid: int, tokens: list[str]) -> dict:
    rng = random.Random(args.seed)
    _, hand_a, players_a = await deal(port, tokens[:4], "A")
    table_b = TimedTable(port, tokens[4:8], rng)
    idle = await table_b.moves(args.moves)

    view = await call(players_a[0], "GET", f"/api/v1/hands/{hand_a}")
    seq = view["seq"]
    path = f"/api/v1/hands/{hand_a}?wait=30&after_seq={seq}"
    n = args.users * args.polls
    early: Counter[str] = Counter()  # answers before the move (timeouts), by status
    move_sent = asyncio.Event()
    sent_at = [0.0]
    loop = asyncio.get_running_loop()
    polls = [
        Poll(tokens[i % args.users], path, move_sent, early, loop.create_future()) for i in range(n)
    ]
    for start in range(0, n, 250):  # clients arrive in waves, as a lobby fills
        await asyncio.gather(
            *(
                loop.create_connection(lambda p=p: p, "127.0.0.1", port)
                for p in polls[start : start + 250]
            )
        )
        await asyncio.sleep(0.05)
    tasks = [p.done for p in polls]
    filling = time.monotonic()
    waiting = 0
    while time.monotonic() < filling + 120:
        waiting = await waiting_now(port)
        if waiting >= len(polls):
            break
        await asyncio.sleep(0.25)
    filled_s = time.monotonic() - filling
    rss = server_rss_mib(server_pid)

    busy = await table_b.moves(args.moves)

    mover_view = None
    for p in players_a:
        v = await call(p, "GET", f"/api/v1/hands/{hand_a}")
        if choose_move(v, rng) is not None:
            mover_view, mover = v, p
            break
    assert mover_view is not None
    # The client's 5,000 connections are long-lived: out of its collector's reach, so that a
    # full collection of the client does not pause the reading of the answers it times.
    gc.collect()
    gc.freeze()
    sent_at[0] = time.perf_counter()
    move_sent.set()
    await call(
        mover,
        "POST",
        f"/api/v1/hands/{hand_a}/moves",
        {**choose_move(mover_view, rng), "expected_seq": seq},
    )
    await asyncio.wait(tasks, timeout=35)
    woken = sum(1 for p in polls if p.status == 200 and json.loads(p.body)["seq"] > seq)
    latencies = [p.answered - sent_at[0] for p in polls if p.answered >= sent_at[0]]
    for p in polls:
        p.close()
    return {
        "n": n,
        "waiting": waiting,
        "early": early,
        "filled_s": filled_s,
        "woken": woken,
        "latencies": latencies,
        "rss": rss,
        "idle": idle,
        "busy": busy,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_server_args(p, scratch="chan_longpoll_bench")
    p.add_argument("--users", type=int, default=500)
    p.add_argument("--polls", type=int, default=10, help="long polls per user (the limit: 10)")
    p.add_argument("--moves", type=int, default=15, help="moves timed idle and busy")
    args = p.parse_args(argv)
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with (
        tempfile.TemporaryDirectory() as metrics_dir,
        scratch_server(
            args,
            extra_env={"METRICS_TOKEN": METRICS_TOKEN, "PROMETHEUS_MULTIPROC_DIR": metrics_dir},
        ) as server,
    ):
        tokens = make_tokens(server.env, args.users)
        try:  # the client's own loop costs less CPU on uvloop (uvicorn's, installed with it)
            import uvloop

            r = uvloop.run(bench(args, server.port, server.pid, tokens))
        except ImportError:
            r = asyncio.run(bench(args, server.port, server.pid, tokens))
    lat = r["latencies"]
    p50, p99 = (
        quantile(lat, 0.5) * 1e3 if lat else float("nan"),
        quantile(lat, 0.99) * 1e3 if lat else float("nan"),
    )
    ratio = statistics.median(r["busy"]) / statistics.median(r["idle"])
    print(
        f"server: gunicorn + uvicorn workers x {args.workers}; PostgreSQL; Redis {server.cache}; "
        f"{args.users} users x {args.polls} polls"
    )
    print(
        f"moves on another hand: idle p50 {statistics.median(r['idle']) * 1e3:.1f} ms, "
        f"while they wait p50 {statistics.median(r['busy']) * 1e3:.1f} ms"
    )
    print(
        f"{r['waiting']} of {r['n']} waiting {r['filled_s']:.1f} s after the last was sent; "
        f"answered before the move (timeouts, polled again), by status: {dict(r['early'])}"
    )
    print(
        f"long polls: {r['waiting']} waiting, woken {r['woken']}/{r['n']}, p50 {p50:.0f} ms, "
        f"p99 {p99:.0f} ms, rss {r['rss']:.0f} MiB, move {ratio:.2f} x idle"
    )
    checks = [
        ("woken", r["woken"] == r["n"], f"{r['woken']}/{r['n']}"),
        ("p99", p99 <= GOALS["p99_ms"], f"{p99:.0f} ms <= {GOALS['p99_ms']:g}"),
        ("rss", r["rss"] <= GOALS["rss_mib"], f"{r['rss']:.0f} MiB <= {GOALS['rss_mib']:g}"),
        ("move", ratio <= GOALS["move_x_idle"], f"{ratio:.2f} x <= {GOALS['move_x_idle']:g}"),
    ]
    for name, ok, text in checks:
        print(f"  {name:<6}{text:<28}{'ok' if ok else 'MISS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
