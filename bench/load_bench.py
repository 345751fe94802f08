"""Throughput under load against its own floor: bots with no think time at many tables at once.

    .venv/bin/python bench/load_bench.py [--tables 16] [--bots 4] [--seconds 20] [--workers 2]

It starts gunicorn on a scratch database exactly as ``bench/api_bench.py`` does (its helpers,
imported), registers ``tables × bots`` players through the API and seats ``bots`` of them at each
of ``tables`` tables (stake 10, shuffled decks: no fixed deck). Then one thread per bot, each with
its own keep-alive connection, plays hands for ``--seconds`` with no think time and no long poll:

* read its view (``GET /api/v1/hands/{id}``); when the view offers legal moves, send the one the
  chan-bot client would (``chan_client.bot.choose_move``: the rules core's heuristic on the seat's
  own view) with ``expected_seq``, and carry on from the state the move returns;
* when the hand has ended, say ready; the last ready deals the next hand, the others read the
  table until it shows the new hand.

A refused move (``stale_seq`` …) or any other status outside 2xx is counted by status and code and
the bot reads its view again. The cache's Redis database (``--cache``, db 15 by default; also
the broker of the clock's wake-ups, which nothing consumes here) is emptied at the start. Then the floor (``GET /api/v1/auth/check``) is driven by as many
threads, each on its own keep-alive connection, for as long. It prints moves/s, p50/p99 of moves
and reads, errors by status, the floor's requests/s and the ratio of the game's requests/s (moves,
reads, readies, table reads) to the floor's. Goal (issue 14): ratio >= 0.35.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api_bench import (  # noqa: E402
    ROOT,
    Player,
    free_port,
    redis_answers,
    scratch_database,
    server_env,
    start_gunicorn,
    wait_until_up,
)
from chan_client.bot import choose_move  # noqa: E402

GOAL = 0.35
STAKE = 10


@dataclass
class Tally:
    """What one thread did: latencies by kind, requests, moves, errors by status and code."""

    seconds: dict[str, list[float]] = field(default_factory=dict)
    requests: int = 0
    ended: set[int] = field(default_factory=set)
    errors: Counter[str] = field(default_factory=Counter)

    def timed(self, player: Player, kind: str, method: str, path: str, body=None):
        try:
            elapsed, status, data, _ = player.timed(method, path, body)
        except (OSError, http.client.HTTPException) as e:  # counted; the next call reconnects
            player.conn.close()
            self.errors[f"connection {type(e).__name__}"] += 1
            return 0, None
        self.requests += 1
        self.seconds.setdefault(kind, []).append(elapsed)
        if not 200 <= status < 300:
            code = data.get("code", "") if isinstance(data, dict) else ""
            self.errors[f"{status} {code}".strip()] += 1
        return status, data

    def merge(self, other: Tally) -> None:
        for kind, values in other.seconds.items():
            self.seconds.setdefault(kind, []).extend(values)
        self.requests += other.requests
        self.ended |= other.ended
        self.errors.update(other.errors)


def play_bot(
    player: Player, table_id: int, rng: random.Random, start: threading.Barrier, stop_at: list
) -> Tally:
    """One bot's loop until ``stop_at[0]`` (set by the main thread once all are at the barrier)."""
    tally = Tally()
    start.wait()
    deadline = stop_at[0]
    previous: int | None = None
    hand_id: int | None = None
    view: dict | None = None
    readied = False
    while time.monotonic() < deadline:
        if hand_id is None:
            if not readied:
                status, data = tally.timed(
                    player, "ready", "POST", f"/api/v1/tables/{table_id}/ready"
                )
                readied = status in (200, 409)  # 409 hand_in_progress: another's ready dealt
                if status == 200 and data.get("hand_id") not in (None, previous):
                    hand_id = data["hand_id"]
            if hand_id is None and readied:  # dealt by the last ready: read the table
                status, data = tally.timed(player, "table", "GET", f"/api/v1/tables/{table_id}")
                current = data.get("current_hand_id") if status == 200 else None
                if current is not None and current != previous:
                    hand_id = current
            view = None
            continue
        if view is None:
            status, data = tally.timed(player, "read", "GET", f"/api/v1/hands/{hand_id}")
            if status != 200:
                continue
            view = data
        if view["status"] == "ended":
            tally.ended.add(hand_id)
            previous, hand_id, view, readied = hand_id, None, None, False
            continue
        move = choose_move(view, rng)
        if move is None:  # not my turn: read again, no think time, no long poll
            view = None
            continue
        status, data = tally.timed(
            player,
            "move",
            "POST",
            f"/api/v1/hands/{hand_id}/moves",
            {**move, "expected_seq": view["seq"]},
        )
        view = data["state"] if status == 201 else None
    return tally


def drive_floor(player: Player, start: threading.Barrier, stop_at: list) -> Tally:
    tally = Tally()
    start.wait()
    deadline = stop_at[0]
    while time.monotonic() < deadline:
        tally.timed(player, "floor", "GET", "/api/v1/auth/check")
    return tally


def run_threads(target, argsets: list[tuple], seconds: float) -> tuple[Tally, float]:
    """Run ``target(*args, barrier, stop_at)`` in one thread per argset; merged tally, elapsed."""
    barrier = threading.Barrier(len(argsets) + 1)
    stop_at = [0.0]
    results: list[Tally | BaseException] = [Tally()] * len(argsets)

    def work(i: int, args: tuple) -> None:
        try:
            results[i] = target(*args, barrier, stop_at)
        except BaseException as e:  # reported below, with the others' figures
            results[i] = e

    threads = [
        threading.Thread(target=work, args=(i, a), daemon=True) for i, a in enumerate(argsets)
    ]
    for t in threads:
        t.start()
    stop_at[0] = time.monotonic() + seconds
    started = time.monotonic()
    barrier.wait()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    total = Tally()
    for r in results:
        if isinstance(r, BaseException):
            total.errors[f"exception {type(r).__name__}: {r}"[:100]] += 1
        else:
            total.merge(r)
    return total, elapsed


