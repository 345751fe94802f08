"""Does a move or a state read slow down as finished hands pile up? Small database against big.

    .venv/bin/python bench/growth_bench.py [--small 10] [--big 10000] [--hands 6] [--rounds 200]

It starts gunicorn on a scratch database as ``bench/api_bench.py`` does (its helpers, imported),
fills the database with ``--small`` finished hands, measures, fills it up to ``--big`` finished
hands and measures again. Filling is ``manage.py play_bots`` on the scratch database
(``CHAN_CLOCK=0``) for up to ``--played`` hands: whole hands played through the services by bots
at three tables, each settled in the Quan ledger, so every table the game writes (hands, their
seats and logs, ledger transactions and entries) grows as in production. Beyond ``--played``
the finished hands' rows, seats and logs are copied in SQL (the ledger is not copied).
Measuring is api_bench's: ``--hands`` scripted hands at a fresh table, four keep-alive players,
every move timed and, in the last hand, ``--rounds`` rounds of floor / state read / 304 poll; the
floor (``GET /api/v1/auth/check``) is timed beside each move too. The fill runs while gunicorn idles; the measurement starts after it.

``--big-events N`` sets the big size in hand events instead (issue 26: 10,000,000), the hands
it takes at the played hands' mean length. The copies are spread over ``--months`` past months
(each pass dealt a month earlier than the last, cyclically), so the partitioned log
(games 0027) holds them in as many monthly partitions, as a server that ran that long would.

It prints the median and p90 of each request at both sizes and the ratio small/big of the
medians (raw, and each divided by its own floor to take out drift between the two runs; the
verdict reads the latter). Goal (issue 14): ratio >= 0.9 for the move and the state read.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api_bench import (  # noqa: E402
    ROOT,
    Player,
    Samples,
    play_hand,
)
from load_bench import add_server_args, scratch_server  # noqa: E402

GOAL = 0.9
COPIES = 200  # copies of each source hand per statement
NAMES = ("floor", "state read", "304 poll", "floor (moves)", "move")
FLOORS = {"state read": "floor", "304 poll": "floor", "move": "floor (moves)"}


def finished_hands(database_url: str) -> int:
    import psycopg

    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM games_hand WHERE status = 'ended'").fetchone()
        return int(row[0])


# Every column of a hand but its id and number is copied as it is (read from the table, so a
# column a later migration adds is copied too).
HAND_COLUMNS_QUERY = (
    "SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position)"
    " FROM information_schema.columns WHERE table_name = 'games_hand'"
    " AND column_name NOT IN ('id', 'number')"
)
SEAT_COLUMNS = "position, table_seat, auto_u, auto_chiu, left_at, created_at, updated_at, user_id"
# The hash links are copied too: each copy's chain links as its source's does (games 0021 checks
# the links, in seq order; the hashes name the source hand, which a benchmark does not verify).
EVENT_COLUMNS = "seq, type, actor_seat, system, payload, effects, created_at, bot, prev_hash, hash"


def events_per_hand(database_url: str) -> float:
    import psycopg

    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*)::float / greatest(count(DISTINCT hand_id), 1) FROM games_handevent"
        ).fetchone()
        return float(row[0])


def event_count(database_url: str) -> int:
    import psycopg

    with psycopg.connect(database_url) as conn:
        return int(conn.execute("SELECT count(*) FROM games_handevent").fetchone()[0])


def copy_hands(
    database_url: str, target: int, months: int = 1, seconds: float | None = None
) -> None:
    """Copy finished hands (their rows, seats and logs) until ``target`` are in the database.

    Each pass copies every finished hand up to ``COPIES`` times more, at ids and numbers shifted
    by strides beyond the largest id, copy ``g`` dealt ``g mod months`` months earlier (its
    events land in that month's partition), then the id sequence is moved past them. Stops early after ``seconds`` if given (the bench then measures what it has)."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        sources = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM games_hand WHERE status = 'ended' AND settled_at IS NOT NULL"
                " ORDER BY id"
            )
        ]
        if not sources:
            raise SystemExit("no finished hand to copy")
        stride = conn.execute("SELECT max(id) + 1 FROM games_hand").fetchone()[0]
        hand_columns = conn.execute(HAND_COLUMNS_QUERY).fetchone()[0]
        # copy g's deal is g mod months months before its source's (its log's key with it)
        month = "(g %% %(m)s) * interval '1 month'"
        hand_shifted = hand_columns.replace("created_at", f"created_at - {month}", 1)
        for k in range(months):
            conn.execute(
                "SELECT chan_month_partition_create('games_handevent',"
                " (now() - %s * interval '1 month')::date)",
                [k],
            )
        conn.commit()
        shift = 0
        have = finished_hands(database_url)
        deadline = None if seconds is None else time.monotonic() + seconds
        while (missing := target - have) > 0:
            if deadline is not None and time.monotonic() > deadline:
                print(f"copying stopped after {seconds:g} s at {have} hands", flush=True)
                break
            # up to COPIES copies of each source hand in one statement: copy g is dealt
            # g mod months months earlier, at ids and numbers shifted by (g + 1) strides
            copies = min(COPIES, -(-missing // len(sources)))
            batch = sources[: min(len(sources), missing)]
            have += copies * len(batch)
            values = {"s": shift, "t": stride, "n": copies, "m": months, "ids": batch}
            with conn.transaction():
                conn.execute(
                    f"INSERT INTO games_hand (id, number, {hand_columns})"
                    " SELECT id + %(s)s + (g + 1) * %(t)s, number + %(s)s + (g + 1) * %(t)s,"
                    f" {hand_shifted}"
                    " FROM games_hand, generate_series(0, %(n)s - 1) g WHERE id = ANY(%(ids)s)",
                    values,
                )
                conn.execute(
                    f"INSERT INTO games_handseat (hand_id, {SEAT_COLUMNS})"
                    f" SELECT hand_id + %(s)s + (g + 1) * %(t)s, {SEAT_COLUMNS}"
                    " FROM games_handseat, generate_series(0, %(n)s - 1) g"
                    " WHERE hand_id = ANY(%(ids)s)",
                    values,
                )
                conn.execute(
                    f"INSERT INTO games_handevent (hand_id, hand_created_at, {EVENT_COLUMNS})"
                    f" SELECT hand_id + %(s)s + (g + 1) * %(t)s, hand_created_at - {month},"
                    f" {EVENT_COLUMNS} FROM games_handevent, generate_series(0, %(n)s - 1) g"
                    " WHERE hand_id = ANY(%(ids)s) ORDER BY g, hand_id, seq",
                    values,
                )
            shift += copies * stride
            conn.commit()
        conn.execute(
            "SELECT setval(pg_get_serial_sequence('games_hand', 'id'), max(id)) FROM games_hand"
        )
        conn.commit()
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE")


def fill(
    env: dict,
    database_url: str,
    target: int,
    seed: int,
    played: int,
    months: int = 1,
    seconds: float | None = None,
) -> float:
    """Bring the database to ``target`` finished hands: up to ``played`` of them played by bots,
    the rest copies of those (``copy_hands``). Return the seconds it took."""
    started = time.monotonic()
    missing = min(target, played) - finished_hands(database_url)
    if missing > 0:
        # The measured hands' last settlements wait for the next deal (no worker runs here):
        # book them first, or play_bots' closing ledger_check counts them as problems.
        for command in (
            ["settle_hands"],
            ["play_bots", "--hands", str(missing), "--seed", str(seed)],
        ):
            done = subprocess.run(
                [sys.executable, "manage.py", *command],
                cwd=ROOT,
                env={**env, "CHAN_CLOCK": "0"},
                capture_output=True,
                text=True,
            )
            if done.returncode:
                raise SystemExit(
                    f"{command[0]} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
                )
    if finished_hands(database_url) < target:
        copy_hands(database_url, target, months, seconds)
    return time.monotonic() - started


def measure(players: list[Player], args: argparse.Namespace, label: str) -> Samples:
    samples = Samples()
    play_hand(players, f"{args.seed}:{label}:warm-up", Samples())
    for i in range(args.hands):
        rounds = args.rounds if i == args.hands - 1 else 0
        play_hand(players, f"{args.seed}:{label}:{i}", samples, read_rounds=rounds)
    return samples


def report(results: dict[int, Samples], counts: dict[int, int], args, cache) -> dict[str, float]:
    small, big = sorted(results)
    med = {n: {k: statistics.median(v) for k, v in s.seconds.items()} for n, s in results.items()}
    p90 = {
        n: {k: statistics.quantiles(v, n=10)[-1] for k, v in s.seconds.items()}
        for n, s in results.items()
    }
    print(
        f"gunicorn + uvicorn (ASGI), {args.workers} workers; PostgreSQL; cache: {cache or 'locmem'}; "
        f"{args.hands} hands and {args.rounds} read rounds at each size; finished hands in the "
        f"database when measured: {counts[small]} and {counts[big]}"
    )
    print(
        f"{'request':<14}{'n':>6}{'med ms':>9}{'p90 ms':>9} |{'n':>6}{'med ms':>9}{'p90 ms':>9}"
        f" |{'small/big':>10}{'/floor':>8}"
    )
    ratios = {}
    for name in NAMES:
        raw = med[small][name] / med[big][name]
        floor = FLOORS.get(name)
        normed = (
            (med[small][name] / med[small][floor]) / (med[big][name] / med[big][floor])
            if floor
            else float("nan")
        )
        ratios[name] = raw
        cells = "".join(
            f"{len(results[n].seconds[name]):>6}{med[n][name] * 1e3:>9.2f}"
            f"{p90[n][name] * 1e3:>9.2f} |"
            for n in (small, big)
        )
        verdict = ""
        if name in ("move", "state read"):
            verdict = f"  >={GOAL:g} {'ok' if normed >= GOAL else 'MISS'}"
        print(f"{name:<14}{cells}{raw:>10.2f}{normed:>8.2f}{verdict}")
    return ratios


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_server_args(p, scratch="chan_growth_bench")
    p.add_argument("--small", type=int, default=10, help="finished hands for the first run")
    p.add_argument("--big", type=int, default=10_000, help="finished hands for the second run")
    p.add_argument(
        "--played",
        type=int,
        default=300,
        help="at most this many finished hands played by bots; the rest are copies of them",
    )
    p.add_argument(
        "--big-events",
        type=int,
        help="the big size in hand events instead (the hands it takes; e.g. 10000000)",
    )
    p.add_argument(
        "--months", type=int, default=12, help="the copies are dealt over this many past months"
    )
    p.add_argument(
        "--fill-seconds", type=float, help="stop copying after this long and measure what is there"
    )
    p.add_argument("--hands", type=int, default=6, help="measured hands at each size")
    p.add_argument("--rounds", type=int, default=200, help="read rounds at each size")
    args = p.parse_args(argv)

    with scratch_server(args) as server:
        port, env, database_url, cache = server.port, server.env, server.database_url, server.cache
        players = [Player(port, f"growth{os.getpid()}_{i}") for i in range(4)]
        results: dict[int, Samples] = {}
        counts: dict[int, int] = {}
        sizes = [args.small, args.big]
        for step in range(2):
            size = sizes[step]
            if step == 1 and args.big_events:
                # the played hands first, to know a hand's mean length
                fill(env, database_url, args.played, args.seed + 1, args.played)
                size = sizes[1] = int(args.big_events / events_per_hand(database_url)) + 1
            seconds = fill(
                env,
                database_url,
                size,
                args.seed + size,
                args.played,
                args.months,
                args.fill_seconds,
            )
            counts[size] = finished_hands(database_url)
            print(
                f"filled to {counts[size]} finished hands ({event_count(database_url)} events;"
                f" load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})"
                f" in {seconds:.1f} s",
                flush=True,
            )
            for player in players:  # idle during the fill, maybe past the keep-alive
                player.conn.close()
            results[size] = measure(players, args, str(size))
        report(results, counts, args, cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
