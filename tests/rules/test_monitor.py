"""The transparency log's monitor (``python -m games.rules.verify monitor``) against the real
server over HTTP: quiet while the log only grows, and, once the database's owner has rewritten
an old ledger transaction (its entries, the balances after it and the hash chain behind it, and
the log's leaves and tree to match), the first head signed after it is not consistent with the
head the monitor saved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import transaction

from accounts.ledger_hash import ledger_tx_hash
from accounts.models import LedgerEntry, LedgerTransaction
from games.rules.log_entries import ledger_leaf_hash
from games.rules.merkle import appended
from games.rules.verify import main as verify_main
from tests.db_owner import as_owner
from tests.ledger_run import ledger_check_run
from transparency.models import LogLeaf
from transparency.services import log_publish

MILLION = 1_000_000


def owner_rewrites(tx: LedgerTransaction, *, delta: int, log_too: bool) -> None:
    """As the tables' owner, triggers off: ``delta`` more Quan in ``tx`` (its credit up, its
    debit down), every later ``balance_after`` and balance of its accounts moved to match, the
    hash chain from it on recomputed; with ``log_too``, the log's leaves and tree rewritten to
    match the new hashes (what an owner would do to keep ``ledger_check`` quiet)."""
    with transaction.atomic():
        as_owner("SET LOCAL session_replication_role = replica")
        for entry in LedgerEntry.objects.filter(transaction=tx):
            moved = delta if entry.amount > 0 else -delta
            as_owner(
                "UPDATE accounts_ledgerentry SET amount = amount + %s WHERE id = %s",
                [moved, entry.pk],
            )
            as_owner(
                "UPDATE accounts_ledgerentry SET balance_after = balance_after + %s"
                " WHERE account_id = %s AND id >= %s",
                [moved, entry.account_id, entry.pk],
            )
            as_owner(
                "UPDATE accounts_ledgeraccount SET balance = balance + %s WHERE id = %s",
                [moved, entry.account_id],
            )
        later = LedgerTransaction.objects.filter(chain=tx.chain, pk__gte=tx.pk).order_by("pk")
        prev = tx.prev_hash
        rehashed = {}
        for each in later:
            digest = ledger_tx_hash(
                prev=prev,
                kind=each.kind,
                key=each.idempotency_key,
                memo=each.memo,
                user=each.user_id,
                hand=each.hand_id,
                table=each.table_id,
                entries=LedgerEntry.objects.filter(transaction=each).values_list(
                    "account_id", "amount"
                ),
            )
            as_owner(
                "UPDATE accounts_ledgertransaction SET prev_hash = %s, hash = %s WHERE id = %s",
                [prev, digest, each.pk],
            )
            rehashed[each.pk] = digest
            prev = digest
        if log_too:
            for tx_id, digest in rehashed.items():
                leaf = ledger_leaf_hash(tx_id=tx_id, tx_hash=digest).hex()
                as_owner(
                    "UPDATE transparency_logleaf SET hash = %s, leaf_hash = %s"
                    " WHERE kind = 'ledger' AND ref_id = %s",
                    [digest, leaf, tx_id],
                )
            leaves = [
                bytes.fromhex(h)
                for h in LogLeaf.objects.order_by("index").values_list("leaf_hash", flat=True)
            ]
            _, nodes = appended(0, [], leaves)
            as_owner("DELETE FROM transparency_lognode")
            values = ", ".join(f"({lv}, {i}, '{h.hex()}')" for lv, i, h in nodes)
            as_owner(f"INSERT INTO transparency_lognode (level, index, hash) VALUES {values}")
        as_owner("SET LOCAL session_replication_role = DEFAULT")


def run_monitor(url: str, state: Path, token: str, *exports: Path) -> tuple[int, str]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = verify_main(
            ["monitor", "--url", url, "--state", str(state), "--token", token]
            + [str(e) for e in exports]
        )
    return code, out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_monitor_finds_no_consistency_after_an_owner_rewrote_an_old_grant(
    live_server, make_user, tmp_path
) -> None:
    # Given a log of welcome grants under a signed head, which the monitor saved,
    victim, token = make_user()
    for _ in range(4):
        make_user()
    log_publish()
    state = tmp_path / "head.json"
    assert run_monitor(live_server.url, state, token) == (
        0,
        f"consistent: size 5 root {json.loads(state.read_text())['root']}\n",
    )
    saved = state.read_text()
    # and the log only grows: the monitor stays quiet and saves the new head,
    make_user()
    log_publish()
    code, out = run_monitor(live_server.url, state, token)
    assert code == 0 and "consistent: size 6" in out
    saved = state.read_text()
    # when the owner rewrites the victim's grant, and the chain and the log after it,
    grant = LedgerTransaction.objects.get(user=victim, kind="welcome_grant")
    old_leaf = ledger_leaf_hash(tx_id=grant.pk, tx_hash=grant.hash).hex()
    owner_rewrites(grant, delta=MILLION, log_too=True)
    # (every check of the books passes but the record key's: an owner without the key cannot
    # MAC the hashes it recomputed)
    code, out = ledger_check_run()
    assert code == 1 and {line.split(":")[0] for line in out.splitlines()} == {"mac"}
    assert f"mac: transaction {grant.pk} " in out
    # then the first head signed after it (the log grew) is not consistent with the saved one,
    make_user()
    log_publish()
    code, out = run_monitor(live_server.url, state, token)
    assert code == 1
    assert out.startswith("inconsistent: no consistency: the saved tree of 6 leaves"), out
    assert state.read_text() == saved  # the saved head is kept
    # and the hash an auditor noted for the grant is no longer in the log.
    code, out = run_monitor(live_server.url, tmp_path / "fresh.json", token)
    assert code == 0
    from django.test import Client

    r = Client().get(
        "/api/v1/log/proof/inclusion",
        {"leaf": old_leaf, "size": 7},
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert r.status_code == 404 and r.json()["code"] == "leaf_not_found"


@pytest.mark.django_db
def test_a_rewrite_of_the_ledger_alone_differs_from_the_log(make_user) -> None:
    victim, _ = make_user()
    make_user()
    log_publish()
    grant = LedgerTransaction.objects.get(user=victim, kind="welcome_grant")
    owner_rewrites(grant, delta=-1, log_too=False)
    code, out = ledger_check_run()
    assert code == 1
    assert f"transparency_log: transaction {grant.pk}: its hash is not the one the log" in out
