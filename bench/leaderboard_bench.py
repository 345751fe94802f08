"""Leaderboards and ratings at scale, against the framework floor in the same run.

    .venv/bin/python bench/leaderboard_bench.py [--players 1000000] [--hands 40] [--rounds 200]
        [--ranked-hands 10000000] [--keep] [--reuse]

It creates a scratch database (``test_chan_ratings_bench`` on the server of ``--db``, default
``$DATABASE_OWNER_URL``, dropped first), migrates it and runs Django in this process on it.
The load of 1,000,000 players takes minutes: ``--keep`` keeps the database after the run and
``--reuse`` runs on a kept one (migrated again, not dropped, not loaded again; its earlier runs'
settlement players stay on the boards, so the bottom player's rank is counted, not assumed).

* load: ``--players`` accounts and, for each, its rows of the all-time ``rating:chan_van_van``,
  ``quan`` and ``xp`` boards and of this week's ``quan`` board, plus its rating row, bulk-loaded in
  SQL (the accounts' history trigger off for the load, this scratch database only), and
  ``--ranked-hands`` (10,000,000) ranked hands' rating history: four rating-change rows a hand,
  set-based, its indexes built after the insert (the hands' own rows are not loaded: the reads
  never touch them, and the settlement's appends go to the indexes of the history);
* reads (in process, DRF's APIClient, interleaved round by round): the floor
  ``GET /api/v1/auth/check`` (token lookup, DRF, JSON, as bench/api_bench.py's floor), the top 50
  of the rating board, the week's quan board, and ``?around=me`` for a player at the very
  bottom of the rating board (the worst case for a count of the rows above) and on the week's
  quan board (200,001 distinct scores: the histogram's levels at work). Median and p90 of each
  and the ratio to the floor's median (target ≤ 1.5×);
* settlement: ``--hands`` whole hands played through the API by four players (the heuristic
  bot's moves on fixed decks, as bench/api_bench.py), each settled by ``hand_settle``; the time of
  the rating update (``hand_rate``) and of the board rows (``boards_record_settled``) is measured
  inside it, and reported against the rest of the booking (target ≤ 20 %).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCRATCH = "test_chan_ratings_bench"
PASSWORD = "bench-Passw0rd-long-enough"


def scratch_database(server_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))


def drop_database(server_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def p90(xs: list[float]) -> float:
    return sorted(xs)[int(0.9 * (len(xs) - 1))]


LOAD_SQL = [
    "SET session_replication_role = replica",  # no history trigger, no FK checks: the load only
    """INSERT INTO accounts_user (password, is_superuser, username, first_name, last_name, email,
        is_staff, is_active, date_joined, display_name, xp, level, created_at, updated_at, vip,
        badge, vip_points, ban_reason, is_bot, signup_address)
       SELECT '!', false, 'p' || g, '', '', '', false, true, now(), '', (g::bigint * 7919) %% 5000, 1,
        now(), now(), 0, false, 0, '', false, ''
       FROM generate_series(1, %(n)s) g""",
    """INSERT INTO games_playerrating (user_id, family, mu, sigma, rating, hands, updated_at)
       SELECT id, 'chan_van_van', 25 + ((id * 104729) %% 2000) / 100.0 - 10, 3, 0, 30, now()
       FROM accounts_user WHERE username LIKE 'p%%'""",
    "UPDATE games_playerrating SET rating = round(1500 + 40 * (mu - 3 * sigma))",
    """INSERT INTO games_boardscore (board, period, room, user_id, score, hands, updated_at)
       SELECT 'rating:chan_van_van', 'all', '', user_id, rating, hands, now()
       FROM games_playerrating""",
    """INSERT INTO games_boardscore (board, period, room, user_id, score, hands, updated_at)
       SELECT b, p, '', id, ((id * 15485863) %% 200001) - 100000, 30, now()
       FROM accounts_user, (VALUES ('quan', 'all'), ('xp', 'all'), ('quan', %(week)s)) v(b, p)
       WHERE username LIKE 'p%%'""",
    "SET session_replication_role = DEFAULT",
    # The histogram's triggers were off for the load (replica role): count it from the rows.
    "SELECT games_boardbucket_rebuild()",
    "VACUUM ANALYZE accounts_user",
    "VACUUM ANALYZE games_playerrating",
    "VACUUM ANALYZE games_boardscore",
    "VACUUM ANALYZE games_boardbucket",
]

# The ranked hands' history: each hand's four rating-change rows, so that a settlement appends
# its own to indexes of that size. Set-based, with the table's indexes other than its primary
# key dropped for the insert and built after it. The hands themselves are not loaded (the rows'
# foreign key to games_hand is not checked, replica role, this scratch database only); their ids
# lie below the hands the bench plays (the hand id sequence is moved past them), so the "rated
# already" lookup of a real hand finds none of them.
HISTORY_SQL = """
INSERT INTO games_ratingchange (user_id, hand_id, family, reversal, mu_before, sigma_before,
    mu_after, sigma_after, rating_before, rating_after, created_at)
