"""Does a move or a state read slow down as finished hands pile up? Small database against big.

    .venv/bin/python bench/growth_bench.py [--small 10] [--big 10000] [--hands 6] [--rounds 200]

It starts gunicorn on a scratch database as ``bench/api_bench.py`` does (its helpers, imported),
fills the database with ``--small`` finished hands, measures, fills it up to ``--big`` finished
hands and measures again. Filling is ``manage.py play_bots`` on the scratch database
(``CHAN_CLOCK=0``) for up to ``--played`` hands: whole hands played through the services by bots
at three tables, each settled in the Quan ledger, so every table the game writes (hands, their
seats and logs, ledger transactions and entries) grows as in production. Beyond ``--played``
the finished hands are copied in set-based SQL (``copy_hands``): each one's row, seats, log and
player-feed rows, ``COPIES`` copies of every source hand a statement, as the server's superuser
with the row triggers off (``session_replication_role = replica``; what the chain trigger checks
holds by construction and is verified over a sample; the copies' hashes are their sources', so
copied hands are **not** chain-verified: ``audit_hands`` would report them). The ledger is not
copied. Indexes, constraints and partitions are production's. The measured players' own hands
are among the sources, so at the big size they too have long histories and feeds.
Measuring is api_bench's: ``--hands`` scripted hands at a fresh table, four keep-alive players,
every move timed and, in the last hand, ``--rounds`` rounds of floor / state read / 304 poll; the
floor (``GET /api/v1/auth/check``) is timed beside each move too; the same scripted hands at
both sizes. The fill runs while gunicorn idles (it ends with ``VACUUM (ANALYZE)`` and a
checkpoint); the measurement starts after it.

``--big-events N`` sets the big size in hand events instead (10,000,000), the hands
it takes at the played hands' mean length. The copies are spread over ``--months`` past months
(copy g of a hand dealt g mod months months earlier), so the partitioned log (games 0028) holds
them in as many monthly partitions, as a server that ran that long would. After each fill it
prints the events, partitions, feed rows, database size and load average, and what the copy
did (seconds per table).

It prints the median and p90 of each request at both sizes and the ratio small/big of the
medians (raw, and each divided by its own floor to take out drift between the two runs; the
verdict reads the latter). Goal: ratio >= 0.9 for the move and the state read.
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
    p90_of,
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


# The copied tables' columns, read from the catalogue (so a column a later migration adds is
# copied too), each with whether it is a timestamp (shifted with the copy's month).
COLUMNS_QUERY = (
    "SELECT column_name, data_type = 'timestamp with time zone' FROM information_schema.columns"
    " WHERE table_schema = 'public' AND table_name = %s AND column_name <> 'id'"
    " AND is_generated = 'NEVER' ORDER BY ordinal_position"
)


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


def database_size(database_url: str) -> tuple[int, int, int]:
    """The database's bytes, its feed rows, and the hand log's partitions (the default's too)."""
    import psycopg

    with psycopg.connect(database_url) as conn:
        return conn.execute(
            "SELECT pg_database_size(current_database()), (SELECT count(*) FROM games_feedentry),"
            " (SELECT count(*) FROM pg_inherits WHERE inhparent = 'games_handevent'::regclass)"
        ).fetchone()


def copy_select(conn, table: str, replace: dict[str, str]) -> tuple[str, str]:
    """The column list of ``table`` and the SELECT list that copies a row of it: each column as
    it is, a timestamp shifted by the copy's month, the columns in ``replace`` as given."""
    names, values = [], []
    for name, is_time in conn.execute(COLUMNS_QUERY, [table]).fetchall():
        names.append(name)
        if name in replace:
            values.append(replace[name])
        elif is_time:
            values.append(f"{name} - {MONTH}")
        else:
            values.append(name)
    return ", ".join(names), ", ".join(values)


# Copy g of a hand is dealt g mod months months before its source (its log's partition key, and
# every timestamp of it, with it) at id and number shifted by (g + 1) strides past the last pass.
MONTH = "(g %% %(m)s) * interval '1 month'"
NEW_HAND = "hand_id + %(s)s + (g + 1) * %(t)s"


def copy_hands(
    database_url: str, target: int, months: int = 1, seconds: float | None = None
) -> dict[str, object]:
    """Copy finished hands until ``target`` are in the database: each hand's row, seats, log and
    player-feed rows (not its ledger transaction), in set-based SQL.

    The sources (every finished, settled hand) are read once into temporary tables; each pass
    then copies each of them up to ``COPIES`` times in one ``INSERT … SELECT`` a table
    (``generate_series`` for the copies; ids, numbers, feed keys and per-player feed seqs
    computed), copy ``g`` dealt ``g mod months`` months earlier (its events land in that month's
    partition), and commits; at the end the hand id sequence is moved past them, the database
    vacuumed and analyzed (what autovacuum would have done) and checkpointed, so neither runs
    during the measurement.

    As the server's superuser (the bench's ``--db``) the copy runs with
    ``session_replication_role = replica``: no row trigger (the chain trigger, the append-only
    guards) and no deferred foreign-key check runs for the copied rows. What those would check
    holds by construction (a copied event links to its source's predecessor's hash, as its
    source does; seq 0 to the copied hand's seed_hash; its key is its copy's created_at; every
    hand, seat and user referred to exists) and ``chain_sample_check`` verifies it over a
    sample afterwards. The hashes themselves are the sources' (they cover the hand id), so
    ``audit_hands`` would report the copies: they are not chain-verified. Indexes, constraints
    and partitions are production's (nothing dropped or deferred). Without superuser the same
    SQL runs through the triggers (about 10 times slower). Stops early after ``seconds`` if
    given (the bench then measures what it has). Returns what it did (for the report)."""
    import psycopg

    done: dict[str, object] = {"triggers": "on"}
    with psycopg.connect(database_url) as conn:
        conn.execute("SET jit = off")  # the planner's row estimates make it compile every pass
        conn.execute("SET work_mem = '256MB'")  # the ORDER BY of a pass sorts in memory
        conn.execute("SET synchronous_commit = off")
        if conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
            conn.execute("SET session_replication_role = replica")
            done["triggers"] = "off (session_replication_role = replica)"
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
        values = {"ids": sources}
        for source, table, column in (
            ("src_hand", "games_hand", "id"),
            ("src_seat", "games_handseat", "hand_id"),
            ("src_event", "games_handevent", "hand_id"),
            ("src_feed", "games_feedentry", "hand_id"),
        ):
            conn.execute(
                f"CREATE TEMP TABLE {source} AS SELECT * FROM {table} WHERE {column} = ANY(%(ids)s)",
                values,
            )
        odd = conn.execute(
            "SELECT min(key) FROM src_feed WHERE split_part(key, ':', 2) <> hand_id::text"
        ).fetchone()[0]
        if odd is not None:  # the copies' keys are written '<fact>:<hand>[:…]' below
            raise SystemExit(f"a hand's feed key without its hand id second: {odd!r}")
        hand_columns, hand_values = copy_select(
            conn,
            "games_hand",
            {"number": "number + %(s)s + (g + 1) * %(t)s"},
        )
        seat_columns, seat_values = copy_select(conn, "games_handseat", {"hand_id": NEW_HAND})
        event_columns, event_values = copy_select(conn, "games_handevent", {"hand_id": NEW_HAND})
        feed_columns, feed_values = copy_select(
            conn,
            "games_feedentry",
            {
                "hand_id": NEW_HAND,
                # the player's next seqs, in the copies' order (b below)
                "seq": "head + g * rows + rank",
                # the fact's key names the copy's hand ('turn:<hand>:<seq>', 'dealt:<hand>' …;
                # string functions: a regular expression with the id in it compiles every row)
                "key": "split_part(key, ':', 1) || ':' || (" + NEW_HAND + ")"
                " || substr(key, length(split_part(key, ':', 1)) + length(hand_id::text) + 2)",
            },
        )
        for k in range(months):
            conn.execute(
                "SELECT chan_month_partition_create('games_handevent',"
                " (now() - %s * interval '1 month')::date)",
                [k],
            )
        conn.commit()
        shift = 0
        have = finished_hands(database_url)
        started = time.monotonic()
        deadline = None if seconds is None else started + seconds
        passes = 0
        seconds_in = dict.fromkeys(("hands", "seats", "events", "feed", "commits"), 0.0)
        while (missing := target - have) > 0:
            if deadline is not None and time.monotonic() > deadline:
                print(f"copying stopped after {seconds:g} s at {have} hands", flush=True)
                break
            copies = min(COPIES, -(-missing // len(sources)))
            batch = sources[: min(len(sources), missing)]
            have += copies * len(batch)
            values = {"s": shift, "t": stride, "n": copies, "m": months, "ids": batch}
            series = "generate_series(0, %(n)s - 1) g"
            clock = time.monotonic()
            conn.execute(
                f"INSERT INTO games_hand (id, {hand_columns})"
                f" SELECT id + %(s)s + (g + 1) * %(t)s, {hand_values}"
                f" FROM src_hand, {series} WHERE id = ANY(%(ids)s)",
                values,
            )
            clock = lap(seconds_in, "hands", clock)
            conn.execute(
                f"INSERT INTO games_handseat ({seat_columns}) SELECT {seat_values}"
                f" FROM src_seat, {series} WHERE hand_id = ANY(%(ids)s)",
                values,
            )
            clock = lap(seconds_in, "seats", clock)
            conn.execute(
                f"INSERT INTO games_handevent ({event_columns}) SELECT {event_values}"
                f" FROM src_event, {series} WHERE hand_id = ANY(%(ids)s)"
                " ORDER BY g, hand_id, seq",
                values,
            )
            clock = lap(seconds_in, "events", clock)
            conn.execute(
                # b: the batch's feed rows, each with its player's last seq (head), the
                # player's rows in the batch and its rank among them
                "WITH b AS MATERIALIZED (SELECT f.*, (SELECT coalesce(max(seq), 0) FROM games_feedentry e"
                "  WHERE e.user_id = f.user_id) AS head,"
                " count(*) OVER (PARTITION BY user_id) AS rows,"
                " row_number() OVER (PARTITION BY user_id ORDER BY hand_id, seq) AS rank"
                " FROM src_feed f WHERE hand_id = ANY(%(ids)s))"
                f" INSERT INTO games_feedentry ({feed_columns}) SELECT {feed_values}"
                f" FROM b, {series} ORDER BY g, hand_id, user_id, seq",
                values,
            )
            clock = lap(seconds_in, "feed", clock)
            conn.commit()
            lap(seconds_in, "commits", clock)
            shift += copies * stride
            passes += 1
        done["passes"] = passes
        done["copy seconds"] = time.monotonic() - started
        done.update({f"{k} s": v for k, v in seconds_in.items()})
        conn.execute("SET session_replication_role = DEFAULT")
        conn.execute(
            "SELECT setval(pg_get_serial_sequence('games_hand', 'id'), max(id)) FROM games_hand"
        )
        conn.commit()
        done["chain"] = chain_sample_check(conn)
        conn.commit()
        conn.autocommit = True
        started = time.monotonic()
        conn.execute("VACUUM (ANALYZE)")
        conn.execute("CHECKPOINT")
        done["vacuum seconds"] = time.monotonic() - started
    return done


def lap(seconds_in: dict[str, float], key: str, since: float) -> float:
    now = time.monotonic()
    seconds_in[key] += now - since
    return now


def chain_sample_check(conn, sample: int = 2000) -> str:
    """What the chain trigger checks, set-based over the events of the last ``sample`` hands:
    seq 0 links to its hand's seed_hash and has its created_at as key, every later event links
    to its predecessor's hash under the same key, and the seqs are 0..n-1. Raises on a break."""
    row = conn.execute(
        """
        WITH h AS (SELECT id, seed_hash, created_at FROM games_hand
                   WHERE status = 'ended' ORDER BY id DESC LIMIT %s),
        e AS (SELECT e.hand_id, e.seq, e.prev_hash, e.hash, e.hand_created_at,
                     lag(e.hash) OVER w AS before, lag(e.hand_created_at) OVER w AS before_key,
                     row_number() OVER w - 1 AS n, h.seed_hash, h.created_at
              FROM games_handevent e JOIN h ON h.id = e.hand_id
              WINDOW w AS (PARTITION BY e.hand_id ORDER BY e.seq))
        SELECT count(*), count(DISTINCT hand_id), count(*) FILTER (WHERE seq <> n
            OR (seq = 0 AND (prev_hash <> seed_hash OR hand_created_at <> created_at))
            OR (seq > 0 AND (prev_hash IS DISTINCT FROM before
                             OR hand_created_at IS DISTINCT FROM before_key))) FROM e
        """,
        [sample],
    ).fetchone()
    events, hands, broken = row
    if broken:
        raise SystemExit(f"copied hands: {broken} of {events} events break the chain's links")
    return f"links hold in a sample of {hands} hands ({events} events)"


def fill(
    env: dict,
    database_url: str,
    target: int,
    seed: int,
    played: int,
    months: int = 1,
    seconds: float | None = None,
) -> tuple[float, dict[str, object]]:
    """Bring the database to ``target`` finished hands: up to ``played`` of them played by bots,
    the rest copies of those (``copy_hands``). Return the seconds it took and what the copy
    did."""
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
    done: dict[str, object] = {}
    if finished_hands(database_url) < target:
        done = copy_hands(database_url, target, months, seconds)
    return time.monotonic() - started, done


def measure(players: list[Player], args: argparse.Namespace) -> Samples:
    """The same scripted hands (decks and moves) at both sizes: the medians compare like with
    like (a hand's mix of moves sets its median)."""
    samples = Samples()
    play_hand(players, f"{args.seed}:warm-up", Samples())
    for i in range(args.hands):
        rounds = args.rounds if i == args.hands - 1 else 0
        play_hand(players, f"{args.seed}:{i}", samples, read_rounds=rounds)
    return samples


def report(results: dict[int, Samples], counts: dict[int, int], args, cache) -> dict[str, float]:
    small, big = sorted(results)
    med = {n: {k: statistics.median(v) for k, v in s.seconds.items()} for n, s in results.items()}
    p90 = {n: {k: p90_of(v) for k, v in s.seconds.items()} for n, s in results.items()}
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
            seconds, done = fill(
                env,
                database_url,
                size,
                args.seed + size,
                args.played,
                args.months,
                args.fill_seconds,
            )
            counts[size] = finished_hands(database_url)
            size_bytes, feed_rows, partitions = database_size(database_url)
            print(
                f"filled to {counts[size]} finished hands ({event_count(database_url)} events"
                f" in {partitions} partitions, {feed_rows} feed rows, database"
                f" {size_bytes / 2**30:.2f} GiB; load average"
                f" {' '.join(f'{x:.2f}' for x in os.getloadavg())}) in {seconds:.1f} s",
                flush=True,
            )
            if done:
                print(
                    "copied: "
                    + "; ".join(
                        f"{k} {v:.1f}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in done.items()
                    ),
                    flush=True,
                )
            for player in players:  # idle during the fill, maybe past the keep-alive
                player.conn.close()
            results[size] = measure(players, args)
        report(results, counts, args, cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
