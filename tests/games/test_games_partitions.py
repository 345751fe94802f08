"""The hand log partitioned by month (migration games 0028, core/partitions.py, ``manage.py
partitions``, games/archive.py): guards on every partition, the key bound to the hand, months
created ahead idempotently, a month archived and still audited, and the migration itself over
existing events, back and forth."""

from __future__ import annotations

import datetime as dt
import json
from datetime import timedelta
from importlib import import_module
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import IntegrityError, ProgrammingError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from accounts.models import LedgerEntry, LedgerTransaction
from core.db_roles import app_role_grant
from core.partitions import month_start, partition_name, partitions_archive_before
from games.export import hand_export
from games.models import Hand, HandEvent
from games.tasks import partitions_create_due
from tests.db_owner import as_owner, connected_as_owner
from tests.games.decks import WIN_SEAT
from tests.games.test_games_commands import ended_and_booked

pytestmark = pytest.mark.django_db

# The log's guards, and the transparency log's queue of settled and voided hands' heads
# (transparency 0002): every partition has each of them, the months made later included.
GUARDS = {
    "games_handevent_append_only",
    "games_handevent_chain",
    "games_handevent_no_truncate",
    "transparency_queue",
}


def partitions() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = 'games_handevent'::regclass ORDER BY 1"
        )
        return [name for (name,) in cursor.fetchall()]


def hand_month(hand: Hand) -> dt.date:
    return month_start(hand.created_at.astimezone(dt.UTC).date())


def test_the_log_is_partitioned_by_month_with_every_guard_on_every_partition() -> None:
    today = dt.datetime.now(dt.UTC).date()
    names = partitions()
    assert partition_name("games_handevent", month_start(today)) in names
    assert partition_name("games_handevent", month_start(today, 3)) in names
    assert "games_handevent_default" in names
    with connection.cursor() as cursor:
        for name in names:
            cursor.execute(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal",
                [name],
            )
            assert {t for (t,) in cursor.fetchall()} == GUARDS, name


def test_creating_partitions_ahead_is_idempotent() -> None:
    out = StringIO()
    call_command("partitions", "--ahead", "5", stdout=out)
    today = dt.datetime.now(dt.UTC).date()
    assert out.getvalue().splitlines()[:2] == [
        f"created {partition_name('games_handevent', month_start(today, 4))}",
        f"created {partition_name('games_handevent', month_start(today, 5))}",
    ]
    out = StringIO()
    call_command("partitions", "--ahead", "5", stdout=out)
    assert out.getvalue() == "0 partition(s) created, 0 archived.\n"
    assert len([n for n in partitions() if n != "games_handevent_default"]) == 6


def test_the_beat_task_creates_the_months_ahead_once() -> None:
    assert "partitions-create" in settings.CELERY_BEAT_SCHEDULE
    today = dt.datetime.now(dt.UTC).date()
    as_owner(f"DROP TABLE {partition_name('games_handevent', month_start(today, 3))}")
    assert partitions_create_due() == [partition_name("games_handevent", month_start(today, 3))]
    assert partitions_create_due() == []


def test_an_event_whose_key_is_not_its_hands_is_refused(win_hand) -> None:
    hand = Hand.objects.get(pk=win_hand["hand"])
    deal = HandEvent.objects.of_hand(hand).get(seq=0)
    # a later event in another month's partition finds no predecessor there
    with pytest.raises(IntegrityError, match="prev_hash"), transaction.atomic():
        HandEvent.objects.create(
            hand=hand,
            hand_created_at=hand.created_at + timedelta(days=40),
            seq=1,
            type="set_prefs",
            actor_seat=0,
            payload={"type": "set_prefs", "seat": 0},
            prev_hash=deal.hash,
            hash="0" * 64,
        )
    # and the hand's created_at, its log's key, never changes
    with pytest.raises(IntegrityError, match="created_at never changes"), transaction.atomic():
        Hand.objects.filter(pk=hand.pk).update(created_at=hand.created_at - timedelta(days=40))