SELECT u.lo + ((g::bigint * 4 + s) * 7919) %% u.n, %(base)s + g, 'chan_van_van', false,
    25 + s, 3, 25.1 + s, 2.99, 1500 + 10 * s, 1504 + 10 * s,
    now() - (%(hands)s - g) * interval '3 seconds'
FROM (SELECT min(id) AS lo, count(*) AS n FROM accounts_user WHERE username LIKE 'p%%') u,
    generate_series(1, %(hands)s) g, generate_series(0, 3) s
"""


def load_history(cursor: Any, hands: int) -> None:
    """``hands`` ranked hands' rating-change rows (HISTORY_SQL), the table's secondary indexes
    and unique constraints dropped for the insert and made again after it."""
    table = "games_ratingchange"
    cursor.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = %s::regclass AND contype = 'u'",
        [table],
    )
    uniques = cursor.fetchall()
    cursor.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexname NOT IN"
        " (SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass)",
        [table, table],
    )
    indexes = cursor.fetchall()
    cursor.execute("SELECT coalesce(max(id), 0) + 1000 FROM games_hand")
    base = cursor.fetchone()[0]
    cursor.execute("SET maintenance_work_mem = '512MB'")
    for name, _ in uniques:
        cursor.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
    for name, _ in indexes:
        cursor.execute(f'DROP INDEX "{name}"')
    cursor.execute("SET session_replication_role = replica")
    cursor.execute(HISTORY_SQL, {"base": base, "hands": hands})
    cursor.execute("SET session_replication_role = DEFAULT")
    for name, definition in uniques:
        cursor.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
    for _, definition in indexes:
        cursor.execute(definition)
    cursor.execute(
        "SELECT setval(pg_get_serial_sequence('games_hand', 'id'), %s)", [base + hands + 1]
    )
    cursor.execute(f"VACUUM ANALYZE {table}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--db", default=os.environ.get("DATABASE_OWNER_URL", ""))
    p.add_argument("--players", type=int, default=1_000_000)
    p.add_argument("--hands", type=int, default=40)
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument(
        "--ranked-hands",
        type=int,
        default=10_000_000,
        help="rating history loaded: four change rows a hand (0: none)",
    )
    p.add_argument("--scratch", default=SCRATCH)
    p.add_argument("--keep", action="store_true", help="keep the scratch database")
    p.add_argument("--reuse", action="store_true", help="run on a kept one (no load)")
    args = p.parse_args()
    if not args.db.startswith(("postgres://", "postgresql://")):
        p.error("--db (or DATABASE_OWNER_URL) must be a PostgreSQL URL")
    if args.reuse:
        args.keep = True
        url = urlunsplit(urlsplit(args.db)._replace(path=f"/{args.scratch}"))
    else:
        url = scratch_database(args.db, args.scratch)
    os.environ.update(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": os.environ.get("SECRET_KEY") or "board-bench-" + "x" * 40,
            "CHAN_RECORD_KEY": os.environ.get("CHAN_RECORD_KEY")
            or "bench:YmVuY2gtb25seS1yZWNvcmQta2V5LW5vdC1zZWNyZXQ=",
            "ALLOWED_HOSTS": "testserver,localhost",
            "THROTTLE_USER": "100000000/min",
            "THROTTLE_ANON": "100000000/min",
            "DB_CONN_MAX_AGE": "600",
            "CHAN_CLOCK": "0",
            "CHAN_ALLOW_FIXED_DECK": "1",
            # --reuse signs up four more players on each run, all from 127.0.0.1
            "CHAN_SIGNUPS_PER_ADDRESS_PER_DAY": "100000",
        }
    )
    os.environ.pop("DEBUG", None)
    os.environ.pop("DATABASE_OWNER_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone
    from rest_framework.test import APIClient

    import games.services.quan_booking as booking
    from accounts.models import User
    from accounts.services import token_create
    from games.models import BoardScore
    from games.rating_terms import week_of
    from games.rules import HandConfig, Phase, apply, new_hand, shuffle
    from games.rules.bots import HeuristicBot
    from games.rules.cards import code
    from games.rules.ruleset import build_ruleset

    try:
        t = time.perf_counter()
        call_command("migrate", verbosity=0)
        print(f"migrate       {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        if args.reuse:
            with connection.cursor() as c:
                c.execute("SELECT count(*) FROM accounts_user WHERE username LIKE 'p%%'")
                args.players = c.fetchone()[0]
            print(f"reused        {args.players:,} players")
        else:
            with connection.cursor() as c:
                for sql in LOAD_SQL:
                    c.execute(sql, {"n": args.players, "week": week_of(timezone.now())})
            n_rows = args.players * 4
            print(
                f"loaded        {args.players:,} players, {n_rows:,} board rows "
                f"in {time.perf_counter() - t:.1f} s"
            )
            if args.ranked_hands:
                t = time.perf_counter()
                with connection.cursor() as c:
                    load_history(c, args.ranked_hands)
                print(
                    f"loaded        {args.ranked_hands:,} ranked hands' rating history "
                    f"({4 * args.ranked_hands:,} rows) in {time.perf_counter() - t:.1f} s"
                )

        def client_for(user: Any) -> APIClient:
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_create(user=user)[1]}")
            return client

        top_user = User.objects.get(username="p1")
        bottom = (
            User.objects.filter(ratings__family="chan_van_van")
            .order_by("ratings__rating", "-id")
            .first()
        )
        reader, low = client_for(top_user), client_for(bottom)

        def get(client: APIClient, path: str) -> Callable[[], object]:
            def call() -> object:
                r = client.get(path)
                assert r.status_code == 200, r.content[:300]
                return r

            return call

        week = week_of(timezone.now())
        cases = {
            "floor": get(reader, "/api/v1/auth/check"),
            "rating top 50": get(reader, "/api/v1/leaderboards/rating?limit=50"),
            "quan week top 50": get(reader, f"/api/v1/leaderboards/quan?season={week}&limit=50"),
            "around me (last)": get(low, "/api/v1/leaderboards/rating?around=me&limit=50"),
            "quan around me": get(low, f"/api/v1/leaderboards/quan?season={week}&around=me"),
        }
        body = low.get("/api/v1/leaderboards/rating?around=me&limit=50").json()
        ranked = BoardScore.objects.filter(board="rating:chan_van_van", period="all", room="")
        assert body["me"]["rank"] == ranked.count(), body["me"]
        samples: dict[str, list[float]] = {k: [] for k in cases}
        for fn in cases.values():
            for _ in range(10):
                fn()
        for _ in range(args.rounds):
            for name, fn in cases.items():
                t = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - t)
        floor = statistics.median(samples["floor"])
        print(f"{'read':<20}{'median ms':>10}{'p90 ms':>9}{'x floor':>9}")
        for name, xs in samples.items():
            med = statistics.median(xs)
            print(f"{name:<20}{1e3 * med:>10.2f}{1e3 * p90(xs):>9.2f}{med / floor:>9.2f}")

        # ------------------------------------------------------------ settlement overhead
        spent = {"rate": 0.0, "boards": 0.0, "settle": 0.0}

        def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(*a: Any, **kw: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return fn(*a, **kw)
                finally:
                    spent[name] += time.perf_counter() - t0

            return wrapper

        booking.hand_rate = timed("rate", booking.hand_rate)
        booking.boards_record_settled = timed("boards", booking.boards_record_settled)
        players = []
        run = f"{int(time.time()) % 100000}" if args.reuse else ""
        for i in range(4):
            anon = APIClient()
            r = anon.post(
                "/api/v1/auth/register",
                {"username": f"bench{run}x{i}", "password": PASSWORD},
                format="json",
            )
            assert r.status_code == 201, r.content
            c = APIClient()
            c.credentials(HTTP_AUTHORIZATION=f"Bearer {r.json()['token']}")
            players.append(c)
        settled = 0
        for h in range(args.hands):
            seed = f"board-bench:{h}"
            deck = shuffle(seed.encode())
            state = new_hand(HandConfig(4, ruleset=build_ruleset({})), deck, 0)
            bots = [HeuristicBot(random.Random(f"{seed}:{s}")) for s in range(4)]
            r = players[0].post(
                "/api/v1/tables",
                {"name": f"b{h}", "stake": 1, "deck": [code(k) for k in deck], "dealer": 0},
                format="json",
            )
            assert r.status_code == 201, r.content
            table = r.json()["id"]
            for c in players[1:]:
                assert c.post(f"/api/v1/tables/{table}/join", {}, format="json").status_code == 200
            for c in players:
                r = c.post(f"/api/v1/tables/{table}/ready", {}, format="json")
            hand_id = r.json()["hand_id"]
            seq = 0
            while state.phase is not Phase.ENDED:
                move = bots[state.turn].choose(state, state.turn)
                r = players[move.seat if hasattr(move, "seat") else state.turn].post(
                    f"/api/v1/hands/{hand_id}/moves",
                    {**move.to_dict(), "expected_seq": seq},
                    format="json",
                )
                assert r.status_code == 201, r.content
                state = apply(state, move)
                seq += 1
            t = time.perf_counter()
            booking.hand_settle(hand_id=hand_id)  # the task may have booked it: then a no-op
            spent["settle"] += time.perf_counter() - t
            settled += 1
            for c in players:
                c.post(f"/api/v1/tables/{table}/leave", {}, format="json")
        # hand_settle may have run inside the moves' requests (on commit) too: the wrappers count
        # every run, so the shares below are over every booking.
        rest = spent["settle"] - spent["rate"] - spent["boards"]
        if not settled:  # --hands 0: the reads only
            return 0
        print(
            f"settlement    {settled} hands: rating {1e3 * spent['rate'] / settled:.2f} ms, "
            f"boards {1e3 * spent['boards'] / settled:.2f} ms a hand"
        )
        if rest > 0:
            print(
                f"              booking without them {1e3 * rest / settled:.2f} ms a hand; "
                f"overhead {(spent['rate'] + spent['boards']) / rest:.1%}"
            )
    finally:
        connection.close()
        if not args.keep:
            drop_database(args.db, args.scratch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
