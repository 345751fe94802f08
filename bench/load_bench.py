"""A move's cost under load, on the production stack, beside its own database's limit.

    .venv/bin/python bench/load_bench.py [--tables 16] [--bots 4] [--clock-tables 2]
                                         [--warmup 10] [--seconds 30] [--workers 2]
                                         [--venv DIR]

The stack is the Procfile's (web: gunicorn with uvicorn workers, worker: Celery, beat: one
Celery beat), each command run as the Procfile says, on a freshly migrated scratch database
(``--scratch``) with the clock on (``CHAN_CLOCK=1``) and the cache's Redis database
(``--cache``, db 15 by default; the broker's too) emptied first.

Load: ``tables × bots`` players seated ``bots`` at each of ``tables`` tables (stake 10, shuffled
decks), one thread and one keep-alive connection each, playing with no think time exactly as
``chan-bot`` plays (``chan_client.bot.Bot``): read the view; when it offers moves, send the one
``chan_client.bot.choose_move`` picks, with ``expected_seq`` and a fresh ``Idempotency-Key``,
and carry on from the state the move returns; when it offers none, long-poll
(``?wait=25&after_seq=S``, ``If-None-Match`` when it has an ETag); a ``stale_seq`` (or another
race) reads the view again; at the end of a hand say ready, and whoever did not deal reads the
table (0.1 s, then 1.5 × longer, as chan-bot) until the next hand shows.

The clock: ``--clock-tables`` practice tables, one such player and three server bots each
(``bot_delay`` 1 s), where every bot move is driven by the clock's deadline: the worker's
wake-up (or the beat's sweep) plays it. Its lateness is when the move landed (the event's
``created_at``) minus when it was due (the previous event's ``created_at`` + 1 s).

After ``--warmup`` seconds the window of ``--seconds`` opens; every figure is of the window:

* ``moves/s``: moves appended (every table, the clock's too: the database's count);
* ``move p50/p99 ms``: the players' ``POST /moves`` answered in the window; under it the moves
  that ended their hand (and settled it): how many, their median and their slowest;
* ``CPU ms/move``: user + system CPU of every process of the stack (web, worker, beat, their
  children: /proc/<pid>/stat) over the window, per move, and under it each command's share (web,
  worker, beat); PostgreSQL's backends for the scratch database on a line of their own;
* ``RSS MB``: the stack's resident memory (MiB, every process) at its largest in the window,
  and under it each command's processes at that moment (the web's master and workers, …);
  ``PSS MB`` beside it: the same with each shared page counted once (smaps_rollup);
* ``db limit tx/s``: once the stack has stopped, one psycopg connection doing the database part
  of a move in a loop for ``--db-seconds`` (lock the hand row, insert an event, update the hand,
  commit) on copies of the hand and event tables; ``ratio to db limit``: moves/s over that;
* ``clock lateness p99``: of the clock-driven moves above.

It prints the load average at the start and the end: the machine's other work is in every figure.
A command of the stack that exits before the window closes fails the bench (status 1, its log
named): the figures would describe a stack without it.

``--venv DIR`` runs the stack (and its migration) from another virtualenv, e.g. a production
install (``python -m venv DIR && DIR/bin/pip install -e .``), whose RSS has none of the dev
extra's modules; the players stay in this interpreter.
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
import tempfile
import threading
import time
import uuid
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
from chan_client.bot import RACED, choose_move  # noqa: E402

STAKE = 10
WAIT = 25  # chan-bot's long poll (its --wait default)
BOT_DELAY = 1  # seconds: the practice tables' server bots
GOALS = {"cpu": 10.0, "ratio": 0.10, "p99": 250.0, "rss": 500.0, "lateness": 1.0}


# --------------------------------------------------------------------------- the players


class Stop:
    def __init__(self) -> None:
        self.flag = threading.Event()

    def __bool__(self) -> bool:
        return self.flag.is_set()


@dataclass
class Tally:
    """What one thread did: its moves (when sent, how long), requests, errors by status."""

    moves: list[tuple[float, float]] = field(default_factory=list)  # (monotonic start, seconds)
    requests: int = 0
    hands: set[int] = field(default_factory=set)
    errors: Counter[str] = field(default_factory=Counter)
    stop: Stop | None = None  # once set, the stack is stopping: its errors are not counted

    def call(self, player: Player, method: str, path: str, body=None, headers=None):
        try:
            started = time.monotonic()
            status, data, response = player.call(method, path, body, headers)
            elapsed = time.monotonic() - started
        except (OSError, http.client.HTTPException) as e:  # counted; the next call reconnects
            player.conn.close()
            if not self.stop:
                self.errors[f"connection {type(e).__name__}"] += 1
            return None, None, None, started, 0.0
        self.requests += 1
        if not (200 <= status < 300 or status == 304) and not self.stop:
            code = data.get("code", "") if isinstance(data, dict) else ""
            if code not in RACED:
                self.errors[f"{status} {code}".strip()] += 1
        return status, data, response, started, elapsed

    def merge(self, other: Tally) -> None:
        self.moves += other.moves
        self.requests += other.requests
        self.hands |= other.hands
        self.errors.update(other.errors)


def next_hand(player: Player, table_id: int, previous: int | None, tally: Tally, stop: Stop):
    """chan-bot's ``Bot.next_hand``: ready; else read the table until a new hand shows."""
    status, data, *_ = tally.call(player, "POST", f"/api/v1/tables/{table_id}/ready")
    if status == 200 and data.get("hand_id") not in (None, previous):
        return data["hand_id"]
    delay = 0.1
    while not stop:
        status, data, *_ = tally.call(player, "GET", f"/api/v1/tables/{table_id}")
        current = data.get("current_hand_id") if status == 200 else None
        if current is not None and current != previous:
            return current
        time.sleep(delay)
        delay = min(1.0, delay * 1.5)
    return None


