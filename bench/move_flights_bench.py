"""A move's statements in flights (core.pipeline) against the same move one round trip at a time.

    .venv/bin/python bench/move_flights_bench.py [--hands 20] [--db postgres://…/postgres]

It creates a scratch database (``--scratch``, dropped first), migrates it, and in this process
plays whole hands of four players through ``games.services.hands.move_submit`` — the service the
move endpoint calls, with the mover's view rendered as the endpoint renders it and an
Idempotency-Key on every move — alternating hand by hand between the code as it is (the lock and
the key's lookup in one flight, the writes in the next) and the same code with the pipeline
turned off (every statement its own round trip). No HTTP and no other process: what differs
between the two is only how the statements travel. Per move it prints the wall time of the call,
this process's CPU time and the CPU time of its PostgreSQL backend (``/proc``), for both, and
their ratios (on ÷ off), measured in the same run. The cache is this process's memory and the
Celery broker ``memory://``, so neither Redis nor a worker is in the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api_bench import ROOT, scratch_database  # noqa: E402


def bench_env(database_url: str) -> dict[str, str]:
    env = {
        "DATABASE_URL": database_url,
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-not-for-production-0123456789",
        "CHAN_RECORD_KEY": os.environ.get("CHAN_RECORD_KEY")
        or "bench:YmVuY2gtb25seS1yZWNvcmQta2V5LW5vdC1zZWNyZXQ=",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CELERY_BROKER_URL": "memory://",
        "LOG_LEVEL": "WARNING",
    }
    for name in ("CACHE_URL", "REDIS_URL", "DATABASE_OWNER_URL", "DB_POOL"):
        os.environ.pop(name, None)
    return env


class Tally:
    def __init__(self) -> None:
        self.moves = 0
        self.wall = self.cpu = self.pg = 0.0

    def line(self, label: str) -> str:
        n = self.moves or 1
        return (
            f"{label}: {self.moves} moves, wall {self.wall / n * 1000:.3f} ms, "
            f"client CPU {self.cpu / n * 1000:.3f} ms, postgres CPU {self.pg / n * 1000:.3f} ms"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", default="postgres://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--scratch", default="chan_flights_bench")
    p.add_argument("--hands", type=int, default=20, help="hands each way")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)

    url = scratch_database(args.db, args.scratch)
    env = bench_env(url)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
    )
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")
    import django

    django.setup()
    from django.db import connection

    import games.services.hands as hands
    from accounts.ledger import welcome_grant_book
    from accounts.models import User
    from games.hand_store import hand_state
    from games.models import Hand
    from games.selectors.hands import hand_view_for_user
    from games.services.tables import seat_join, seat_ready, table_create

    pipelined = hands.statements_pipelined
    users = []
    for i in range(4):
        user = User.objects.create_user(username=f"flights{i}")
        welcome_grant_book(user=user)
        users.append(user)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    tick = os.sysconf("SC_CLK_TCK")

    def backend_cpu() -> float:
        fields = Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick

    def new_hand() -> Hand:
        table = table_create(owner=users[0], name="flights", stake=1, max_seats=4)
        for user in users[1:]:
            seat_join(table_id=table.pk, user=user)
        for user in users:
            seat_ready(table_id=table.pk, user=user)
        return Hand.objects.filter(table_id=table.pk).latest("id")

    def _statements_one_by_one(**_options: object) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()  # each statement its own round trip; COMMIT at the end

    tallies = {"on": Tally(), "off": Tally()}
    rng = random.Random(args.seed)
    for n in range(2 * args.hands):
        way = "on" if n % 2 == 0 else "off"
        hands.statements_pipelined = pipelined if way == "on" else _statements_one_by_one
        hand = new_hand()
        for step in range(400):
            hand.refresh_from_db()
            if hand.status == Hand.Status.ENDED:
                break
            turn = hand_state(hand).turn
            user = next(u for u in users if hand.seat_of(u.pk) == turn)
            legal = hand_view_for_user(hand=hand, user=user)["legal_moves"]
            move = rng.choice([m for m in legal if m["type"] != "set_prefs"])
            digest = hashlib.sha256(json.dumps(move, sort_keys=True).encode()).hexdigest()
            wall, cpu, pg = time.perf_counter(), time.process_time(), backend_cpu()
            hands.move_submit(
                hand_id=hand.pk,
                user=user,
                move_json=move,
                request_hash=digest,
                render=lambda h, s, user=user: hand_view_for_user(hand=h, user=user, state=s),
                expected_seq=hand.seq,
                idempotency_key=f"{n}-{step}",
            )
            tally = tallies[way]
            tally.moves += 1
            tally.wall += time.perf_counter() - wall
            tally.cpu += time.process_time() - cpu
            tally.pg += backend_cpu() - pg
    hands.statements_pipelined = pipelined
    on, off = tallies["on"], tallies["off"]
    print(on.line("flights (the code)"))
    print(off.line("one at a time"))
    if off.moves and on.moves:
        ratio = [
            (a / on.moves) / (b / off.moves) if b else float("nan")
            for a, b in ((on.wall, off.wall), (on.cpu, off.cpu), (on.pg, off.pg))
        ]
        print(
            f"ratio flights / one at a time: wall {ratio[0]:.2f}, client CPU {ratio[1]:.2f}, "
            f"postgres CPU {ratio[2]:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
