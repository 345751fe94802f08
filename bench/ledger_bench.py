"""Ledger speed on PostgreSQL, against floors measured in the same run.

    .venv/bin/python bench/ledger_bench.py [--entries 1000000] [--postings 400] [--rounds 200]
        [--writers 8] [--seconds 5] [--write-rounds 2] [--writes-only] [--profile DIR]
        [--accounts-migration 0020_ledger_kinds_arenas_and_seasons]

It creates a scratch database (``chan_ledger_bench`` on the server of ``--db``, default
``$DATABASE_URL``, dropped first), migrates it and runs Django in this process on it.

Measured:

* concurrent settlements (``--writers``, 8, processes with their own connections, for
  ``--seconds`` each round): ``ledger_post`` of a hand settlement — 4 wallets (each writer its own
  table's players), the house (the table's sub-account, accounts 0017) and the table's pot — and
  beside it, in the same run, the floor: the same rows (balances updated, one transaction row,
  6 entry rows) written by plain SQL on trigger-less, unpartitioned copies of the ledger's
  tables (so the ratio includes the cost of partitioning the entries, accounts 0022), no checks,
  no chain. Prints ``settlements/s: N``, ``floor/s: N``, ``ratio: R``, ``deadlocks: N`` and
  ``errors: N``, the load average, and the CPU per settlement of each side (the writers' own and
  their PostgreSQL backends', from /proc: comparable whatever else the machine runs); rounds
  alternate ledger and floor; ``ledger_check`` must pass afterwards. ``--profile DIR``: writer 0
  of each ledger round under cProfile, and (connected as a superuser) PostgreSQL's time in each
  ledger function and trigger per settlement. ``--accounts-migration``: the accounts app
  migrated back first (an A/B of the ledger's triggers). ``--writes-only`` stops here;
* write floor: a transaction that updates one row and commits;
* posting: ``ledger_post`` of a hand settlement (4 wallets + the house, row locks in id order,
  5 entries through the balance trigger, the deferred balance check at commit) — rate and its cost
  in write floors;
* read floor: ``GET /api/v1/auth/check`` in process (token lookup, DRF, JSON);
* balance: ``wallet_balance(user)`` and ``GET /api/v1/me`` for a wallet with ``--small`` (1,000)
  entries and one with ``--entries`` (1,000,000) entries;
* statement: ``GET /api/v1/me/ledger`` (first page, 50 entries) for the same two wallets.

The big wallet is bulk-loaded in SQL with the ledger's triggers disabled for the load (this
scratch database only), its ``balance_after`` and balances computed by window functions, then the
triggers are enabled again and ``ledger_check`` must pass before anything is timed. Reads are
interleaved small/big round by round; each prints its median and p90, its ratio to its floor and
the ratio small/big (≥ 0.9 expected: the cost of a read does not grow with the ledger).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCRATCH = "chan_ledger_bench"


def scratch_database(server_url: str, name: str) -> str:
    """Drop and create ``name`` on the server of ``server_url``; return its URL."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))