def play_hand(player: Player, hand_id: int, rng: random.Random, tally: Tally, stop: Stop) -> None:
    """chan-bot's ``Bot.play_hand``: long polls between moves, each move with expected_seq and
    an Idempotency-Key; a race reads the view again."""
    path = f"/api/v1/hands/{hand_id}"
    view, etag = None, None
    while not stop:
        if view is None:
            status, data, response, *_ = tally.call(player, "GET", path)
            if status != 200:
                return
            view, etag = data, response.getheader("ETag")
        if view["status"] == "ended":
            tally.hands.add(hand_id)
            return
        move = choose_move(view, rng)
        if move is None:
            headers = {"If-None-Match": etag} if etag else None
            status, data, response, *_ = tally.call(
                player, "GET", f"{path}?wait={WAIT}&after_seq={view['seq']}", headers=headers
            )
            if status == 200:
                view, etag = data, response.getheader("ETag")
            elif status != 304:
                view = None
            continue
        status, data, _, started, elapsed = tally.call(
            player,
            "POST",
            f"{path}/moves",
            {**move, "expected_seq": view["seq"]},
            {"Idempotency-Key": uuid.uuid4().hex},
        )
        if status == 201:
            view, etag = data["state"], None
            tally.moves.append((started, elapsed, view["status"] == "ended"))
        else:
            view = None


def play(player: Player, table_id: int, rng: random.Random, stop: Stop) -> Tally:
    tally = Tally(stop=stop)
    previous = None
    while not stop:
        hand_id = next_hand(player, table_id, previous, tally, stop)
        if hand_id is None:
            break
        play_hand(player, hand_id, rng, tally, stop)
        previous = hand_id
    return tally


def fresh(player: Player, method: str, path: str, body=None):
    """A setup call on a new connection (registering the others took past the keep-alive)."""
    player.conn.close()
    return player.call(method, path, body)


def setup_tables(port: int, tables: int, bots: int, clock_tables: int) -> list[tuple[Player, int]]:
    """Register the players; seat ``bots`` at each of ``tables`` tables and one at each of
    ``clock_tables`` practice tables (three server bots, ``BOT_DELAY``)."""
    suffix = os.getpid()
    seated = []
    for t in range(tables):
        players = [Player(port, f"load{suffix}_{t}_{b}") for b in range(bots)]
        status, table, _ = fresh(
            players[0],
            "POST",
            "/api/v1/tables",
            {"name": f"load {suffix} #{t}", "stake": STAKE, "max_seats": bots},
        )
        assert status == 201, table
        for p in players[1:]:
            status, data, _ = fresh(p, "POST", f"/api/v1/tables/{table['id']}/join", {})
            assert status == 200, data
        seated += [(p, table["id"]) for p in players]
    for t in range(clock_tables):
        p = Player(port, f"clock{suffix}_{t}")
        status, table, _ = fresh(
            p,
            "POST",
            "/api/v1/tables",
            {"name": f"clock {suffix} #{t}", "practice": True, "bots": 3, "bot_delay": BOT_DELAY},
        )
        assert status == 201, table
        seated.append((p, table["id"]))
    return seated


