"""Rows written by fixed statements on the hot paths: an INSERT of model instances and an UPDATE
of some of an instance's columns, each value prepared by its field exactly as the ORM prepares
it (``pre_save``, then ``get_db_prep_save``), the statement built once per model (and row count
or column set) instead of compiled by the ORM on every call.

A move wrote its event, its feed entries and the hand's row through ``Model.objects.create``,
``bulk_create`` and ``save(update_fields=…)``: compiling those three statements was a third of
a move's Python time beyond its round trips (docs/decisions/lean-move.md). What these do
not do, by design: send ``pre_save``/``post_save`` (the models written here have no receivers;
their history and guards are PostgreSQL triggers, which fire as before) or handle multi-table
inheritance. On another database than PostgreSQL they are the ORM's own calls.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django.db import DatabaseError, connection, connections, router
from django.db.models import Field, Model

from core.pipeline import after_answers


@lru_cache(maxsize=64)
def _insert_sql(model: type[Model], n: int, returning: bool) -> tuple[str, tuple[Field, ...]]:
    fields = tuple(f for f in model._meta.concrete_fields if not f.primary_key)
    quote = connection.ops.quote_name
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    sql = (
        f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)})"
        f" VALUES {', '.join([one] * n)}"
    )
    if returning:
        sql += f" RETURNING {quote(model._meta.pk.column)}"
    return sql, fields


@lru_cache(maxsize=16)
def _guarded_sql(sql: str, first: Field, guard: str) -> str:
    """``sql`` (an INSERT of ``_insert_sql``) whose first value is computed after ``guard``, a
    query that raises to refuse the row: the value is read from a scalar subquery over it."""
    values = sql.index(" VALUES (") + len(" VALUES (")
    if not sql.startswith("%s", values):  # (not stripped by python -O, unlike an assert)
        raise ValueError(f"not an INSERT of one row of placeholders: {sql[:80]}")
    cast = first.cast_db_type(connection)
    return f"{sql[:values]}(SELECT %s::{cast} FROM ({guard}) guard){sql[values + 2 :]}"


def rows_insert(
    objs: list[Model],
    *,
    returning_pk: bool = False,
    guard: tuple[str, list[Any]] | None = None,
) -> None:
    """Insert ``objs`` (instances of one model, not saved yet) in one statement; with
    ``returning_pk`` each gets its primary key and is marked as saved, as ``create`` does (in a
    pipeline, once its answers are in: ``core.pipeline``).

    ``guard``: a query and its parameters, run in the same statement before the row is made
    (its first value is read through the guard's rows), whose error refuses the statement: a
    check that would otherwise be a statement of its own before it (one client-side send,
    0.1-0.2 ms of a move, fewer). The check must be in what makes the guard's rows (a function
    in its ``FROM``, as the hand's lock is): PostgreSQL leaves out what only its select list
    computes, the insert not reading it. PostgreSQL only; one row."""
    if not objs:
        return
    model = type(objs[0])
    if connection.vendor != "postgresql":
        if guard is not None:
            raise ValueError("a guarded insert is PostgreSQL's")
        if returning_pk:
            for obj in objs:
                obj.save(force_insert=True)
        else:
            model.objects.bulk_create(objs)
        return
    sql, fields = _insert_sql(model, len(objs), returning_pk)
    params: list[Any] = []
    for obj in objs:
        params += [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields]
    if guard is not None:
        if len(objs) != 1:
            raise ValueError("a guarded insert is of one row")
        guard_sql, guard_params = guard
        sql = _guarded_sql(sql, fields[0], guard_sql)
        params = [params[0], *guard_params, *params[1:]]
    if not returning_pk:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
        return
    # Inside a pipeline (core.pipeline) the keys are read once the answers are in: the cursor
    # stays open until then (a closed cursor's rows cannot be read).
    cursor = connection.cursor()
    cursor.execute(sql, params)

    def keys_read() -> None:
        with cursor:
            for obj, (pk,) in zip(objs, cursor.fetchall(), strict=True):
                obj.pk = pk
                obj._state.adding = False
                obj._state.db = connection.alias

    after_answers(keys_read)


@lru_cache(maxsize=64)
def _update_sql(model: type[Model], names: tuple[str, ...]) -> tuple[str, tuple[Field, ...]]:
    meta = model._meta
    fields = tuple(meta.get_field(name) for name in names)
    quote = connection.ops.quote_name
    sets = ", ".join(f"{quote(f.column)} = %s" for f in fields)
    return f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {quote(meta.pk.column)} = %s", fields


def row_update(obj: Model, names: tuple[str, ...]) -> None:
    """``obj.save(update_fields=names)``: those columns (an ``auto_now`` one among them set to
    now) written in one fixed statement; a row that is gone raises as ``save`` does (in a
    pipeline, once its answers are in: ``core.pipeline``)."""
    if connection.vendor != "postgresql":
        obj.save(update_fields=names)
        return
    sql, fields = _update_sql(type(obj), names)
    params = [f.get_db_prep_save(f.pre_save(obj, False), connection) for f in fields]
    cursor = connection.cursor()  # open until its row count is read (core.pipeline)
    cursor.execute(sql, [*params, obj.pk])

    def count_check() -> None:
        with cursor:
            if cursor.rowcount != 1:
                raise DatabaseError("Save with update_fields did not affect any rows.")

    after_answers(count_check)


# --------------------------------------------------------------------------- reading rows


@lru_cache(maxsize=64)
def _field_converters(alias: str, fields: tuple[Field, ...]) -> tuple[tuple[int, tuple, Any], ...]:
    db = connections[alias]
    found = []
    for i, f in enumerate(fields):
        col = f.get_col(f.model._meta.db_table)
        convs = tuple(db.ops.get_db_converters(col) + col.get_db_converters(db))
        if convs:
            found.append((i, convs, col))
    return tuple(found)


def row_values(alias: str, fields: tuple[Field, ...], row: tuple[Any, ...]) -> list[Any]:
    """The columns of a fixed statement's ``row``, the first ``len(fields)`` of them read as the
    ORM reads ``fields`` (each through the backend's, then the field's converters: the JSON
    columns' decoding, for one); the rest as they came."""
    db = connections[alias]
    values = list(row)
    for i, convs, col in _field_converters(alias, fields):
        for convert in convs:
            values[i] = convert(values[i], col, db)
    return values


@lru_cache(maxsize=64)
def _select_sql(model: type[Model], where: str, for_update: bool) -> str:
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in model._meta.concrete_fields)
    sql = f"SELECT {columns} FROM {quote(model._meta.db_table)} WHERE {where}"
    return sql + " FOR NO KEY UPDATE" if for_update else sql


def rows_read(
    model: type[Model], where: str, params: list[Any], *, for_update: bool = False
) -> list[Any]:
    """The ``model`` rows ``where`` says (SQL over its columns, ``%s`` for ``params``), as the
    ORM makes them (``Model.from_db``, each column through its field's converters), locked with
    ``for_update``: ``model.objects[.select_for_update(no_key=True)].filter(…)`` without compiling the
    statement on every call. Read where the ORM would (the router's write database for a lock)."""
    alias = router.db_for_write(model) if for_update else router.db_for_read(model)
    fields = tuple(model._meta.concrete_fields)
    with connections[alias].cursor() as cursor:
        cursor.execute(_select_sql(model, where, for_update), params)
        rows = cursor.fetchall()
    return [model.from_db(alias, None, row_values(alias, fields, row)) for row in rows]


@lru_cache(maxsize=64)
def _joined_sql(model: type[Model], fk_name: str, where: str) -> str:
    quote = connection.ops.quote_name
    fk = model._meta.get_field(fk_name)
    related = fk.related_model
    columns = ", ".join(
        [f"m.{quote(f.column)}" for f in model._meta.concrete_fields]
        + [f"r.{quote(f.column)}" for f in related._meta.concrete_fields]
    )
    return (
        f"SELECT {columns} FROM {quote(model._meta.db_table)} m"
        f" JOIN {quote(related._meta.db_table)} r ON r.{quote(related._meta.pk.column)}"
        f" = m.{quote(fk.column)} WHERE {where}"
    )


def rows_read_related(model: type[Model], fk_name: str, where: str, params: list[Any]) -> list[Any]:
    """:func:`rows_read` with the row each one's foreign key ``fk_name`` (not null) points to,
    loaded as ``select_related(fk_name)`` loads it; ``where`` names ``model``'s columns ``m.…``
    and the related row's ``r.…`` (and may end with its ``ORDER BY``)."""
    alias = router.db_for_read(model)
    fk = model._meta.get_field(fk_name)
    related = fk.related_model
    fields = tuple(model._meta.concrete_fields)
    related_fields = tuple(related._meta.concrete_fields)
    with connections[alias].cursor() as cursor:
        cursor.execute(_joined_sql(model, fk_name, where), params)
        rows = cursor.fetchall()
    n = len(fields)
    found = []
    for row in rows:
        obj = model.from_db(alias, None, row_values(alias, fields, row[:n]))
        other = related.from_db(alias, None, row_values(alias, related_fields, row[n:]))
        fk.set_cached_value(obj, other)
        found.append(obj)
    return found


def values_read(model: type[Model], sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """The rows of the fixed statement ``sql`` (over ``model``'s table, with ``params``) as
    they come, read where the ORM would read ``model``: ``values_list`` without compiling."""
    with connections[router.db_for_read(model)].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def rows_exist(model: type[Model], sql: str, params: list[Any]) -> bool:
    """Whether the fixed statement ``sql`` finds a row: ``.exists()`` without compiling."""
    return bool(values_read(model, f"SELECT EXISTS ({sql})", params)[0][0])
