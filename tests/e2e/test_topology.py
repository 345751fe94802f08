"""The production topology under bots: a private stack — its own PostgreSQL (pgserver in a
scratch directory) and its own redis-server, 2 gunicorn worker processes, 2 Celery workers and
exactly one beat, the Procfile's commands — and 20 ``chan-bot`` processes playing 10 two-seat
tables of 2 hands each to the end through the API. Afterwards the hands' logs replay
(``check_hands``) and the ledger balances (``ledger_check``). Never the machine's shared servers.

Run twice: straight to PostgreSQL, and once through a private PgBouncer in transaction mode
(``DATABASE_POOLER=pgbouncer``; tests/e2e/pgbouncer.py) with more processes (3 web, 2 Celery
workers) and at most ``POOL_SIZE`` server connections: the connections to PostgreSQL, sampled
all along, stay within the pool while the clients are many more.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from chan_api import embedded_db
from tests.e2e.pgbouncer import ConnectionSampler, PgBouncer, pgbouncer_start
from tests.faults.harness import free_port, manage, one_stack_at_a_time, stack_env
from tests.faults.test_faults_redis import redis_server

ROOT = Path(__file__).resolve().parents[2]
TABLES = 10
HANDS = 2
BUDGET_SECONDS = 200  # the bots' share of the test's bound (< 4 minutes in all)
PASSWORD = "topology-Passw0rd-1"
POOL_SIZE = 10  # PgBouncer's server connections for the whole stack (default_pool_size)
# (web worker processes, Celery worker processes) of each run; CHAN_TOPOLOGY_PROCESSES=web,celery
# sets both, to measure the connections of other sizes (docs/operations.md "PgBouncer").
PROCESSES = {"direct": (2, 2), "pgbouncer": (3, 2)}
if os.environ.get("CHAN_TOPOLOGY_PROCESSES"):
    _web, _celery = (int(n) for n in os.environ["CHAN_TOPOLOGY_PROCESSES"].split(","))
    PROCESSES = {"direct": (_web, _celery), "pgbouncer": (_web, _celery)}


@pytest.fixture
def stack_turn() -> Iterator[None]:
    """This test's turn to run a whole stack: the two runs, and any other such test of the
    suite, never share the cores (tests/faults/harness.py ``one_stack_at_a_time``)."""
    with one_stack_at_a_time():
        yield


def counted_moves(metrics_dir: Path) -> dict[str, float]:
    """The players' moves by how the web workers made them, and the records they heard, summed
    over the stack's processes (their multiprocess metric files)."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(metrics_dir))
    found = {
        made: registry.get_sample_value("chan_move_flights_total", {"made": made}) or 0.0
        for made in ("one", "two", "refused")
    }
    for folded in ("yes", "no"):
        sample = registry.get_sample_value("chan_moves_heard_total", {"folded": folded})
        found[f"heard {folded}"] = sample or 0.0
    return found


def spawn(args: list[str], env: dict[str, str], log: IO[bytes], **kw: Any) -> subprocess.Popen:
    """A process in its own group (a Celery worker's pool children included), logging to a file."""
    return subprocess.Popen(
        args,
        cwd=ROOT,
        env=env,
        stderr=log,
        start_new_session=True,
        **{"stdout": subprocess.DEVNULL, **kw},
    )


def stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM each started process's own group, then SIGKILL what is left after 20 s."""
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_ready(base: str, procs: list[subprocess.Popen], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert all(p.poll() is None for p in procs), "a process of the stack died at start"
        try:
            with urllib.request.urlopen(f"{base}/readyz", timeout=5) as r:
                if r.status == 200:
                    return
        except (OSError, urllib.error.HTTPError):
            pass
        time.sleep(0.3)
    raise AssertionError("the stack was not ready in time")


def system_moves(env: dict[str, str]) -> dict[str, int]:
    """The moves the server played itself (its clock, automatic play), by type."""
    out = manage(
        env,
        "shell",
        "-c",
        "import json; from collections import Counter; from games.models import HandEvent; "
        "print(json.dumps(Counter(HandEvent.objects.filter(system=True)"
        ".values_list('type', flat=True))))",
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def unsettled(env: dict[str, str]) -> int:
    out = manage(
        env,
        "shell",
        "-c",
        "from games.services.quan_booking import hands_unsettled; print(len(hands_unsettled()))",
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1])


def _log_problems(path: Path) -> list[str]:
    """The stack log's lines that tell why a bot failed: its own last words, errors, tracebacks'
    last lines (the log is the private directory's, gone after the test)."""
    words = ("chan-bot", "Error", "error", "Traceback", "deadlock", " 5")
    lines = path.read_text(errors="replace").splitlines()
    return [line[:500] for line in lines if any(w in line for w in words)][-60:]


@pytest.mark.slow(seconds=80)
@pytest.mark.parametrize("pooler", ["direct", "pgbouncer"])
def test_twenty_bots_play_ten_tables_on_the_production_topology(
    private_dir, pooler, stack_turn
) -> None:
    started = time.monotonic()
    web_workers, celery_workers = PROCESSES[pooler]
    port = free_port()
    redis = redis_server(port, private_dir)
    web_port = free_port()
    base = f"http://127.0.0.1:{web_port}"
    (private_dir / "prometheus").mkdir()
    env = stack_env(
        private_dir,
        CACHE_URL=f"redis://127.0.0.1:{port}/1",
        CELERY_BROKER_URL=f"redis://127.0.0.1:{port}/2",
        CHAN_CLOCK="1",  # the clock, the settlements and the sweep run on the Celery workers
        CHAN_ALLOW_FIXED_DECK="0",  # shuffled decks, as in production
        PROMETHEUS_MULTIPROC_DIR=str(private_dir / "prometheus"),
        LOG_LEVEL="WARNING",
    )
    bot_env = {**env, "CHAN_BOT_PASSWORD": PASSWORD, "PYTHONPATH": str(ROOT)}
    log = (private_dir / "stack.log").open("ab")
    stack: list[subprocess.Popen] = []
    bots: list[subprocess.Popen] = []
    bouncer: PgBouncer | None = None
    sampler: ConnectionSampler | None = None
    try:
        migrated = manage(env, "migrate", "--noinput")
        assert migrated.returncode == 0, migrated.stderr
        # The embedded server, straight (the migration too: never through a pooler).
        server = embedded_db.database_settings(private_dir)
        sampled = {
            "host": server["HOST"],
            "port": server["PORT"],
            "user": "postgres",
            "dbname": server["NAME"],
        }
        if pooler == "pgbouncer":
            bouncer = pgbouncer_start(
                private_dir,
                database=server["NAME"],
                host=server["HOST"],
                port=int(server["PORT"]),
                pool_size=POOL_SIZE,
                run_as=private_dir / "pg",
            )
            env["DATABASE_URL"] = bouncer.url("chan_app", server["NAME"])
            env["DATABASE_POOLER"] = "pgbouncer"
            bot_env = {**env, "CHAN_BOT_PASSWORD": PASSWORD, "PYTHONPATH": str(ROOT)}
        sampler = ConnectionSampler(server=sampled, database=server["NAME"], bouncer=bouncer)
        sampler.__enter__()
        # Given the Procfile's three commands: gunicorn with 2 worker processes, 2 Celery
        # workers (each its own process with its pool of threads) and one beat (chan_api.beat),
        celery = [sys.executable, "-m", "celery", "-A", "chan_api"]
        stack.append(
            spawn(
                [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py"]
                + ["--workers", str(web_workers), "--bind", f"127.0.0.1:{web_port}"]
                + ["chan_api.asgi:application"],
                env,
                log,
            )
        )
        for n in range(1, celery_workers + 1):
            stack.append(
                spawn(
                    [*celery, "worker", "-l", "warning", "--pool", "threads", "--concurrency", "4"]
                    + ["-n", f"topology{n}@%h"],
                    env,
                    log,
                )
            )
        stack.append(
            spawn(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "chan_api.beat",
                    "beat",
                    "-l",
                    "warning",
                    "--schedule",
                    str(private_dir / "beat-schedule"),
                ],
                env,
                log,
            )
        )
        wait_ready(base, stack)
        up = time.monotonic()

        # when 10 bots each open a two-seat table and 10 more join them, all playing 2 hands,
        bot = [sys.executable, "-m", "chan_client", "--url", base, "--hands", str(HANDS), "-v"]
        openers = [
            spawn(
                [*bot, "--username", f"topo{i}a", "--create", "--max-seats", "2", "--seed", f"{i}"],
                bot_env,
                log,
                stdout=subprocess.PIPE,
            )
            for i in range(TABLES)
        ]
        bots.extend(openers)
        tables = []
        for i, opener in enumerate(openers):
            line = opener.stdout.readline().decode()
            assert line.startswith("table "), (
                line,
                (private_dir / "stack.log").read_text()[-2000:],
            )
            tables.append(int(line.split()[1]))
            bots.append(
                spawn(
                    [*bot, "--username", f"topo{i}b", "--table", str(tables[-1])]
                    + ["--seed", f"{100 + i}"],
                    bot_env,
                    log,
                    stdout=subprocess.PIPE,
                )
            )
        summaries = []
        for proc in bots:
            out, _ = proc.communicate(timeout=max(1, BUDGET_SECONDS - (time.monotonic() - up)))
            summaries.append(json.loads(out.decode().strip().splitlines()[-1]))
        played = time.monotonic() - up
        sampler.__exit__(None, None, None)

        # then every bot played its 2 hands to the end with its table's partner,
        failed = [s for s in summaries if not s["ok"]]
        assert not failed, (failed, _log_problems(private_dir / "stack.log"))
        by_table: dict[int, list[dict[str, Any]]] = {}
        for s in summaries:
            by_table.setdefault(s["table_id"], []).append(s)
        assert sorted(by_table) == sorted(tables) and all(len(v) == 2 for v in by_table.values())
        for pair in by_table.values():
            assert len(pair[0]["hands"]) == HANDS and pair[0]["hands"] == pair[1]["hands"]
            assert all(o is not None for s in pair for o in s["outcomes"])
        hands = {h for s in summaries for h in s["hands"]}
        assert len(hands) == TABLES * HANDS
        statuses: Counter[str] = Counter()
        for s in summaries:
            statuses.update(s["statuses"])
        assert statuses["500"] == 0, statuses  # a 429/502/503/504 is retried; a 500 is a bug

        # the Celery workers book the settlements (the sweep re-arms any lost wake-up),
        deadline = time.monotonic() + 20
        while (left := unsettled(env)) and time.monotonic() < deadline:
            time.sleep(1)
        settled = manage(env, "settle_hands")
        assert settled.returncode == 0, settled.stderr
        # and the hand logs replay and the ledger balances.
        checked = manage(env, "check_hands")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        ledger = manage(env, "ledger_check")
        assert ledger.returncode == 0, ledger.stdout + ledger.stderr

        # and the web workers made most moves in one flight: each carried its copy of a hand
        # on by the records of the moves another process made (hand_store.hand_move_heard),
        # and no record failed to follow the copy it was heard for (nothing but moves writes
        # a hand's row while it is played here)
        flights = counted_moves(private_dir / "prometheus")
        assert flights["heard yes"] > 0 and flights["heard no"] == 0, flights
        assert flights["one"] > flights["two"] + flights["refused"], flights

        requests = sum(s["requests"] for s in summaries)
        raced: Counter[str] = Counter()
        for s in summaries:
            raced.update(s["raced"])
        moves = sum(s["moves"] for s in summaries)
        # Behind PgBouncer, many clients and never more server connections than its pool.
        if bouncer is not None:
            assert sampler.samples > 10
            assert sampler.max_server <= POOL_SIZE, sampler
            assert sampler.max_clients > POOL_SIZE, sampler
        print(
            f"\ntopology ({pooler}): gunicorn {web_workers} uvicorn workers, "
            f"{celery_workers} Celery workers, 1 beat, "
            f"PostgreSQL (pgserver) + Redis; {len(summaries)} chan-bot processes at "
            f"{TABLES} tables: {len(hands)} hands, {moves} moves, {requests} requests "
            f"({sum(s['retries'] for s in summaries)} retries, "
            f"moves refused as raced {dict(raced)}, system moves {system_moves(env)}), statuses "
            f"{dict(sorted(statuses.items()))}; played in {played:.1f} s "
            f"({requests / played:.0f} req/s), {left} left for settle_hands "
            f"({settled.stdout.strip()}); {time.monotonic() - started:.1f} s in all; "
            f"PostgreSQL connections at most {sampler.max_server}"
            + (f", PgBouncer clients at most {sampler.max_clients}" if bouncer else "")
            + f" ({sampler.samples} samples, {moves / played:.1f} moves/s); moves made {flights}"
        )
    finally:
        stop(bots + stack)
        if sampler is not None:
            sampler.__exit__(None, None, None)
        if bouncer is not None:
            bouncer.stop()
        log.close()
        redis.kill()
        redis.wait()
        embedded_db.stop(private_dir)
