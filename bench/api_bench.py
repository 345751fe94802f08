"""API speed against its own floor: gunicorn + PostgreSQL, driven over HTTP from this process.

    .venv/bin/python bench/api_bench.py [--rounds 400] [--hands 8] [--workers 2]

It creates a scratch database (the one ``--db`` names, ``chan_bench`` when that is ``postgres``; dropped first), migrates
it, starts ``gunicorn -c deploy/gunicorn.conf.py chan_api.asgi:application`` on a free port
(Redis cache when ``--cache`` answers), registers four players and plays whole hands through the API: the moves are
those a heuristic bot chooses on a replay of the same fixed deck in this process, so every move
is legal and every hand ends. One keep-alive connection per player; requests are sequential, so
the figures are latencies, not throughput.

Measured, interleaved round by round so that drift hits all of them alike:

* floor: ``GET /api/v1/auth/check`` — an authenticated GET that reads one row (the token and its user);
* state read: ``GET /api/v1/hands/{id}`` — the caller's full view (200 with an ETag);
* 304 poll: the same GET with ``If-None-Match`` of the current ETag;
* move: ``POST /api/v1/hands/{id}/moves`` with ``expected_seq`` (lock, validate, append, cache);
  beside it, with no target, the last move of each hand (it ends the hand: the players' tail
  under load) and the ``ready`` that deals each hand (the last player's).

It prints the median and p90 of each and their ratio to the floor's median measured in the same
run. Targets: move <= 2x,
state read <= 1.2x, 304 <= 1.0x.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from games.rules import HandConfig, Phase, apply, new_hand, shuffle  # noqa: E402
from games.rules.bots import HeuristicBot  # noqa: E402
from games.rules.cards import code  # noqa: E402
from games.rules.ruleset import build_ruleset  # noqa: E402

PASSWORD = "bench-Passw0rd-long-enough"
TARGETS = {"state read": 1.2, "304 poll": 1.0, "move": 2.0}


# --------------------------------------------------------------------------- server


def free_port() -> int:
    with closing(socket.socket()) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scratch_database(server_url: str, name: str) -> str:
    """Drop and create ``name`` on the server of ``server_url``; return its URL."""
    import psycopg

    parts = urlsplit(server_url)
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(maintenance, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def redis_answers(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port or 6379), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def server_env(database_url: str, cache_url: str | None, port: int, workers: int) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-not-for-production-0123456789",
        "CHAN_RECORD_KEY": os.environ.get("CHAN_RECORD_KEY")
        or "bench:YmVuY2gtb25seS1yZWNvcmQta2V5LW5vdC1zZWNyZXQ=",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CHAN_ALLOW_FIXED_DECK": "1",
        "THROTTLE_USER": "100000000/min",
        "THROTTLE_ANON": "100000000/min",
        "THROTTLE_AUTH": "100000000/min",
        "CHAN_SIGNUPS_PER_ADDRESS_PER_DAY": "0",
        "LOG_LEVEL": "WARNING",
        "BIND": f"127.0.0.1:{port}",
        "WEB_WORKERS": str(workers),
        "CELERY_TASK_ALWAYS_EAGER": "0",
    }
    env.pop("CACHE_URL", None)
    if cache_url:
        env["CACHE_URL"] = cache_url
        # Each move wakes the clock through the broker, as in production (nothing consumes the
        # wake-ups here: no worker runs, so no automatic move disturbs the scripted hands).
        # The cache's own database: another Redis database may be someone else's broker.
        env["CELERY_BROKER_URL"] = cache_url
    return env


def start_gunicorn(env: dict) -> subprocess.Popen:
    gunicorn = Path(sys.executable).with_name("gunicorn")
    return subprocess.Popen(
        [
            str(gunicorn),
            "-c",
            "deploy/gunicorn.conf.py",
            "--access-logfile",
            "/dev/null",
            "chan_api.asgi:application",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        # A file, not a pipe: nobody reads a pipe while the bench runs, and once its buffer is
        # full every thread that logs would block on it.
        stderr=tempfile.TemporaryFile(),
        start_new_session=True,
    )


def wait_until_up(port: int, proc: subprocess.Popen, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            proc.stderr.seek(0)
            raise SystemExit("gunicorn exited:\n" + proc.stderr.read().decode(errors="replace"))
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/v1/rules/presets")
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("gunicorn did not come up")


# --------------------------------------------------------------------------- client


class Player:
    """One player: a keep-alive connection and a bearer token."""

    def __init__(self, port: int, name: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Content-Type": "application/json"}
        status, body, _ = self.call(
            "POST", "/api/v1/auth/register", {"username": name, "password": PASSWORD}
        )
        assert status == 201, body
        self.headers["Authorization"] = f"Bearer {body['token']}"

    def call(
        self, method: str, path: str, body: Any = None, headers: dict | None = None
    ) -> tuple[int, Any, http.client.HTTPResponse]:
        payload = None if body is None else json.dumps(body)
        try:
            self.conn.request(method, path, payload, {**self.headers, **(headers or {})})
            response = self.conn.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # the server closed the keep-alive connection while this player idled (a loaded
            # machine): once more on a new one (a repeated move would be refused, not doubled)
            self.conn.close()
            self.conn.request(method, path, payload, {**self.headers, **(headers or {})})
            response = self.conn.getresponse()
        raw = response.read()
        return response.status, (json.loads(raw) if raw else None), response

    def timed(self, method: str, path: str, body: Any = None, headers: dict | None = None):
        started = time.perf_counter()
        status, data, response = self.call(method, path, body, headers)
        return time.perf_counter() - started, status, data, response


@dataclass
class Samples:
    seconds: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, value: float) -> None:
        self.seconds.setdefault(name, []).append(value)


def expect(status: int, wanted: int, data: Any) -> None:
    if status != wanted:
        raise SystemExit(f"unexpected {status} (wanted {wanted}): {data}")


def scripted_hand(seed: str) -> tuple[list[str], list[dict]]:
    """A shuffled deck and the moves four heuristic bots make on it (dealer = seat 0)."""
    deck = shuffle(seed.encode())
    state = new_hand(HandConfig(4, ruleset=build_ruleset({})), deck, 0)
    bots = [HeuristicBot(random.Random(f"{seed}:{s}")) for s in range(4)]
    moves = []
    while state.phase is not Phase.ENDED:
        move = bots[state.turn].choose(state, state.turn)
        moves.append(move.to_dict())
        state = apply(state, move)
    return [code(k) for k in deck], moves


def play_hand(players: list[Player], seed: str, samples: Samples, read_rounds: int = 0) -> None:
    """Play one scripted hand, timing each move; halfway through, time ``read_rounds`` reads."""
    deck, moves = scripted_hand(seed)
    status, table, _ = players[0].call(
        "POST", "/api/v1/tables", {"name": f"bench {seed}", "stake": 1, "deck": deck, "dealer": 0}
    )
    expect(status, 201, table)
    for p in players[1:]:
        status, data, _ = p.call("POST", f"/api/v1/tables/{table['id']}/join", {})
        expect(status, 200, data)
    for p in players:  # the last one deals
        elapsed, status, data, _ = p.timed("POST", f"/api/v1/tables/{table['id']}/ready", {})
        expect(status, 200, data)
    samples.add("ready (deal)", elapsed)
    hand_id = data["hand_id"]
    for seq, move in enumerate(moves):
        if read_rounds and seq == len(moves) // 2:
            measure_reads(players, hand_id, 20, Samples())  # warm-up, not counted
            measure_reads(players, hand_id, read_rounds, samples)
        player = players[move["seat"]]
        elapsed, status, data, _ = player.timed(
            "POST", f"/api/v1/hands/{hand_id}/moves", {**move, "expected_seq": seq}
        )
        expect(status, 201, data)
        samples.add("move", elapsed)
        if seq == len(moves) - 1:
            samples.add("last move", elapsed)  # (it ends the hand: also one of the moves)
        samples.add("floor (moves)", player.timed("GET", "/api/v1/auth/check")[0])


def measure_reads(players: list[Player], hand_id: int, rounds: int, samples: Samples) -> None:
    path = f"/api/v1/hands/{hand_id}"
    for i in range(rounds):
        player = players[i % len(players)]
        elapsed, status, data, _ = player.timed("GET", "/api/v1/auth/check")
        expect(status, 200, data)
        samples.add("floor", elapsed)
        elapsed, status, data, response = player.timed("GET", path)
        expect(status, 200, data)
        samples.add("state read", elapsed)
        etag = response.getheader("ETag")
        elapsed, status, data, _ = player.timed("GET", path, headers={"If-None-Match": etag})
        expect(status, 304, data)
        samples.add("304 poll", elapsed)


def p90_of(values: list[float]) -> float:
    """The 90th percentile (the one value of a single sample: a hand's last move in one hand)."""
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


def report(samples: Samples, args: argparse.Namespace, cache: str | None) -> None:
    med = {k: statistics.median(v) for k, v in samples.seconds.items()}
    p90 = {k: p90_of(v) for k, v in samples.seconds.items()}
    floors = {
        "move": "floor (moves)",
        "last move": "floor (moves)",
        "ready (deal)": "floor (moves)",
    }
    print(
        f"gunicorn + uvicorn (ASGI), {args.workers} workers; PostgreSQL; cache: {cache or 'locmem'}; "
        f"{args.rounds} read rounds; {len(samples.seconds['move'])} moves in {args.hands} hands"
    )
    print(f"{'request':<14}{'n':>6}{'median ms':>11}{'p90 ms':>9}{'x floor':>9}{'target':>8}")
    for name in (
        "floor",
        "state read",
        "304 poll",
        "floor (moves)",
        "move",
        "last move",
        "ready (deal)",
    ):
        floor = med[floors.get(name, "floor")]
        ratio = med[name] / floor
        target = TARGETS.get(name)
        verdict = "" if target is None else f"<={target:g} {'ok' if ratio <= target else 'MISS'}"
        print(
            f"{name:<14}{len(samples.seconds[name]):>6}{med[name] * 1e3:>11.2f}"
            f"{p90[name] * 1e3:>9.2f}{ratio:>9.2f}  {verdict}"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--db",
        default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    p.add_argument("--cache", default=os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/3"))
    p.add_argument("--rounds", type=int, default=400)
    p.add_argument("--hands", type=int, default=8)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", default="bench")
    args = p.parse_args(argv)

    # The scratch database: the one --db names (so that parallel runs can keep apart), unless
    # that is the server's maintenance database.
    named = urlsplit(args.db).path.lstrip("/")
    database_url = scratch_database(
        args.db, named if named not in ("", "postgres") else "chan_bench"
    )
    cache = args.cache if redis_answers(args.cache) else None
    port = free_port()
    env = server_env(database_url, cache, port, args.workers)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    server = start_gunicorn(env)
    try:
        wait_until_up(port, server)
        suffix = f"{os.getpid()}"
        players = [Player(port, f"bench{suffix}_{i}") for i in range(4)]
        samples = Samples()
        play_hand(players, f"{args.seed}:warm-up", Samples())
        for i in range(args.hands):
            rounds = args.rounds if i == args.hands - 1 else 0
            play_hand(players, f"{args.seed}:{i}", samples, read_rounds=rounds)
        report(samples, args, cache)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
