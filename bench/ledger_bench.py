"""Ledger speed on PostgreSQL, against floors measured in the same run.

    .venv/bin/python bench/ledger_bench.py [--entries 1000000] [--postings 400] [--rounds 200]

It creates a scratch database (``chan_ledger_bench`` on the server of ``--db``, default
``$DATABASE_URL``, dropped first), migrates it and runs Django in this process on it.

Measured:

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
            " INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after)"
            " SELECT id, account_id, amount, after FROM ("
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
    """Link the loaded transactions into the ledger's hash chain (accounts/ledger_hash.py), as
    ``ledger_post`` would have: ``ledger_check`` recomputes it before anything is timed."""
    from accounts.ledger_hash import ledger_tx_hash

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
        rows.append((pk, head, digest))
        head = digest
    c.execute("CREATE TEMP TABLE bench_chain (id bigint, prev_hash text, hash text)")
    with c.cursor.copy("COPY bench_chain FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    c.execute(
        "UPDATE accounts_ledgertransaction t SET prev_hash = b.prev_hash, hash = b.hash"
        " FROM bench_chain b WHERE t.id = b.id"
    )
    c.execute("DROP TABLE bench_chain")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--db", default=os.environ.get("DATABASE_URL", ""))
    p.add_argument("--entries", type=int, default=1_000_000, help="entries of the big wallet")
    p.add_argument("--small", type=int, default=1_000, help="entries of the small wallet")
    p.add_argument("--postings", type=int, default=400)
    p.add_argument("--rounds", type=int, default=200)
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
            "ALLOWED_HOSTS": "testserver,localhost",
            "THROTTLE_USER": "100000000/min",
            "DB_CONN_MAX_AGE": "600",
            "CHAN_CLOCK": "0",
        }
    )
    os.environ.pop("DEBUG", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction
    from rest_framework.test import APIClient

    from accounts.ledger import (
        balance_adjust,
        house_account,
        issuance_account,
        ledger_post,
        wallet_for,
    )
    from accounts.ledger_selectors import ledger_problems, wallet_balance
    from accounts.models import User
    from accounts.services import token_create

    try:
        call_command("migrate", verbosity=0)
        print(f"database: {args.scratch} (PostgreSQL {connection.pg_version // 10000})")

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