def scratch_cache(url: str) -> None:
    """Empty the cache's Redis database (FLUSHDB): its keys name hands by id, and a scratch
    database starts its ids again at 1. The database must be the bench's own (default: 15)."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port or 6379), timeout=5) as s:
        s.sendall(f"SELECT {parts.path.strip('/') or 0}\r\nFLUSHDB\r\n".encode())
        answer = b""
        while answer.count(b"\r\n") < 2:
            chunk = s.recv(64)
            if not chunk:
                break
            answer += chunk
    if answer != b"+OK\r\n+OK\r\n":
        raise SystemExit(f"could not empty the cache database {url}: {answer!r}")


def quantile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def setup_tables(port: int, tables: int, bots: int) -> list[tuple[Player, int]]:
    """Register ``tables × bots`` players and seat ``bots`` of them at each new table."""
    suffix = os.getpid()
    seated = []
    for t in range(tables):
        players = [Player(port, f"load{suffix}_{t}_{b}") for b in range(bots)]
        status, table, _ = players[0].call(
            "POST",
            "/api/v1/tables",
            {"name": f"load {suffix} #{t}", "stake": STAKE, "max_seats": bots},
        )
        assert status == 201, table
        for p in players[1:]:
            status, data, _ = p.call("POST", f"/api/v1/tables/{table['id']}/join", {})
            assert status == 200, data
        seated += [(p, table["id"]) for p in players]
    return seated


def report(game: Tally, game_s: float, floor: Tally, floor_s: float, args, cache) -> float:
    moves = game.seconds.get("move", [])
    reads = game.seconds.get("read", [])
    floors = floor.seconds.get("floor", [])
    game_rps = game.requests / game_s
    floor_rps = floor.requests / floor_s
    ratio = game_rps / floor_rps if floor_rps else float("nan")
    threads = args.tables * args.bots
    print(
        f"gunicorn + uvicorn (ASGI), {args.workers} workers; PostgreSQL; cache: {cache or 'locmem'}; "
        f"{args.tables} tables x {args.bots} bots = {threads} threads, no think time, "
        f"{args.seconds:g} s each"
    )
    print(
        f"game: {game.requests} requests in {game_s:.1f} s = {game_rps:.1f} req/s; "
        f"{len(moves)} moves = {len(moves) / game_s:.1f} moves/s; {len(game.ended)} hands ended"
    )
    print(f"{'request':<8}{'n':>8}{'p50 ms':>9}{'p99 ms':>9}")
    for name, values in (("move", moves), ("read", reads), ("floor", floors)):
        print(
            f"{name:<8}{len(values):>8}{quantile(values, 0.5) * 1e3:>9.2f}{quantile(values, 0.99) * 1e3:>9.2f}"
        )
    errors = game.errors + floor.errors
    print("errors: " + (", ".join(f"{k}: {v}" for k, v in sorted(errors.items())) or "none"))
    print(f"floor: {floor.requests} requests in {floor_s:.1f} s = {floor_rps:.1f} req/s")
    verdict = "ok" if ratio >= GOAL else "MISS"
    print(f"ratio game/floor req/s: {ratio:.2f}  (goal >= {GOAL:g} {verdict})")
    return ratio


def add_server_args(p: argparse.ArgumentParser, *, scratch: str) -> None:
    """The options of a bench that serves a scratch database with gunicorn."""
    p.add_argument(
        "--db",
        default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    p.add_argument("--scratch", default=scratch, help="the scratch database's name")
    p.add_argument(
        "--cache", default=os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/15")
    )
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)


@dataclass
class ScratchServer:
    port: int
    env: dict[str, str]
    database_url: str
    cache: str | None
    pid: int  # gunicorn's: its workers are in its process group


@contextmanager
def scratch_server(
    args: argparse.Namespace, extra_env: dict[str, str] | None = None
) -> Iterator[ScratchServer]:
    """gunicorn on a freshly migrated scratch database (and an emptied cache database), stopped
    on the way out."""
    database_url = scratch_database(args.db, args.scratch)
    cache = args.cache if redis_answers(args.cache) else None
    if cache:
        scratch_cache(cache)
    port = free_port()
    env = {**server_env(database_url, cache, port, args.workers), **(extra_env or {})}
    if cache:  # the clock's wake-ups go to the cache's own database (nothing consumes them)
        env["CELERY_BROKER_URL"] = cache
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    server = start_gunicorn(env)
    try:
        wait_until_up(port, server)
        yield ScratchServer(port, env, database_url, cache, server.pid)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=35)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_server_args(p, scratch="chan_load_bench")
    p.add_argument("--tables", type=int, default=16)
    p.add_argument("--bots", type=int, default=4, help="bots (seats) per table")
    p.add_argument("--seconds", type=float, default=20.0)
    args = p.parse_args(argv)

    with scratch_server(args) as server:
        port, cache = server.port, server.cache
        seated = setup_tables(port, args.tables, args.bots)
        rng = random.Random(args.seed)
        for p, _ in seated:  # idle since setup, maybe past gunicorn's keep-alive: reconnect
            p.conn.close()
        bots = [(p, table_id, random.Random(rng.random())) for p, table_id in seated]
        game, game_s = run_threads(play_bot, bots, args.seconds)
        floor, floor_s = run_threads(drive_floor, [(p,) for p, _ in seated], args.seconds)
        report(game, game_s, floor, floor_s, args, cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
