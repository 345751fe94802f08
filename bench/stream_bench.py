"""Thousands of open push streams on one server, one move: does every stream get it, how fast;
then thousands of waiting player-feed long polls, and one entry for every player.

    .venv/bin/python bench/stream_bench.py [--users 500] [--streams 10] [--workers 2]

It starts the production server (gunicorn with uvicorn workers, as ``bench/longpoll_bench.py``)
on a scratch database and the cache's Redis, makes ``--users`` players with tokens and deals a
hand. Then:

1. **streams**: ``users × streams`` Server-Sent Events streams of the hand's events
   (``GET /hands/{id}/events``, ``Accept: text/event-stream``; every user a spectator but the
   hand's four players; 10 per token, the per-token limit), each on its own connection, until
   the server's ``chan_long_polls_waiting`` says they are all open; the server's RSS then;
   one move: the time from sending it until each stream has the frame ``id: <new seq>``.
2. **feed polls**: ``users × streams`` long polls of ``GET /me/feed?after=<head>&wait=30``;
   then one entry for every player, appended in one transaction (what a tournament call to all
   would be): the time from its commit until each poll is answered with it.

It prints one line per phase (``streams: N open, got it G/N, p50 … ms, p99 … ms, rss … MiB``;
``feed polls: …``) and each figure against its goal: all of them, p99 <= 250 ms,
rss <= 1024 MiB.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api_bench import ROOT  # noqa: E402
from chan_client.bot import choose_move  # noqa: E402
from load_bench import add_server_args, quantile, scratch_server  # noqa: E402
from longpoll_bench import (  # noqa: E402
    METRICS_TOKEN,
    Poll,
    call,
    deal,
    make_tokens,
    server_rss_mib,
    waiting_now,
)

GOALS = {"p99_ms": 250.0, "rss_mib": 1024.0}

_BROADCAST = """
import sys
import django
django.setup()
from django.db import transaction
from accounts.models import User
from games.services.feed import FeedNote, feed_append
users = list(User.objects.filter(username__startswith=sys.argv[1]).values_list("pk", flat=True))
import time
with transaction.atomic():
    feed_append(notes=[FeedNote(u, "hand_voided", "bench:call", data={"seq": 0}) for u in users])
    committing = time.time()  # the clock the polls' answers are timed from: the COMMIT next
