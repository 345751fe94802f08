"""Reads that may lag go to a fresh replica, everything else to the primary (core/db_router.py).

The story runs against a real streaming replica: a private primary (initdb) and its replica
(``pg_basebackup -R``), both started here. The application's processes (``manage.py``) connect
with ``DATABASE_URL`` on the primary and ``DATABASE_REPLICA_URL`` on the replica; the probe
(tests/core/replica_probe.py) says which database served each read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction

from core import db_router
from tests.core.pg_cluster import (
    Server,
    pg_bin_or_skip,
    primary_start,
    replica_catch_up,
    replica_start,
)
from tests.faults.harness import manage, stack_env

MAX_LAG = 1.0


def probe(env: dict[str, str]) -> dict[str, Any]:
    out = manage(
        env,
        "shell",
        "-c",
        "from tests.core.replica_probe import main; main()",
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


LAGGING = ("profile", "history", "leaderboard", "export")


def test_without_a_replica_every_read_goes_to_the_primary() -> None:
    assert "replica" not in settings.DATABASES
    assert db_router.read_alias() == "default"
    with db_router.lagging_reads():
        assert db_router.read_alias() == "default"


def test_the_router_writes_and_migrates_on_the_primary_only() -> None:
    router = db_router.LaggingReadsRouter()
    assert router.db_for_write(object) == "default"
    assert router.allow_migrate("default", "games") is True
    assert router.allow_migrate("replica", "games") is False


def test_the_reads_that_may_lag_are_marked_and_no_service_marks_one() -> None:
    """The marked reads are these four; a service module never marks or opens one."""
    from games.export import hand_export_for_user
    from games.selectors.history import hand_history
    from games.selectors.leaderboards import leaderboard
    from games.selectors.players import player_profile

    for read in (hand_export_for_user, hand_history, leaderboard, player_profile):
        assert getattr(read, "may_lag", False), read
    root = Path(__file__).resolve().parents[2]
    for services in [*(root / "games" / "services").glob("*.py"), *root.glob("accounts/*.py")]:
        if "selectors" in services.name:
            continue
        text = services.read_text()
        assert "may_lag" not in text and "lagging_reads" not in text, services


@pytest.mark.django_db
def test_a_marked_read_inside_a_transaction_reads_the_primary(monkeypatch) -> None:
    # Given a replica that would be fresh,
    monkeypatch.setitem(settings.DATABASES, "replica", settings.DATABASES["default"])
    monkeypatch.setattr(db_router, "replica_fresh", lambda: True)
    with db_router.lagging_reads():
        # a read inside a transaction (pytest-django's test transaction: as in a service) is the
        # primary's,
        assert transaction.get_connection().in_atomic_block
        assert db_router.read_alias() == "default"
        # and so is one in primary_reads.
        with db_router.primary_reads():
            assert db_router.read_alias() == "default"


@pytest.mark.django_db(transaction=True)
def test_snapshot_reads_are_one_repeatable_read_read_only_transaction_on_the_primary(
    monkeypatch,
) -> None:
    # Given a replica that would be fresh, inside lagging reads,
    monkeypatch.setitem(settings.DATABASES, "replica", settings.DATABASES["default"])
    monkeypatch.setattr(db_router, "replica_fresh", lambda: True)
    connection = transaction.get_connection()
    with db_router.lagging_reads(), db_router.snapshot_reads():
        # the reads in a snapshot are the primary's, in one REPEATABLE READ, READ ONLY
        # transaction,
        assert db_router.read_alias() == "default"
        with connection.cursor() as cursor:
            cursor.execute("SHOW transaction_isolation")
            assert cursor.fetchone() == ("repeatable read",)
            cursor.execute("SHOW transaction_read_only")
            assert cursor.fetchone() == ("on",)
    # which ends with it.
    assert not connection.in_atomic_block
    with connection.cursor() as cursor:
        cursor.execute("SHOW transaction_isolation")
        assert cursor.fetchone() == ("read committed",)


@pytest.fixture
def streaming_pair(private_dir: Path) -> Any:
    bindir = pg_bin_or_skip()
    primary = primary_start(bindir, private_dir)
    replica: Server | None = None
    try:
        replica = replica_start(primary, private_dir)
        yield primary, replica
    finally:
        if replica is not None:
            replica.stop("immediate")
        primary.stop("immediate")


@pytest.mark.slow(seconds=90)
def test_lagging_reads_go_to_a_fresh_replica_and_fall_back_to_the_primary(
    private_dir: Path, streaming_pair: tuple[Server, Server]
) -> None:
    primary, replica = streaming_pair
    primary.sql("CREATE DATABASE chan")
    env = stack_env(
        private_dir,
        DATABASE_URL=primary.url("chan_app", "chan"),
        DATABASE_OWNER_URL=primary.url("postgres", "chan"),
        CHAN_CLOCK="0",
    )
    migrated = manage(env, "migrate", "--noinput", "-v0")
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    del env["DATABASE_OWNER_URL"]
    played = manage(env, "play_bots", "--hands", "2", "--seed", "1")
    assert played.returncode == 0, played.stdout[-2000:] + played.stderr[-2000:]
    env.update(
        DATABASE_REPLICA_URL=replica.url("chan_app", "chan"),
        CHAN_REPLICA_MAX_LAG_SECONDS=str(MAX_LAG),
        CHAN_REPLICA_CHECK_SECONDS="0",
    )

    # Given a replica that has replayed the hands the bots played,
    replica_catch_up(primary, replica)
    caught_up = probe(env)
    for _ in range(2):
        # A write the primary makes on its own (a hint bit's page image, autovacuum) that the
        # replica has received but not yet replayed makes it count as lagging by the age of its
        # last replayed transaction (core.db_router.LAG_SQL) for that instant: the export then
        # rightly reads the primary. Seen once in several CI runs; probe again after catching up.
        if "replica" in caught_up["export"]:
            break
        replica_catch_up(primary, replica)
        caught_up = probe(env)
    # the reads that may lag are served by the replica, with what the primary holds,
    assert caught_up["lag"] == 0.0
    for read in ("profile", "history", "leaderboard"):
        assert caught_up[read] == ["replica"], (read, caught_up)
    # (the export's hand seats come from the hand store's own statement, on the primary)
    assert "replica" in caught_up["export"], caught_up
    assert caught_up["hands_played"] >= 1
    assert caught_up["export_events"] == caught_up["export_seq"] + 1  # the whole log, seq 0…N
    # and what decides a move or money is the primary's, as is a marked read in a transaction.
    for read in ("move_reads", "money_reads", "in_transaction"):
        assert caught_up[read] == ["primary"], (read, caught_up)

    # When the replica stops replaying and the primary moves on past the lag bound,
    replica.sql("SELECT pg_wal_replay_pause()")
    primary.sql(
        "UPDATE accounts_user SET display_name = 'renamed' "
        f"WHERE username = '{caught_up['username']}'",
        "chan",
    )
    lagging = probe({**env, "CHAN_REPLICA_MAX_LAG_SECONDS": "0.5"})
    # then every read goes to the primary, which has the new name.
    assert lagging["lag"] > 0.5, lagging
    for read in (*LAGGING, "move_reads", "money_reads", "in_transaction"):
        assert lagging[read] == ["primary"], (read, lagging)
    assert lagging["display_name"] == "renamed"

    # When it replays again, the replica serves them, renamed too;
    replica.sql("SELECT pg_wal_replay_resume()")
    replica_catch_up(primary, replica)
    resumed = probe(env)
    assert resumed["profile"] == ["replica"] and resumed["display_name"] == "renamed", resumed

    # and when it is down, the primary serves them, without an error.
    replica.stop("immediate")
    down = probe(env)
    assert down["lag"] is None
    for read in LAGGING:
        assert down[read] == ["primary"], (read, down)