def drop_database(server_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def timings(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def p90(xs: list[float]) -> float:
    return sorted(xs)[int(0.9 * (len(xs) - 1))]


def bulk_load(wallet_id: int, issuance_id: int, n: int) -> None:
    """``n`` grants of 1 Quan to the (new, empty) wallet from the issuance account, in SQL with
    the ledger's triggers disabled; ``balance_after`` is computed in the same statement."""
    from django.db import connection

    tables = ("accounts_ledgeraccount", "accounts_ledgertransaction", "accounts_ledgerentry")
    with connection.cursor() as c:
        c.execute("SELECT balance FROM accounts_ledgeraccount WHERE id = %s", [issuance_id])
        start = c.fetchone()[0]
        c.execute("SELECT hash FROM accounts_ledgertransaction ORDER BY id DESC LIMIT 1")
        head = (c.fetchone() or ["0" * 64])[0]
        for table in tables:
            c.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        c.execute(
            "WITH tx AS ("
            " INSERT INTO accounts_ledgertransaction"
            " (kind, idempotency_key, memo, created_at, prev_hash, hash)"
            " SELECT 'adjustment', 'bench:' || %(w)s || ':' || g, 'bench load', now(), '', ''"
            " FROM generate_series(1, %(n)s) AS g ORDER BY g"
            " RETURNING id, split_part(idempotency_key, ':', 3)::bigint AS g)"
            " INSERT INTO accounts_ledgerentry"
            " (transaction_id, account_id, amount, balance_after, transaction_created_at)"
            " SELECT id, account_id, amount, after, now() FROM ("
            "  SELECT id, g, %(i)s::bigint AS account_id, -1::bigint AS amount,"
            "         %(start)s::bigint - g AS after FROM tx"
            "  UNION ALL"
            "  SELECT id, g, %(w)s::bigint, 1::bigint, g FROM tx) AS legs"
            " ORDER BY g, amount",
            {"w": wallet_id, "i": issuance_id, "n": n, "start": start},
        )
        c.execute(
            "UPDATE accounts_ledgeraccount SET balance = CASE WHEN id = %s THEN %s ELSE %s END "
            "WHERE id IN (%s, %s)",
            [wallet_id, n, start - n, wallet_id, issuance_id],
        )
        chain_load(c, wallet_id, issuance_id, head)
        for table in tables:
            c.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
        for table in tables:
            c.execute(f"VACUUM ANALYZE {table}")


def chain_load(c: Any, wallet_id: int, issuance_id: int, head: str) -> None:
    """Link the loaded transactions into the ledger's hash chain (accounts/ledger_hash.py) and
    give each the record key's MAC, as ``ledger_post`` would have: ``ledger_check`` recomputes
    both before anything is timed."""
    from accounts.ledger_hash import ledger_tx_hash
    from accounts.record_keys import record_keys
    from games.rules.record_mac import LEDGER, record_mac

    keys = record_keys()

    c.execute(
        "SELECT id, idempotency_key FROM accounts_ledgertransaction"
        " WHERE idempotency_key LIKE %s ORDER BY id",
        [f"bench:{wallet_id}:%"],
    )
    rows = []
    for pk, key in c.fetchall():
        digest = ledger_tx_hash(
            prev=head,
            kind="adjustment",
            key=key,
            memo="bench load",
            user=None,
            hand=None,
            table=None,
            entries=[(issuance_id, -1), (wallet_id, 1)],
        )
        rows.append((pk, head, digest, *record_mac(keys, domain=LEDGER, digest=digest)))
        head = digest
    c.execute(
        "CREATE TEMP TABLE bench_chain (id bigint, prev_hash text, hash text, mac text,"
        " mac_key text)"
    )
    with c.cursor.copy("COPY bench_chain FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    c.execute(
        "UPDATE accounts_ledgertransaction t SET prev_hash = b.prev_hash, hash = b.hash,"
        " mac = b.mac, mac_key = b.mac_key FROM bench_chain b WHERE t.id = b.id"
    )
    c.execute("DROP TABLE bench_chain")


# --------------------------------------------------------------------------- concurrent writers

FLOOR_TABLES = """
CREATE TABLE bench_floor_account (LIKE accounts_ledgeraccount INCLUDING ALL);
CREATE TABLE bench_floor_tx (LIKE accounts_ledgertransaction INCLUDING ALL);
CREATE TABLE bench_floor_entry (LIKE accounts_ledgerentry INCLUDING ALL);
ALTER TABLE bench_floor_entry ALTER COLUMN transaction_created_at DROP DEFAULT;
INSERT INTO bench_floor_account SELECT * FROM accounts_ledgeraccount;
"""

FLOOR_UPDATE = (
    "UPDATE bench_floor_account a SET balance = a.balance + leg.amount"
    " FROM unnest(%s::bigint[], %s::bigint[]) AS leg(id, amount) WHERE a.id = leg.id"
    " RETURNING a.id, a.balance"
)
FLOOR_INSERT = (
    "WITH tx AS (INSERT INTO bench_floor_tx"
    " (kind, idempotency_key, memo, prev_hash, hash, created_at)"
    " VALUES ('hand_settlement', %s, '', '', '', now()) RETURNING id, created_at)"
    " INSERT INTO bench_floor_entry"
    " (transaction_id, account_id, amount, balance_after, transaction_created_at)"
    " SELECT tx.id, leg.id, leg.amount, leg.after, tx.created_at FROM tx,"
    " unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS leg(id, amount, after)"
)


def _settlement_legs(wallets: list[Any], pot: Any, house: Any, n: int) -> list[tuple[Any, int]]:
    """Hand ``n`` of a table: three losers pay 100 each, the winner takes 285, the house 10 and
    the pot 5."""
    winner = wallets[n % 4]
    return [(w, -100) for w in wallets if w is not winner] + [
        (winner, 285),
        (house, 10),
        (pot, 5),
    ]


def _writer(
    mode: str,
    writer: int,
    round_no: int,
    seconds: float,
    accounts: dict[str, Any],
    start: Any,
    out: Any,
    profile: str = "",
) -> None:
    """One writer process: settlements of its table for ``seconds`` after ``start`` opens.
    With ``profile`` (a file), writer 0 of a ledger round runs under cProfile and dumps there."""
    from django.db import OperationalError, connection

    from accounts.ledger import ledger_post
    from accounts.models import LedgerAccount

    connection.close()  # never share the parent's connection
    done = deadlocks = errors = 0
    by_id = {a.pk: a for a in LedgerAccount.objects.filter(pk__in=accounts["all"])}
    wallets = [by_id[pk] for pk in accounts["wallets"][writer]]
    pot = by_id[accounts["pots"][writer]]
    houses = [by_id[pk] for pk in accounts["houses"]]
    connection.ensure_connection()
    raw = connection.connection if mode == "floor" else None
    # A hand's fee goes to the house shard of its table (accounts/ledger.py: house_account).
    house = houses[accounts["tables"][writer] % len(houses)]
    profiler = None
    if profile and writer == 0 and mode == "ledger":
        import cProfile

        profiler = cProfile.Profile()
    backend = _backend_pid()
    start.wait()
    if profiler is not None:
        profiler.enable()
    cpu0 = (time.process_time(), _cpu_seconds(backend))
    t0 = time.perf_counter()
    end = t0 + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
        legs = _settlement_legs(wallets, pot, house, n)
        key = f"bench:{mode}:{round_no}:{writer}:{n}"
        try:
            if mode == "ledger":
                ledger_post(kind="hand_settlement", key=key, legs=legs)
            else:
                _floor_post(raw, key, legs)
            done += 1
        except OperationalError as exc:
            if "deadlock" in str(exc):
                deadlocks += 1
            else:
                errors += 1
        except Exception:  # noqa: BLE001 — counted and reported, never hidden
            errors += 1
    elapsed = time.perf_counter() - t0
    cpu = (time.process_time() - cpu0[0], _cpu_seconds(backend) - cpu0[1])
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    out.put((done, deadlocks, errors, elapsed, *cpu))
    connection.close()


def _backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as c:
        c.execute("SELECT pg_backend_pid()")
        return int(c.fetchone()[0])


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of a process on this machine, from /proc (0 where unreadable:
    a server elsewhere). The writers' own backends: what a settlement costs PostgreSQL whatever
    else the machine runs."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _floor_post(raw: Any, key: str, legs: list[tuple[Any, int]]) -> None:
    """The same rows as a settlement, by plain SQL: no lock order, no checks, no chain."""
    merged: dict[int, int] = {}
    for account, amount in legs:
        merged[account.pk] = merged.get(account.pk, 0) + amount
    ids = sorted(merged)
    amounts = [merged[pk] for pk in ids]
    with raw.transaction(), raw.cursor() as c:
        c.execute(FLOOR_UPDATE, [ids, amounts])
        after = dict(c.fetchall())
        c.execute(FLOOR_INSERT, [key, ids, amounts, [after[pk] for pk in ids]])


def _superuser(c: Any) -> bool:
    c.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    return bool(c.fetchone()[0])


def function_times(settlements: int) -> None:
    """PostgreSQL's time in each function and trigger of the ledger rounds, per settlement
    (``pg_stat_user_functions``: total includes what it calls, self does not)."""
    from django.db import connection

    time.sleep(1.5)  # the writers' statistics reach the shared counters
    with connection.cursor() as c:
        c.execute(
            "SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions"
            " ORDER BY self_time DESC"
        )
        rows = c.fetchall()
    print(f"PostgreSQL functions over {settlements:,} settlements (µs per settlement):")
    for name, calls, total, own in rows:
        print(
            f"  {name:<36} calls/settlement {calls / settlements:5.2f}"
            f"  total {total * 1e3 / settlements:7.1f}  self {own * 1e3 / settlements:7.1f}"
        )


def concurrent_settlements(
    writers: int, seconds: float, rounds: int, profile: str = ""
) -> dict[str, float]:
    """Settlements from ``writers`` processes, ledger and floor rounds alternating; prints and
    returns the rates. With ``profile`` (a folder): writer 0 of each ledger round under
    cProfile (``writer0-ledger-<round>.prof``) and, on a superuser's connection, PostgreSQL's
    own time in each trigger and function (``track_functions``) per settlement."""
    import multiprocessing

    from django.db import connection

    from accounts.ledger import balance_adjust, house_account, pot_account, wallet_for
    from accounts.models import User
    from games.models import Table

    try:
        from accounts.ledger import ledger_shards

        houses = [house_account(shard=k) for k in range(ledger_shards())]
    except ImportError:  # the ledger before sub-accounts (a "before" run)
        houses = [house_account()]
    owner = User.objects.create_user(username="bench-owner")
    wallets, pots, tables = [], [], []
    for w in range(writers):
        players = [User.objects.create_user(username=f"w{w}p{i}") for i in range(4)]
        for player in players:
            balance_adjust(user=player, amount=10**9, reason="bench", key=f"wfund{player.pk}")
        wallets.append([wallet_for(p).pk for p in players])
        table = Table.objects.create(owner=owner, name=f"b{w}", stake=10)
        tables.append(table.pk)
        pots.append(pot_account(table).pk)
    accounts = {
        "tables": tables,
        "wallets": wallets,
        "pots": pots,
        "houses": [h.pk for h in houses],
        "all": [pk for ws in wallets for pk in ws] + pots + [h.pk for h in houses],
    }
    with connection.cursor() as c:
        c.execute(FLOOR_TABLES)
        track = bool(profile) and _superuser(c)
        if track:  # the writers' new connections count their functions' time
            c.execute(
                f"ALTER DATABASE {connection.settings_dict['NAME']} SET track_functions = 'all'"
            )
            c.execute("SELECT pg_stat_reset()")
    connection.close()
    ctx = multiprocessing.get_context("fork")

    def prof(round_no: int) -> str:
        return str(Path(profile) / f"writer0-ledger-{round_no + 1}.prof") if profile else ""

    # done, seconds, deadlocks, errors, client CPU, server CPU
    totals = {m: [0, 0.0, 0, 0, 0.0, 0.0] for m in ("ledger", "floor")}
    for round_no in range(rounds):
        for mode in ("ledger", "floor"):
            start, out = ctx.Event(), ctx.Queue()
            procs = [
                ctx.Process(
                    target=_writer,
                    args=(mode, w, round_no, seconds, accounts, start, out, prof(round_no)),
                )
                for w in range(writers)
            ]
            for proc in procs:
                proc.start()
            time.sleep(1.0)  # every writer connected and waiting
            start.set()
            results = [out.get() for _ in procs]
            for proc in procs:
                proc.join()
            done = sum(r[0] for r in results)
            elapsed = max(r[3] for r in results)
            t = totals[mode]
            t[0] += done
            t[1] += elapsed
            t[2] += sum(r[1] for r in results)
            t[3] += sum(r[2] for r in results)
            t[4] += sum(r[4] for r in results)
            t[5] += sum(r[5] for r in results)
            print(
                f"  round {round_no + 1} {mode:<6} {done / elapsed:8,.0f}/s  ({done:,} in {elapsed:.1f} s)"
            )
    rate = totals["ledger"][0] / totals["ledger"][1]
    floor = totals["floor"][0] / totals["floor"][1]
    deadlocks = totals["ledger"][2] + totals["floor"][2]
    errors = totals["ledger"][3] + totals["floor"][3]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"writers: {writers} (house shards: {len(houses)}; load average now {load})")
    print(f"settlements/s: {rate:,.0f}")
    print(f"floor/s: {floor:,.0f}")
    print(f"ratio: {rate / floor:.2f}")
    print(f"deadlocks: {deadlocks}")
    print(f"errors: {errors}")
    for mode in ("ledger", "floor"):
        t = totals[mode]
        print(
            f"CPU per settlement ({mode}): client {t[4] * 1e3 / max(t[0], 1):.2f} ms,"
            f" server {t[5] * 1e3 / max(t[0], 1):.2f} ms"
        )
    if track:
        function_times(totals["ledger"][0])
    return {"rate": rate, "floor": floor, "deadlocks": deadlocks, "errors": errors}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--db", default=os.environ.get("DATABASE_URL", ""))
    p.add_argument("--entries", type=int, default=1_000_000, help="entries of the big wallet")
    p.add_argument("--small", type=int, default=1_000, help="entries of the small wallet")
    p.add_argument("--postings", type=int, default=400)
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--writers", type=int, default=8, help="concurrent settlement writers")
    p.add_argument("--seconds", type=float, default=5.0, help="each write round, in seconds")
    p.add_argument("--write-rounds", type=int, default=2, help="ledger/floor rounds")
    p.add_argument(
        "--profile",
        default="",
        help="folder: cProfile writer 0 of the ledger rounds, and (as a superuser) time"
        " PostgreSQL's functions",
    )
    p.add_argument(
        "--accounts-migration",
        default="",
        help="migrate the accounts app back to this migration before measuring (an A/B run of"
        " the ledger's triggers, e.g. 0020_ledger_kinds_arenas_and_seasons)",
    )
    p.add_argument(
        "--writes-only", action="store_true", help="the concurrent settlements only, no reads"
    )
    p.add_argument("--scratch", default=SCRATCH, help="name of the scratch database")
    p.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = p.parse_args()
    if not args.db.startswith(("postgres://", "postgresql://")):
        p.error("--db (or DATABASE_URL) must be a PostgreSQL URL")

    url = scratch_database(args.db, args.scratch)
    os.environ.update(
        {
            "DATABASE_URL": url,
            "SECRET_KEY": os.environ.get("SECRET_KEY") or "ledger-bench-" + "x" * 40,
            "CHAN_RECORD_KEY": os.environ.get("CHAN_RECORD_KEY")
            or "bench:YmVuY2gtb25seS1yZWNvcmQta2V5LW5vdC1zZWNyZXQ=",
            "ALLOWED_HOSTS": "testserver,localhost",
            "THROTTLE_USER": "100000000/min",
            "DB_CONN_MAX_AGE": "600",
            "CHAN_CLOCK": "0",
        }
    )
    os.environ.pop("DEBUG", None)
    os.environ.pop("DATABASE_OWNER_URL", None)  # the scratch database is --db's own
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction
    from rest_framework.test import APIClient

    from accounts import ledger_selectors
    from accounts.ledger import (
        balance_adjust,
        house_account,
        issuance_account,
        ledger_post,
        wallet_for,
    )
    from accounts.ledger_selectors import wallet_balance

    # The ledger's own checks (games adds more to LEDGER_CHECKS, the pot's shares among them,
    # which the bench's settlements, booked without a game, do not record).
    own_checks = [
        check
        for check in ledger_selectors.LEDGER_CHECKS
        if check.__module__ == "accounts.ledger_selectors"
    ]

    def ledger_problems() -> list[Any]:
        return ledger_selectors.ledger_problems(own_checks)

    from accounts.models import User
    from accounts.services import token_create

    try:
        call_command("migrate", verbosity=0)
        if args.accounts_migration:
            call_command("migrate", "accounts", args.accounts_migration, verbosity=0)
        print(f"database: {args.scratch} (PostgreSQL {connection.pg_version // 10000})")

        # ------------------------------------------------------------------ concurrent
        if args.profile:
            Path(args.profile).mkdir(parents=True, exist_ok=True)
        concurrent_settlements(args.writers, args.seconds, args.write_rounds, args.profile)
        problems = ledger_problems()
        assert not problems, problems[:5]
        print("ledger_check  clean (after the concurrent settlements)")
        if args.writes_only:
            return 0

        # ------------------------------------------------------------------ postings
        players = [User.objects.create_user(username=f"p{i}") for i in range(4)]
        for player in players:
            balance_adjust(user=player, amount=10**9, reason="bench", key=f"fund{player.pk}")
        wallets = [wallet_for(u) for u in players]
        house = house_account()
        floor_user = players[0].pk

        def write_floor() -> None:
            with transaction.atomic(), connection.cursor() as c:
                c.execute("UPDATE accounts_user SET last_login = now() WHERE id = %s", [floor_user])

        counter = iter(range(10**9))

        def posting() -> None:
            n = next(counter)
            winner = wallets[n % 4]
            legs = [(w, -100) for w in wallets if w is not winner]
            legs += [(winner, 285), (house, 15)]
            ledger_post(kind="hand_settlement", key=f"bench-hand:{n}", legs=legs)

        for fn in (write_floor, posting):
            timings(fn, 20)  # warm up
        floor_w, post_t = [], []
        for _ in range(args.postings):
            floor_w += timings(write_floor, 1)
            post_t += timings(posting, 1)
        floor_med, post_med = statistics.median(floor_w), statistics.median(post_t)
        print(f"write floor   {1 / floor_med:8,.0f}/s   median {floor_med * 1e3:6.2f} ms")
        print(
            f"posting       {1 / post_med:8,.0f}/s   median {post_med * 1e3:6.2f} ms  "
            f"p90 {p90(post_t) * 1e3:6.2f} ms  = {post_med / floor_med:4.1f}x write floor"
        )

        # ------------------------------------------------------------------ reads
        small, big = (User.objects.create_user(username=n) for n in ("small", "big"))
        issuance = issuance_account()
        t = time.perf_counter()
        bulk_load(wallet_for(small).pk, issuance.pk, args.small)
        bulk_load(wallet_for(big).pk, issuance.pk, args.entries)
        print(
            f"loaded        {args.small:,} and {args.entries:,} entries "
            f"in {time.perf_counter() - t:.1f} s"
        )
        problems = ledger_problems()
        assert not problems, problems[:5]
        assert wallet_balance(small) == args.small and wallet_balance(big) == args.entries
        print("ledger_check  clean")

        clients = {}
        for user in (small, big):
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_create(user=user)[1]}")
            clients[user.username] = client

        def get(client: APIClient, path: str) -> Callable[[], object]:
            def call() -> object:
                response = client.get(path)
                assert response.status_code == 200, response.content[:200]
                return response

            return call

        floor_read = get(clients["small"], "/api/v1/auth/check")
        cases = {
            "balance read": {u.username: (lambda u=u: wallet_balance(u)) for u in (small, big)},
            "GET /me": {n: get(c, "/api/v1/me") for n, c in clients.items()},
            "GET /me/ledger": {n: get(c, "/api/v1/me/ledger") for n, c in clients.items()},
        }
        page = clients["big"].get("/api/v1/me/ledger").json()
        assert len(page["results"]) == 50 and page["next"], page
        results: dict[str, dict[str, list[float]]] = {c: {"small": [], "big": []} for c in cases}
        floor_r: list[float] = []
        for fn in [floor_read] + [f for case in cases.values() for f in case.values()]:
            timings(fn, 10)
        for _ in range(args.rounds):
            floor_r += timings(floor_read, 1)
            for name, fns in cases.items():
                for size in ("small", "big"):
                    results[name][size] += timings(fns[size], 1)
        floor_med = statistics.median(floor_r)
        print(f"read floor    GET /auth/check median {floor_med * 1e3:6.2f} ms")
        for name, by_size in results.items():
            s_med, b_med = statistics.median(by_size["small"]), statistics.median(by_size["big"])
            print(
                f"{name:<14}{args.small:>9,}: {s_med * 1e3:6.3f} ms ({s_med / floor_med:4.2f}x "
                f"floor)  {args.entries:>9,}: {b_med * 1e3:6.3f} ms  p90 "
                f"{p90(by_size['big']) * 1e3:6.3f} ms ({b_med / floor_med:4.2f}x floor)  "
                f"ratio small/big {s_med / b_med:4.2f}"
            )
    finally:
        connection.close()
        if not args.keep:
            drop_database(args.db, args.scratch)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
