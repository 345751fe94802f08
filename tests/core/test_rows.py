"""core.rows: the fixed INSERT and UPDATE write what the ORM's create, bulk_create and
save(update_fields=…) write, value for value."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, transaction
from django.forms.models import model_to_dict

from core.rows import (
    row_update,
    rows_exist,
    rows_insert,
    rows_read,
    rows_read_related,
    values_read,
)
from games.models import FeedEntry

pytestmark = pytest.mark.django_db


def entry(user, seq: int, **more) -> FeedEntry:
    return FeedEntry(
        user=user,
        seq=seq,
        kind="hand_dealt",
        key=f"k{seq}",
        table_id=7,
        hand_id=None,
        data={"seat": 1, "nested": {"a": [1, 2]}, "text": "Chắn ù"},
        **more,
    )


def stored(pk: int) -> dict:
    row = FeedEntry.objects.get(pk=pk)
    return {**model_to_dict(row, exclude=["id"]), "created_at": row.created_at}


def test_rows_insert_writes_what_create_writes(make_user) -> None:
    user, _ = make_user()
    ours, theirs = entry(user, 1), entry(user, 2)
    rows_insert([ours], returning_pk=True)
    FeedEntry.objects.bulk_create([theirs])
    theirs = FeedEntry.objects.get(user=user, seq=2)
    assert ours.pk is not None and not ours._state.adding
    a, b = stored(ours.pk), stored(theirs.pk)
    assert a["created_at"] is not None and b["created_at"] is not None
    a.pop("created_at"), b.pop("created_at")
    assert {**a, "seq": 0, "key": ""} == {**b, "seq": 0, "key": ""}
    assert a["data"] == {"seat": 1, "nested": {"a": [1, 2]}, "text": "Chắn ù"}


def test_rows_insert_writes_many_rows_in_one_statement(
    make_user, django_assert_num_queries
) -> None:
    user, _ = make_user()
    with django_assert_num_queries(1):
        rows_insert([entry(user, i) for i in range(1, 6)])
    assert list(FeedEntry.objects.filter(user=user).values_list("seq", flat=True)) == [
        1,
        2,
        3,
        4,
        5,
    ]


def test_a_constraint_refuses_a_fixed_insert_as_it_refuses_the_orm(make_user) -> None:
    user, _ = make_user()
    rows_insert([entry(user, 1)])
    with pytest.raises(DatabaseError), transaction.atomic():
        rows_insert([entry(user, 1)])  # (user, seq) is unique


def test_a_guarded_insert_runs_its_guard_first_in_the_same_statement(
    make_user, django_assert_num_queries
) -> None:
    user, _ = make_user()
    ours = entry(user, 1)
    # a guard that passes (and takes a lock): one statement, the row as without it
    with transaction.atomic():
        with django_assert_num_queries(1):
            rows_insert(
                [ours], returning_pk=True, guard=("SELECT pg_advisory_xact_lock(%s, %s)", [7, 3])
            )
        held = values_read(
            FeedEntry,
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s"
            " AND objid = %s AND pid = pg_backend_pid()",
            [7, 3],
        )
    assert held == [(1,)]
    theirs = entry(user, 2)
    FeedEntry.objects.bulk_create([theirs])
    a, b = stored(ours.pk), stored(FeedEntry.objects.get(user=user, seq=2).pk)
    a.pop("created_at"), b.pop("created_at")
    assert {**a, "seq": 0, "key": ""} == {**b, "seq": 0, "key": ""} and a["seq"] == 1
    # a guard whose rows' making refuses: no row
    with pytest.raises(DatabaseError, match="division by zero"), transaction.atomic():
        rows_insert([entry(user, 3)], guard=("SELECT 1 FROM generate_series(1, 1 / %s)", [0]))
    assert not FeedEntry.objects.filter(user=user, seq=3).exists()
    with pytest.raises(ValueError, match="one row"):
        rows_insert([entry(user, 4), entry(user, 5)], guard=("SELECT 1", []))


def test_row_update_writes_only_the_named_columns(make_user) -> None:
    user, _ = make_user()
    type(user).objects.filter(pk=user.pk).update(last_name="behind its back")
    user.first_name = "written"
    user.email = "not-written@example.com"
    row_update(user, ("first_name",))
    after = type(user).objects.get(pk=user.pk)
    assert after.first_name == "written"
    assert after.last_name == "behind its back" and after.email != "not-written@example.com"


def test_row_update_of_a_row_that_is_gone_raises(make_user) -> None:
    user, _ = make_user()
    ghost = type(user)(pk=10**12, username="ghost")
    with pytest.raises(DatabaseError), transaction.atomic():
        row_update(ghost, ("first_name",))


# ------------------------------------------------------------------------------ reading rows


def test_rows_read_makes_what_the_orm_makes(make_user, django_assert_num_queries) -> None:
    from games.models import Table

    user, _ = make_user()
    table = Table.objects.create(name="t", owner=user, stake=10, ruleset={"preset": "x"})
    theirs = Table.objects.get(pk=table.pk)
    with django_assert_num_queries(1):
        (ours,) = rows_read(Table, "id = %s", [table.pk])
    assert type(ours) is Table and not ours._state.adding and ours._state.db == "default"
    # every field, the JSON ones decoded and the times aware, as the ORM gives them
    for field in Table._meta.concrete_fields:
        assert getattr(ours, field.attname) == getattr(theirs, field.attname), field.name
    assert ours.ruleset == {"preset": "x"}
    assert rows_read(Table, "id = %s", [table.pk + 1000]) == []


def test_rows_read_related_makes_what_select_related_makes(
    make_user, django_assert_num_queries
) -> None:
    from accounts.models import User
    from games.models import Seat, Table

    owner, _ = make_user()
    other, _ = make_user()
    table = Table.objects.create(name="t", owner=owner, stake=10, ruleset={"preset": "x"})
    Seat.objects.create(table=table, player=other, number=2, auto_u=False)
    Seat.objects.create(table=table, player=owner, number=0)
    theirs = list(Seat.objects.filter(table=table).select_related("player").order_by("number"))
    with django_assert_num_queries(1):
        ours = rows_read_related(Seat, "player", "m.table_id = %s ORDER BY m.number", [table.pk])
        # (the players come with their seats: reading them sends nothing)
        players = [s.player for s in ours]
    assert [s.number for s in ours] == [0, 2] and [p.pk for p in players] == [owner.pk, other.pk]
    for mine, orm in zip(ours, theirs, strict=True):
        assert type(mine) is Seat and not mine._state.adding and mine._state.db == "default"
        for field in Seat._meta.concrete_fields:
            assert getattr(mine, field.attname) == getattr(orm, field.attname), field.name
        assert type(mine.player) is User and not mine.player._state.adding
        for field in User._meta.concrete_fields:
            assert getattr(mine.player, field.attname) == getattr(orm.player, field.attname)
    assert rows_read_related(Seat, "player", "m.table_id = %s", [table.pk + 1000]) == []


def test_rows_read_for_update_locks_the_row(make_user) -> None:
    from django.db import connection

    from games.models import Table

    user, _ = make_user()
    table = Table.objects.create(name="t", owner=user, stake=10)

    def modes() -> set[str]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT mode FROM pg_locks WHERE pid = pg_backend_pid()"
                " AND relation = %s::regclass",
                [Table._meta.db_table],
            )
            return {mode for (mode,) in cursor.fetchall()}

    with transaction.atomic():
        rows_read(Table, "id = %s", [table.pk])
        assert "RowShareLock" not in modes()  # a plain read
    with transaction.atomic():
        (locked,) = rows_read(Table, "id = %s", [table.pk], for_update=True)
        assert locked.pk == table.pk
        assert "RowShareLock" in modes()  # SELECT … FOR NO KEY UPDATE's lock on the table


def test_values_read_and_rows_exist(make_user) -> None:
    user, _ = make_user()
    rows_insert([entry(user, 1)])
    sql = f"SELECT seq FROM {FeedEntry._meta.db_table} WHERE user_id = %s"
    assert values_read(FeedEntry, sql, [user.pk]) == [(1,)]
    assert rows_exist(FeedEntry, sql, [user.pk])
    assert not rows_exist(FeedEntry, sql, [user.pk + 1000])
