"""What the application's database role (``chan_app``: a leaked ``DATABASE_URL``, an SQL
injection) can write without the record key: a ledger transaction or a hand event whose chain
hash is right, computed from the chain's head as anyone can (games.rules.ledger_chain,
games.rules.chain), with no MAC or a made-up one. The suite's connection is that role's."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django.db import connection

from games.rules.chain import event_hash
from games.rules.ledger_chain import GENESIS, ledger_tx_hash


def ledger_forge(
    *,
    key: str,
    legs: Sequence[tuple[int, int]],
    chain: int,
    user: int | None = None,
    kind: str = "adjustment",
    mac: tuple[str, str] | None = None,
) -> int:
    """Insert a balanced transaction of ``legs`` (account id, Quan) on ``chain`` with the
    chain hash computed from its head, and the entries with their balances after; ``mac``:
    ``(mac, key id)`` written too (none: the columns are not named). Returns its id."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT hash FROM accounts_ledgertransaction WHERE chain = %s ORDER BY id DESC LIMIT 1",
            [chain],
        )
        row = cursor.fetchone()
        head = row[0] if row else GENESIS
        ids = sorted(account for account, _ in legs)
        amounts = dict(legs)
        cursor.execute(
            "SELECT id, balance FROM accounts_ledgeraccount WHERE id = ANY(%s) ORDER BY id", [ids]
        )
        after = [balance + amounts[pk] for pk, balance in cursor.fetchall()]
        digest = ledger_tx_hash(
            prev=head, kind=kind, key=key, memo="", user=user, hand=None, table=None, entries=legs
        )
        columns, values, params = "", "", []
        if mac is not None:
            columns, values, params = ", mac, mac_key", ", %s, %s", list(mac)
        cursor.execute(
            f"""
            WITH tx AS (
                INSERT INTO accounts_ledgertransaction
                    (kind, idempotency_key, memo, user_id, prev_hash, hash, chain,
                     created_at{columns})
                VALUES (%s, %s, '', %s, %s, %s, %s, now(){values})
                RETURNING id, created_at
            )
            INSERT INTO accounts_ledgerentry
                (transaction_id, account_id, amount, balance_after, transaction_created_at)
            SELECT tx.id, leg.account_id, leg.amount, leg.balance_after, tx.created_at
            FROM tx, unnest(%s::bigint[], %s::bigint[], %s::bigint[])
                AS leg(account_id, amount, balance_after)
            ORDER BY leg.account_id
            RETURNING transaction_id
            """,  # noqa: S608 (column names of ours)
            [kind, key, user, head, digest, chain, *params, ids, [amounts[i] for i in ids], after],
        )
        return cursor.fetchone()[0]


def hand_event_forge(
    *,
    hand: Any,
    type: str,
    actor_seat: int | None,
    payload: dict[str, Any],
    effects: list[Any],
    system: bool = False,
    mac: tuple[str, str] | None = None,
) -> int:
    """Insert the hand's next event (its seq one past the log's) chained to the last one's hash,
    Returns its seq."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT seq, hash FROM games_handevent WHERE hand_id = %s ORDER BY seq DESC LIMIT 1",
            [hand.pk],
        )
        last, prev = cursor.fetchone()
        seq = last + 1
        digest = event_hash(
            hand=hand.pk,
            seq=seq,
            type=type,
            actor_seat=actor_seat,
            system=system,
            bot=False,
            payload=payload,
            effects=effects,
            prev=prev,
        )
        columns, values, params = "", "", []
        if mac is not None:
            columns, values, params = ", mac, mac_key", ", %s, %s", list(mac)
        cursor.execute(
            "INSERT INTO games_handevent (hand_id, seq, type, actor_seat, system, bot, payload,"
            f" effects, prev_hash, hash, hand_created_at, created_at{columns})"
            " VALUES (%s, %s, %s, %s, %s, false, %s::jsonb, %s::jsonb, %s, %s, %s, now()"
            f"{values})",
            [
                hand.pk,
                seq,
                type,
                actor_seat,
                system,
                json.dumps(payload),
                json.dumps(effects),
                prev,
                digest,
                hand.created_at,
                *params,
            ],
        )
        return seq
