"""core.pipeline: statements sent in one flight, with the answers they wait for."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import DatabaseError, connection, connections, transaction

from accounts.models import User
from core.pipeline import (
    StatementAfterCommit,
    after_answers,
    commit_now,
    in_pipeline,
    statements_pipelined,
)
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
    # BEGIN, the two SELECTs and the first UPDATE (BEGIN's answer is not waited for); the
    # second UPDATE; the last one (the block's end waits for it); COMMIT
    assert len(trips) == 4, trips.flights
    assert "BEGIN" in trips.flights[0][0] and "SELECT 1" in " ".join(trips.flights[0])


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


def test_an_error_in_the_first_flight_after_begin_rolls_the_whole_transaction_back(
    make_user,
) -> None:
    user, _ = make_user()
    with (  # noqa: PT012
        pytest.raises(DatabaseError),
        transaction.atomic(),
        statements_pipelined(),
        connection.cursor() as cursor,
    ):
        User.objects.filter(pk=user.pk).update(first_name="never")
        cursor.execute("SELECT 1 / 0")
    # the connection is whole again: the next transaction runs, and the first left nothing
    with transaction.atomic(), statements_pipelined():
        User.objects.filter(pk=user.pk).update(last_name="after")
    user.refresh_from_db()
    assert (user.first_name != "never", user.last_name) == (True, "after")


def test_a_savepoint_inside_a_block_rolls_back_alone_and_psycopg_is_told_the_truth_after(
    make_user,
) -> None:
    user, _ = make_user()
    with transaction.atomic():
        with statements_pipelined():
            User.objects.filter(pk=user.pk).update(first_name="kept")
            try:
                with transaction.atomic():
                    User.objects.filter(pk=user.pk).update(last_name="undone")
                    raise RuntimeError
            except RuntimeError:
                pass
        # after the block psycopg's own view is back: a transaction, not autocommit
        assert connection.connection.autocommit is False
        assert connection.connection.info.transaction_status.name == "INTRANS"
    first_name, last_name = User.objects.values_list("first_name", "last_name").get(pk=user.pk)
    assert (first_name, last_name) == ("kept", user.last_name)


def test_a_block_that_ends_its_transaction_commits_in_its_last_flight(make_user) -> None:
    user, _ = make_user()
    hooks: list[str] = []
    with round_trips_counted() as trips, transaction.atomic(), statements_pipelined(commit=True):
        transaction.on_commit(lambda: hooks.append("ran"))
        User.objects.filter(pk=user.pk).update(first_name="committed")
    # BEGIN and the UPDATE (the ORM reads its count: one flight); COMMIT in the block's last
    assert len(trips) == 2, trips.flights
    assert "COMMIT" in " ".join(trips.flights[1])
    assert hooks == ["ran"]
    assert connection.connection.info.transaction_status.name == "IDLE"
    assert User.objects.get(pk=user.pk).first_name == "committed"


def _last_name_elsewhere(user_id: int) -> str:
    """The user's last name as another connection sees it (what is committed)."""
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT last_name FROM accounts_user WHERE id = %s", [user_id])
            return cursor.fetchone()[0]
    finally:
        other.close()


@pytest.mark.parametrize("early", [False, True], ids=["at the end", "queued early"])
def test_a_statement_refused_at_the_server_skips_the_commit_sent_after_it(
    make_user, early: bool
) -> None:
    user, _ = make_user()
    hooks: list[str] = []
    with (  # noqa: PT012
        pytest.raises(DatabaseError),
        transaction.atomic(),
        statements_pipelined(commit=True),
        connection.cursor() as cursor,
    ):
        transaction.on_commit(lambda: hooks.append("ran"))
        cursor.execute("UPDATE accounts_user SET last_name = 'never' WHERE id = %s", [user.pk])
        cursor.execute("SELECT 1 / 0")
        if early:  # (commit_now: queued after the refusal, which the server skips)
            assert commit_now()
    assert hooks == []
    assert _last_name_elsewhere(user.pk) != "never"


def test_inside_a_savepoint_the_block_leaves_the_commit_to_the_outer_transaction(
    make_user,
) -> None:
    user, _ = make_user()
    with pytest.raises(RuntimeError), transaction.atomic():  # noqa: PT012
        with transaction.atomic(), statements_pipelined(commit=True):
            User.objects.filter(pk=user.pk).update(last_name="inner")
        raise RuntimeError  # the outer transaction rolls back: the inner block committed nothing
    assert User.objects.get(pk=user.pk).last_name != "inner"


def test_a_check_that_refuses_after_the_commit_is_logged_as_an_error(
    make_user, caplog: pytest.LogCaptureFixture
) -> None:
    user, _ = make_user()

    def check() -> None:
        raise DatabaseError("too late")

    with pytest.raises(DatabaseError), transaction.atomic(), statements_pipelined(commit=True):  # noqa: PT012
        User.objects.filter(pk=user.pk).update(last_name="kept")
        after_answers(check)
    assert "a check refused after its transaction committed" in caplog.text
    assert User.objects.get(pk=user.pk).last_name == "kept"


def test_a_block_may_queue_its_commit_before_it_ends_and_sends_no_statement_after(
    make_user,
) -> None:
    user, _ = make_user()
    hooks: list[str] = []
    refused: list[str] = []
    with transaction.atomic(), statements_pipelined(commit=True):
        transaction.on_commit(lambda: hooks.append("ran"))
        with connection.cursor() as cursor:
            cursor.execute("UPDATE accounts_user SET last_name = 'early' WHERE id = %s", [user.pk])
        assert commit_now()
        assert not commit_now()  # (once)
        # the COMMIT is sent, not only queued: the server commits before the block ends
        deadline = time.monotonic() + 5
        while _last_name_elsewhere(user.pk) != "early" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _last_name_elsewhere(user.pk) == "early"
        # what comes after the COMMIT would run outside the transaction: refused
        with pytest.raises(StatementAfterCommit):
            User.objects.filter(pk=user.pk).update(first_name="outside")
        refused.append("update")
        assert hooks == []  # not before Django's commit
    assert hooks == ["ran"] and refused == ["update"]
    assert connection.connection.info.transaction_status.name == "IDLE"
    assert _last_name_elsewhere(user.pk) == "early"
    assert User.objects.get(pk=user.pk).first_name != "outside"
    # and the connection sends statements again after the block
    assert User.objects.filter(pk=user.pk).update(first_name="after") == 1


def test_an_early_commit_is_queued_only_where_the_block_may_commit(make_user) -> None:
    user, _ = make_user()
    assert not commit_now()  # no block
    with transaction.atomic(), statements_pipelined():  # a block that does not commit
        User.objects.filter(pk=user.pk).update(last_name="a")
        assert not commit_now()
    with pytest.raises(RuntimeError), transaction.atomic():  # noqa: PT012
        with transaction.atomic(), statements_pipelined(commit=True):  # a savepoint
            User.objects.filter(pk=user.pk).update(last_name="inner")
            assert not commit_now()
        raise RuntimeError
    assert User.objects.get(pk=user.pk).last_name == "a"


def test_a_block_that_raises_after_its_early_commit_is_committed_and_logged(
    make_user, caplog: pytest.LogCaptureFixture
) -> None:
    user, _ = make_user()
    with pytest.raises(ValueError), transaction.atomic(), statements_pipelined(commit=True):  # noqa: PT012
        User.objects.filter(pk=user.pk).update(last_name="committed anyway")
        assert commit_now()
        raise ValueError("a bug after the commit")
    assert "a block raised after its COMMIT was queued" in caplog.text
    assert _last_name_elsewhere(user.pk) == "committed anyway"