def test_an_archived_hand_still_verifies_and_a_tampered_archived_event_is_found(
    players, win_hand, corrupts_cache
) -> None:
    # Given a booked hand whose month is archived,
    hand = ended_and_booked(players, win_hand)
    month = hand_month(hand)
    table = f"chan_archive.{partition_name('games_handevent', month)}"
    as_owner("SELECT chan_month_partition_archive('games_handevent', %s)", [month])
    assert not HandEvent.objects.of_hand(hand).exists()
    assert partition_name("games_handevent", month) not in partitions()
    # the audit reads its log from the archive and verifies it,
    out = StringIO()
    call_command("audit_hands", hand=[hand.pk], stdout=out)
    assert out.getvalue().startswith("1 hand(s) verified")
    # as does check_hands (the store against its log's replay and chain),
    out = StringIO()
    call_command("check_hands", hand=[hand.pk], stdout=out)
    # which the application may read, not write,
    with (
        pytest.raises(ProgrammingError, match="permission denied"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"UPDATE {table} SET type = type")  # noqa: S608
    # and when the owner rewrites an archived move behind its trigger, the audit finds it.
    declare = hand.seq - 1
    as_owner("SET LOCAL session_replication_role = replica")  # no trigger fires
    as_owner(
        f"UPDATE {table} SET payload = %s::jsonb WHERE hand_id = %s AND seq = %s",  # noqa: S608
        [json.dumps({"type": "declare", "seat": WIN_SEAT, "cuoc": {"tom": 1}}), hand.pk, declare],
    )
    as_owner("SET LOCAL session_replication_role = DEFAULT")
    err = StringIO()
    with pytest.raises(CommandError, match="mismatch"):
        call_command("audit_hands", hand=[hand.pk], stderr=err)
    assert f"discrepancy at seq {declare}: its hash is not the SHA-256" in err.getvalue()


def test_a_month_with_a_hand_still_playing_is_not_archived(win_hand) -> None:
    hand = Hand.objects.get(pk=win_hand["hand"])
    with connection.cursor() as cursor, pytest.raises(ValueError, match="still open"):
        partitions_archive_before(cursor=cursor, before=month_start(hand_month(hand), 1))


@pytest.mark.slow(seconds=60)
@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_existing_events_back_and_forth(players, win_hand) -> None:
    # Given a booked hand in the partitioned log,
    hand = ended_and_booked(players, win_hand)
    fields = ("id", "seq", "type", "payload", "effects", "prev_hash", "hash", "created_at")
    before = list(HandEvent.objects.of_hand(hand).order_by("seq").values_list(*fields))
    migration = import_module("games.migrations.0028_handevent_partitioned").Migration
    with connected_as_owner():
        executor = MigrationExecutor(connection)
        # when the migration is unapplied (its rows back in one plain table)
        executor.migrate(migration.dependencies)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT relkind, (SELECT count(*) FROM games_handevent WHERE hand_id = %s)"
                " FROM pg_class WHERE oid = 'games_handevent'::regclass",
                [hand.pk],
            )
            assert cursor.fetchone() == ("r", len(before))
        # and applied again over them,
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        app = getattr(settings, "CHAN_DATABASE_APP", None)
        if app:  # as `manage.py migrate` does after its run (core/db_roles.py)
            with connection.cursor() as cursor:
                app_role_grant(
                    cursor=cursor, role=app["USER"], database=connection.settings_dict["NAME"]
                )
    # then every event is where it was, ids and hashes unchanged, and the hand still audits.
    after = list(HandEvent.objects.of_hand(hand).order_by("seq").values_list(*fields))
    assert after == before
    out = StringIO()
    call_command("audit_hands", hand=[hand.pk], stdout=out)
    assert out.getvalue().startswith("1 hand(s) verified")


def test_a_hand_whose_ledger_month_is_archived_still_exports_its_settlement(
    players, win_hand
) -> None:
    # Given a booked hand whose settlement's ledger month is archived (accounts 0022),
    hand = ended_and_booked(players, win_hand)
    before = hand_export(hand)["ledger"]
    assert before is not None
    tx = LedgerTransaction.objects.get(pk=before["id"])
    month = month_start(tx.created_at.astimezone(dt.UTC).date())
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # booked long ago: its checks ran
    as_owner("SELECT chan_month_partition_archive('accounts_ledgerentry', %s)", [month])
    assert not LedgerEntry.objects.filter(transaction=tx).exists()
    # its export still shows the settlement, read from the archive, and the audit verifies it.
    assert hand_export(hand)["ledger"] == before
    out = StringIO()
    call_command("audit_hands", hand=[hand.pk], stdout=out)
    assert out.getvalue().startswith("1 hand(s) verified")
    # and ledger_check (the games' checks with the ledger's) still passes over the archive.
    out = StringIO()
    call_command("ledger_check", stdout=out)
    assert out.getvalue().startswith("ledger ok")