def run_players(
    seated: list[tuple[Player, int]], seed: int
) -> tuple[Stop, list[threading.Thread], list]:
    rng = random.Random(seed)
    stop = Stop()
    results: list[Tally | BaseException] = [Tally() for _ in seated]

    def work(i: int, player: Player, table_id: int, rng: random.Random) -> None:
        try:
            results[i] = play(player, table_id, rng, stop)
        except BaseException as e:  # reported with the others' figures
            results[i] = e

    threads = []
    for i, (p, table_id) in enumerate(seated):
        p.conn.close()  # idle since setup, maybe past gunicorn's keep-alive: reconnect
        t = threading.Thread(
            target=work, args=(i, p, table_id, random.Random(rng.random())), daemon=True
        )
        threads.append(t)
        t.start()
    return stop, threads, results


# --------------------------------------------------------------------------- the stack


def procfile_commands() -> dict[str, str]:
    commands = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, command = line.split(":", 1)
            commands[name.strip()] = command.strip()
    return commands


@dataclass
class Stack:
    port: int
    env: dict[str, str]
    database_url: str
    procs: dict[str, subprocess.Popen]
    var: Path  # CHAN_VAR_DIR: the beat's schedule, each command's log

    def exited(self) -> dict[str, int]:
        """The Procfile's commands that are no longer running -> their exit status."""
        return {name: p.returncode for name, p in self.procs.items() if p.poll() is not None}

    def pids(self) -> list[int]:
        """Every live process of the stack: the Procfile's commands and all their descendants
        (each runs in a session of its own)."""
        return list(self.roles())

    def roles(self) -> dict[int, str]:
        """Each live process of the stack -> its Procfile command (web, worker, beat)."""
        sessions = {p.pid: name for name, p in self.procs.items()}
        found = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    fields = _stat_fields(int(entry))
                except OSError:
                    continue
                if int(fields[3]) in sessions:  # field 6 of stat, the session id
                    found[int(entry)] = sessions[int(fields[3])]
        return found


def _stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command's name: field 3 (state) is [0]."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    return raw[raw.rindex(")") + 2 :].split()


CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """utime + stime, and those of the children already reaped, of each process."""
    out = {}
    for pid in pids:
        try:
            f = _stat_fields(pid)
        except OSError:
            continue
        out[pid] = sum(int(x) for x in f[11:15]) / CLK_TCK  # utime stime cutime cstime
    return out


