"""core.pipeline: statements sent in one flight, with the answers they wait for."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import DatabaseError, connection, connections, transaction

from accounts.models import User
from core.pipeline import after_answers, in_pipeline, statements_pipelined
from tests.db_trips import round_trips_counted

pytestmark = pytest.mark.django_db(transaction=True)


def test_statements_in_a_block_go_in_one_flight_and_the_orm_reads_its_counts(make_user) -> None:
    user, _ = make_user()
    with round_trips_counted() as trips, transaction.atomic():
        with statements_pipelined():
            assert in_pipeline()
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                cursor.execute("SELECT 2")
            # The ORM reads an UPDATE's count at once: it waits for the answers (one flight)
            changed = User.objects.filter(pk=user.pk).update(first_name="A")
            gone = User.objects.filter(pk=-1).update(first_name="B")
            with connection.cursor() as cursor:
                cursor.execute("UPDATE accounts_user SET last_name = 'D' WHERE id = %s", [user.pk])
        assert not in_pipeline()
    assert (changed, gone) == (1, 0)
    assert User.objects.get(pk=user.pk).last_name == "D"
    # BEGIN (psycopg waits for its answer); the two SELECTs and the first UPDATE; the second
    # UPDATE; the last one (the block's end waits for it); COMMIT
    assert len(trips) == 5, trips.flights


def test_a_check_run_after_the_answers_rolls_the_transaction_back(make_user) -> None:
    user, _ = make_user()
    seen: list[int] = []

    def check() -> None:
        seen.append(1)
        raise DatabaseError("refused")

    with (
        pytest.raises(DatabaseError, match="refused"),
        transaction.atomic(),
        statements_pipelined(),
    ):
        User.objects.filter(pk=user.pk).update(first_name="C")
        after_answers(check)
        assert seen == []  # not yet: at the block's end
    assert seen == [1]
    assert User.objects.get(pk=user.pk).first_name != "C"


def test_outside_a_block_a_check_runs_at_once() -> None:
    seen = []
    after_answers(lambda: seen.append(1))
    assert seen == [1]


def test_a_statement_sent_after_a_lock_in_the_same_flight_sees_what_the_holder_committed(
    make_user,
) -> None:
    # Given a row locked by another transaction that, before it commits, writes something else
    user, _ = make_user()
    locked = threading.Event()

    def holder() -> None:
        try:
            with transaction.atomic():
                User.objects.select_for_update().get(pk=user.pk)
                locked.set()
                time.sleep(0.5)
                User.objects.filter(pk=user.pk).update(last_name="written while locked")
        finally:
            connections.close_all()

    thread = threading.Thread(target=holder)
    thread.start()
    assert locked.wait(10)
    # when the lock and a read are sent in one flight
    with transaction.atomic(), statements_pipelined(), connection.cursor() as cursor:
        cursor.execute("SELECT id FROM accounts_user WHERE id = %s FOR UPDATE", [user.pk])
        read = connection.cursor()
        read.execute("SELECT last_name FROM accounts_user WHERE id = %s", [user.pk])
        cursor.fetchone()
        (last_name,) = read.fetchone()
    thread.join(10)
    # then the read ran once the lock was granted: it sees the holder's commit
    assert last_name == "written while locked"
