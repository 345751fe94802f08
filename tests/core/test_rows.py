"""core.rows: the fixed INSERT and UPDATE write what the ORM's create, bulk_create and
save(update_fields=…) write, value for value."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, transaction
from django.forms.models import model_to_dict

from core.rows import row_update, rows_insert
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