def _proc_mib(pids: list[int], file: str, field: str) -> float:
    """The sum over ``pids`` of a ``field:`` line (kB) of /proc/<pid>/``file``, in MiB."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/{file}").read_text().splitlines():
                if line.startswith(field + ":"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def rss_mib(pids: list[int]) -> float:
    return _proc_mib(pids, "status", "VmRSS")


def rss_by_role(roles: dict[int, str]) -> tuple[float, dict[str, tuple[float, int]]]:
    """The stack's RSS (MiB) and, for each Procfile command, its processes' RSS and how many
    they are."""
    found: dict[str, tuple[float, int]] = {}
    for pid, role in roles.items():
        mib, n = found.get(role, (0.0, 0))
        found[role] = (mib + rss_mib([pid]), n + 1)
    return sum(mib for mib, _ in found.values()), found


def pss_mib(pids: list[int]) -> float:
    """The stack's proportional set size (MiB): each page shared by n processes counted 1/n
    (/proc/<pid>/smaps_rollup), where the sum of RSS counts it n times."""
    return _proc_mib(pids, "smaps_rollup", "Pss")


def postgres_backends(database_url: str, dbname: str) -> list[int]:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [dbname],
        ).fetchall()
    return [r[0] for r in rows]


@contextmanager
def production_stack(
    args: argparse.Namespace, extra_env: dict[str, str] | None = None
) -> Iterator[Stack]:
    """The Procfile's web, worker and beat on a fresh scratch database, stopped on the way out."""
    database_url = scratch_database(args.db, args.scratch)
    if not redis_answers(args.cache):
        raise SystemExit(f"the cache {args.cache} does not answer: the stack needs Redis")
    scratch_cache(args.cache)
    port = free_port()
    var = tempfile.mkdtemp(prefix="load_bench_")
    bin_dir = Path(args.venv).resolve() / "bin" if args.venv else Path(sys.executable).parent
    env = {
        **server_env(database_url, args.cache, port, args.workers),
        "CELERY_BROKER_URL": args.cache,
        "CHAN_CLOCK": "1",
        "CHAN_VAR_DIR": var,
        "LOG_LEVEL": "WARNING",
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        **(extra_env or {}),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    subprocess.run(
        [str(bin_dir / "python"), "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    procs: dict[str, subprocess.Popen] = {}
    try:
        for name, command in procfile_commands().items():
            procs[name] = subprocess.Popen(
                ["bash", "-c", f"exec {command}"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=open(Path(var) / f"{name}.log", "wb"),  # noqa: SIM115
                start_new_session=True,
            )
        wait_until_up(port, procs["web"], timeout=180)
        yield Stack(port, env, database_url, procs, Path(var))
    finally:
        stop_stack(procs)
        if os.environ.get("LOAD_BENCH_KEEP_LOGS"):
            print(f"logs: {var}", file=sys.stderr)


def stop_stack(procs: dict[str, subprocess.Popen]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs.values():
        try:
            proc.wait(timeout=35)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# --------------------------------------------------------------------------- the database


def count_in_window(
    database_url: str, table: str, column: str, t0: float, t1: float, where: str = "TRUE"
) -> int:
    """Rows of ``table`` whose ``column`` falls between the wall-clock times ``t0`` and ``t1``."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        return conn.execute(
            f"SELECT count(*) FROM {table} WHERE {where} "
            f"AND {column} >= to_timestamp(%s) AND {column} < to_timestamp(%s)",
            [t0, t1],
        ).fetchone()[0]


def clock_lateness(database_url: str, t0: float, t1: float) -> list[float]:
    """Seconds late of each server bot's move in the window (practice tables): landed minus
    due, due being the previous event's time + ``BOT_DELAY``."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            """
            SELECT extract(epoch FROM e.created_at - p.created_at) - %s
            FROM games_handevent e
            JOIN games_handevent p ON p.hand_id = e.hand_id AND p.seq = e.seq - 1
            WHERE e.bot AND e.created_at >= to_timestamp(%s) AND e.created_at < to_timestamp(%s)
            """,
            [BOT_DELAY, t0, t1],
        ).fetchall()
    return [float(r[0]) for r in rows]


def db_limit(database_url: str, seconds: float) -> float:
    """Transactions a second of one psycopg connection doing a move's database part: lock the
    hand row, insert an event, update the hand, commit — on copies of the two tables (their
    columns, defaults, indexes and constraints; no trigger), from a real hand and event."""
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_limit_event, bench_limit_hand")
        conn.execute("CREATE TABLE bench_limit_hand (LIKE games_hand INCLUDING ALL)")
        conn.execute("CREATE TABLE bench_limit_event (LIKE games_handevent INCLUDING ALL)")
        hand_id = conn.execute(
            "SELECT hand_id FROM games_handevent WHERE seq > 0 ORDER BY id DESC LIMIT 1"
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO bench_limit_hand SELECT * FROM games_hand WHERE id = %s", [hand_id]
        )
        event = conn.execute(
            "SELECT * FROM games_handevent WHERE hand_id = %s AND seq > 0 ORDER BY seq DESC LIMIT 1",
            [hand_id],
        )
        row = event.fetchone()
        columns = [d.name for d in event.description]
    template = dict(zip(columns, row, strict=True))
    insert_columns = [c for c in columns if c not in ("id", "seq", "created_at")]
    from psycopg.types.json import Jsonb

    values = [
        Jsonb(v) if isinstance(v, (dict, list)) else v
        for v in (template[c] for c in insert_columns)
    ]
    insert = (
        f"INSERT INTO bench_limit_event ({', '.join(insert_columns)}, seq, created_at) "
        f"VALUES ({', '.join(['%s'] * len(insert_columns))}, %s, now())"
    )
    n = 0
    with psycopg.connect(database_url) as conn:
        seq = template["seq"] + 1_000_000
        deadline = time.monotonic() + seconds
        started = time.monotonic()
        while time.monotonic() < deadline:
            conn.execute("SELECT * FROM bench_limit_hand WHERE id = %s FOR UPDATE", [hand_id])
            seq += 1
            conn.execute(insert, [*values, seq])
            conn.execute(
                "UPDATE bench_limit_hand SET seq = %s, last_event_at = now(), updated_at = now(), "
                "deadline_at = CASE WHEN deadline_at IS NULL THEN NULL "
                "ELSE now() + interval '30 seconds' END WHERE id = %s",
                [seq, hand_id],
            )
            conn.commit()
            n += 1
        elapsed = time.monotonic() - started
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_limit_event, bench_limit_hand")
    return n / elapsed


# --------------------------------------------------------------------------- helpers


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


def report(
    args,
    *,
    load: tuple[str, str],
    window: float,
    moves: int,
    player_moves: list[float],
    ending_moves: list[float],
    cpu: float,
    by_role: Counter[str],
    pg_cpu: float,
    rss: float,
    rss_roles: dict[str, tuple[float, int]],
    pss: float,
    limit: float,
    lateness: list[float],
    tally: Tally,
    hands: int,
) -> None:
    rate = moves / window
    per_move = cpu / moves * 1e3 if moves else float("nan")
    ratio = rate / limit if limit else float("nan")
    p50, p99 = quantile(player_moves, 0.5) * 1e3, quantile(player_moves, 0.99) * 1e3
    late = quantile(lateness, 0.99) if lateness else float("nan")

    def verdict(ok: bool) -> str:
        return "ok" if ok else "MISS"

    print(
        f"production stack (Procfile: web {args.workers} uvicorn workers, worker, beat); "
        f"{args.tables} tables x {args.bots} bots + {args.clock_tables} practice tables "
        f"(1 player, 3 server bots), long polls as chan-bot; warm-up {args.warmup:g} s, "
        f"window {window:.1f} s"
    )
    print(f"load average at start: {load[0]}; at end: {load[1]}")
    print(
        f"window: {moves} moves ({len(player_moves)} by players, {len(lateness)} by the clock's "
        f"bots), {hands} hands ended, {tally.requests} requests"
    )
    print("errors: " + (", ".join(f"{k}: {v}" for k, v in sorted(tally.errors.items())) or "none"))
    print(f"moves/s: {rate:.1f}")
    print(
        f"move p50/p99 ms: {p50:.0f} / {p99:.0f}  (goal p99 <= {GOALS['p99']:g} {verdict(p99 <= GOALS['p99'])})"
    )
    if ending_moves:  # (each hand's last move settles it: where the tail comes from)
        print(
            f"  hand-ending moves: {len(ending_moves)}, p50/max ms: "
            f"{quantile(ending_moves, 0.5) * 1e3:.0f} / {max(ending_moves) * 1e3:.0f}"
        )
    print(
        f"CPU ms/move: {per_move:.1f}  (goal <= {GOALS['cpu']:g} {verdict(per_move <= GOALS['cpu'])})"
    )
    if moves:
        print(
            "  of which: "
            + ", ".join(f"{role} {v / moves * 1e3:.1f}" for role, v in sorted(by_role.items()))
        )
    print(
        f"postgres CPU ms/move: {pg_cpu / moves * 1e3 if moves else float('nan'):.1f}  (its backends for the scratch database)"
    )
    print(f"RSS MB: {rss:.0f}  (goal <= {GOALS['rss']:g} {verdict(rss <= GOALS['rss'])})")
    print(
        "  of which: "
        + ", ".join(
            f"{role} {mib:.0f} ({n} process{'es' if n > 1 else ''})"
            for role, (mib, n) in sorted(rss_roles.items())
        )
    )
    print(f"PSS MB: {pss:.0f}  (the same processes, shared pages counted once)")
    print(f"db limit tx/s: {limit:.0f}")
    print(
        f"ratio to db limit: {ratio:.3f}  (goal >= {GOALS['ratio']:g} {verdict(ratio >= GOALS['ratio'])})"
    )
    print(
        f"clock lateness p99: {late:.2f} s  (goal <= {GOALS['lateness']:g} {verdict(late <= GOALS['lateness'])}; n={len(lateness)})"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_server_args(p, scratch="chan_load_bench")
    p.add_argument("--tables", type=int, default=16)
    p.add_argument("--bots", type=int, default=4, help="players (seats) per table")
    p.add_argument("--clock-tables", type=int, default=2, help="practice tables (the clock)")
    p.add_argument("--warmup", type=float, default=10.0)
    p.add_argument("--seconds", type=float, default=30.0, help="the measured window")
    p.add_argument("--db-seconds", type=float, default=5.0, help="the database's own loop")
    p.add_argument(
        "--venv",
        help="run the stack from this virtualenv (a production install: pip install -e .); "
        "the bench's players stay in this interpreter",
    )
    args = p.parse_args(argv)

    load_start = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    with production_stack(args) as stack:
        seated = setup_tables(stack.port, args.tables, args.bots, args.clock_tables)
        stop, threads, results = run_players(seated, args.seed)
        time.sleep(args.warmup)
        dbname = urlsplit(stack.database_url).path.lstrip("/")
        pids = stack.pids()
        backends = postgres_backends(stack.database_url, dbname)
        cpu0, pg0 = cpu_seconds(pids), cpu_seconds(backends)
        t0, m0 = time.time(), time.monotonic()
        rss, rss_roles = rss_by_role(stack.roles())
        pss = pss_mib(pids)
        while time.monotonic() < m0 + args.seconds:
            time.sleep(min(1.0, m0 + args.seconds - time.monotonic()))
            now_roles = stack.roles()
            now_rss, now_by_role = rss_by_role(now_roles)
            if now_rss > rss:  # (the breakdown of the largest)
                rss, rss_roles = now_rss, now_by_role
            pss = max(pss, pss_mib(list(now_roles)))
        dead = stack.exited()
        roles = stack.roles()
        pids = list(roles)
        backends = postgres_backends(stack.database_url, dbname)
        cpu1, pg1 = cpu_seconds(pids), cpu_seconds(backends)
        t1, m1 = time.time(), time.monotonic()
        load_end = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        stop.flag.set()
        stop_stack(stack.procs)  # answers the waiting long polls at once
    for t in threads:
        t.join(timeout=10)
    if dead:
        # Its figures would describe a stack without it (no clock without the worker).
        for name, code in dead.items():
            print(f"stack: {name} exited with status {code} (its log: {stack.var / name}.log)")
        return 1
    tally = Tally()
    for r in results:
        if isinstance(r, BaseException):
            tally.errors[f"exception {type(r).__name__}: {r}"[:100]] += 1
        else:
            tally.merge(r)
    in_window = [
        (s, ends) for started, s, ends in tally.moves if m0 <= started and started + s <= m1
    ]
    player_moves = [s for s, _ in in_window]
    ending_moves = [s for s, ends in in_window if ends]
    # A process that exited in the window (none should) counts from 0; one that started counts
    # from its start.
    cpu = sum(v - cpu0.get(pid, 0.0) for pid, v in cpu1.items())
    by_role: Counter[str] = Counter()
    for pid, v in cpu1.items():
        by_role[roles[pid]] += v - cpu0.get(pid, 0.0)
    pg_cpu = sum(v - pg0.get(pid, 0.0) for pid, v in pg1.items())
    # Moves appended (every table, the clock's too; a preference change is no move).
    moves = count_in_window(
        stack.database_url,
        "games_handevent",
        "created_at",
        t0,
        t1,
        "seq > 0 AND type <> 'set_prefs'",
    )
    lateness = clock_lateness(stack.database_url, t0, t1)
    hands = count_in_window(stack.database_url, "games_hand", "ended_at", t0, t1)
    limit = db_limit(stack.database_url, args.db_seconds)
    report(
        args,
        load=(load_start, load_end),
        window=m1 - m0,
        moves=moves,
        player_moves=player_moves,
        ending_moves=ending_moves,
        cpu=cpu,
        by_role=by_role,
        pg_cpu=pg_cpu,
        rss=rss,
        rss_roles=rss_roles,
        pss=pss,
        limit=limit,
        lateness=lateness,
        tally=tally,
        hands=hands,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