print(len(users), committing)
"""


class Stream(asyncio.Protocol):
    """One client holding an SSE stream open; it notes when ``marker`` arrives after the move."""

    def __init__(self, token: str, path: str, marker: bytes, done: asyncio.Future[None]) -> None:
        self.request = (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            "Accept: text/event-stream\r\n\r\n"
        ).encode()
        self.marker, self.done = marker, done
        self.tail = b""
        self.status = 0
        self.transport: asyncio.Transport | None = None
        self.answered = 0.0
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        if not self.status and data.startswith(b"HTTP/1.1 "):
            self.status = int(data[9:12])
        window = self.tail + data
        if not self.answered and self.marker in window:
            self.answered = time.perf_counter()
            if not self.done.done():
                self.done.set_result(None)
        self.tail = window[-64:]

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if not self.done.done():
            self.done.set_result(None)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def _open(loop: asyncio.AbstractEventLoop, port: int, clients: list) -> None:
    for start in range(0, len(clients), 250):  # clients arrive in waves, as a lobby fills
        await asyncio.gather(
            *(
                loop.create_connection(lambda c=c: c, "127.0.0.1", port)
                for c in clients[start : start + 250]
            )
        )
        await asyncio.sleep(0.05)


async def _until_waiting(port: int, n: int) -> tuple[int, float]:
    started = time.monotonic()
    waiting = 0
    while time.monotonic() < started + 120:
        waiting = await waiting_now(port)
        if waiting >= n:
            break
        await asyncio.sleep(0.25)
    return waiting, time.monotonic() - started


async def streams_phase(args: argparse.Namespace, port: int, pid: int, tokens: list[str]) -> dict:
    rng = random.Random(args.seed)
    _, hand, players = await deal(port, tokens[:4], "S")
    view = await call(players[0], "GET", f"/api/v1/hands/{hand}")
    seq = view["seq"]
    n = args.users * args.streams
    loop = asyncio.get_running_loop()
    marker = f"\nid: {seq + 1}\n".encode()
    streams = [
        Stream(tokens[i % args.users], f"/api/v1/hands/{hand}/events", marker, loop.create_future())
        for i in range(n)
    ]
    await _open(loop, port, streams)
    waiting, filled_s = await _until_waiting(port, n)
    rss = server_rss_mib(pid)
    for p in players:
        v = await call(p, "GET", f"/api/v1/hands/{hand}")
        move = choose_move(v, rng)
        if move is not None:
            mover = p
            break
    gc.collect()
    gc.freeze()
    sent = time.perf_counter()
    await call(mover, "POST", f"/api/v1/hands/{hand}/moves", {**move, "expected_seq": seq})
    await asyncio.wait([s.done for s in streams], timeout=35)
    got = [s.answered - sent for s in streams if s.answered]
    for s in streams:
        s.close()
    await asyncio.sleep(0.5)
    return {"n": n, "waiting": waiting, "filled_s": filled_s, "latencies": got, "rss": rss}


async def feed_phase(
    args: argparse.Namespace, port: int, pid: int, tokens: list[str], env: dict
) -> dict:
    n = args.users * args.streams
    loop = asyncio.get_running_loop()
    heads = {}
    for t in tokens[: args.users]:
        from longpoll_bench import Connection

        conn = Connection(port, t)
        heads[t] = (await call(conn, "GET", "/api/v1/me/feed?limit=1"))["head"]
        conn.close()
    move_sent = asyncio.Event()
    early: Counter[str] = Counter()
    polls = [
        Poll(
            tokens[i % args.users],
            f"/api/v1/me/feed?after={heads[tokens[i % args.users]]}&wait=30",
            move_sent,
            early,
            loop.create_future(),
        )
        for i in range(n)
    ]
    await _open(loop, port, polls)
    waiting, filled_s = await _until_waiting(port, n)
    rss = server_rss_mib(pid)
    gc.collect()
    gc.freeze()
    move_sent.set()
    wall_minus_perf = time.time() - time.perf_counter()
    prefix = f"lp{os.getpid()}_"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _BROADCAST,
        prefix,
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "chan_api.settings"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    await asyncio.wait([p.done for p in polls], timeout=40)
    out, err = await proc.communicate()
    if proc.returncode:
        raise SystemExit(f"the broadcast failed:\n{err.decode()[-2000:]}")
    committed = float(out.decode().split()[-1]) - wall_minus_perf
    got = [
        p.answered - committed
        for p in polls
        if p.answered and p.status == 200 and b'"hand_voided"' in p.body
    ]
    for p in polls:
        p.close()
    return {
        "n": n,
        "waiting": waiting,
        "filled_s": filled_s,
        "latencies": got,
        "rss": rss,
        "early": early,
    }


async def bench(
    args: argparse.Namespace, port: int, pid: int, tokens: list[str], env: dict
) -> tuple[dict, dict]:
    streams = await streams_phase(args, port, pid, tokens)
    feeds = await feed_phase(args, port, pid, tokens, env)
    return streams, feeds


def _line(name: str, r: dict) -> list[tuple[str, bool, str]]:
    lat = r["latencies"]
    p50 = quantile(lat, 0.5) * 1e3 if lat else float("nan")
    p99 = quantile(lat, 0.99) * 1e3 if lat else float("nan")
    print(
        f"{name}: {r['waiting']} open of {r['n']} ({r['filled_s']:.1f} s to open), got it "
        f"{len(lat)}/{r['n']}, p50 {p50:.0f} ms, p99 {p99:.0f} ms, rss {r['rss']:.0f} MiB"
    )
    return [
        (f"{name} all", len(lat) == r["n"], f"{len(lat)}/{r['n']}"),
        (f"{name} p99", p99 <= GOALS["p99_ms"], f"{p99:.0f} ms <= {GOALS['p99_ms']:g}"),
        (
            f"{name} rss",
            r["rss"] <= GOALS["rss_mib"],
            f"{r['rss']:.0f} MiB <= {GOALS['rss_mib']:g}",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_server_args(p, scratch="chan_stream_bench")
    p.add_argument("--users", type=int, default=500)
    p.add_argument("--streams", type=int, default=10, help="streams (and feed polls) per user")
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
        try:
            import uvloop

            streams, feeds = uvloop.run(bench(args, server.port, server.pid, tokens, server.env))
        except ImportError:
            streams, feeds = asyncio.run(bench(args, server.port, server.pid, tokens, server.env))
    print(
        f"server: gunicorn + uvicorn workers x {args.workers}; PostgreSQL; Redis {server.cache}; "
        f"{args.users} users x {args.streams}"
    )
    checks = _line("streams", streams) + _line("feed polls", feeds)
    if feeds["early"]:
        print(
            f"feed polls answered before the entry (timeouts, polled again): {dict(feeds['early'])}"
        )
    for name, ok, text in checks:
        print(f"  {name:<16}{text:<28}{'ok' if ok else 'MISS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
