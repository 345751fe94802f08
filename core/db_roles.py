"""The two database roles: the owner of the tables, which migrates, and the application's role.

The application (web, worker, beat, management commands) connects as a role that owns nothing:
it may read and write rows, and the triggers decide which writes pass, but it cannot
``ALTER TABLE … DISABLE TRIGGER``, drop a guard, ``TRUNCATE`` a log or set
``session_replication_role`` (superuser only), so no client of the database steps around the
append-only logs, the chains or the balance checks. Nor can it create anything: no table or
function in the schema, and no temporary table, function or trigger (``TEMPORARY`` is revoked
from it and from ``PUBLIC``, which PostgreSQL grants it by default), which could otherwise shadow a
table a guard reads or fire a trigger of its own. ``manage.py migrate`` connects as the owner
(``DATABASE_OWNER_URL``) and, after each run, grants the application's role what it needs
(:func:`app_role_grant`): ``TRUNCATE`` only in a test database (``test_…``), where Django
empties the tables after a transactional test. The columns only the owner's functions write
(:data:`GUARDED_COLUMNS`: balances and holds, moved by the ledger's ``SECURITY DEFINER`` triggers;
who sits where in a dealt hand, which nothing writes again) are left out of its ``UPDATE``
(column privileges), so no setting or trigger depth the session could arrange lets it write them.

``manage.py db_role_check`` (:func:`app_role_problems`) reports what the application's own
connection could do that it should not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import sql

# The logs a client must never empty or edit behind the triggers.
GUARDED_TABLES = (
    "games_handevent",
    "games_hand",
    "accounts_ledgertransaction",
    "accounts_ledgerentry",
    "accounts_ledgeraccount",
    "transparency_logleaf",
    "transparency_lognode",
    "transparency_treehead",
)


# The columns the application's role may not UPDATE: balances and holds move only through the
# ledger's SECURITY DEFINER triggers (accounts 0028), a hand's seats are written once, at the deal
# (games 0041). Its UPDATE covers the table's other columns (which FOR NO KEY UPDATE needs).
GUARDED_COLUMNS: dict[str, tuple[str, ...]] = {
    "accounts_ledgeraccount": ("balance", "held"),
    "games_handseat": ("hand_id", "user_id", "position", "table_seat"),
}


def is_test_database(name: str) -> bool:
    return name.startswith("test_")


def app_role_grant(*, cursor: Any, role: str, database: str, password: str = "") -> bool:
    """As the owner: create ``role`` if it is missing (LOGIN with ``password`` if given, nothing
    else; the owner needs CREATEROLE for that, else a DBA creates it), then grant it the rows of every table and
    sequence of the schema and nothing of their definitions. Returns whether the role was
    created. Run after every migration, so new tables are covered."""
    cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
    created = cursor.fetchone() is None
    ident = sql.Identifier(role)
    if created:  # another process migrating another database may create it meanwhile
        cursor.execute(
            sql.SQL(
                "DO $do$ BEGIN CREATE ROLE {} LOGIN{};"
                " EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $do$"
            ).format(
                ident,
                sql.SQL(" PASSWORD {}").format(sql.Literal(password)) if password else sql.SQL(""),
            )
        )
    statements = [
        "GRANT CONNECT ON DATABASE {db} TO {role}",
        "REVOKE TEMPORARY, CREATE ON DATABASE {db} FROM {role}",
        "REVOKE TEMPORARY, CREATE ON DATABASE {db} FROM PUBLIC",  # PUBLIC has TEMP by default
        "GRANT USAGE ON SCHEMA public TO {role}",
        "REVOKE CREATE ON SCHEMA public FROM {role}",
        "REVOKE CREATE ON SCHEMA public FROM PUBLIC",  # PostgreSQL before 15 granted it
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
        "REVOKE TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA public FROM {role}",
        "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role}",
    ]
    if is_test_database(database):
        statements.append("GRANT TRUNCATE ON ALL TABLES IN SCHEMA public TO {role}")
    for statement in statements:
        cursor.execute(sql.SQL(statement).format(db=sql.Identifier(database), role=ident))
    for table, guarded in GUARDED_COLUMNS.items():
        cursor.execute(
            "SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a"
            " WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped"
            " AND NOT a.attname = ANY(%s)",
            [f"public.{table}", list(guarded)],
        )
        others = cursor.fetchone()[0]
        if others is None:  # not migrated yet
            continue
        cursor.execute(sql.SQL("REVOKE UPDATE ON {} FROM {}").format(sql.Identifier(table), ident))
        cursor.execute(
            sql.SQL("GRANT UPDATE ({}) ON {} TO {}").format(
                sql.SQL(", ").join(map(sql.Identifier, others)), sql.Identifier(table), ident
            )
        )
    return created


@dataclass(frozen=True, slots=True)
class RoleProblem:
    check: str
    detail: str


def app_role_problems(*, cursor: Any, database: str) -> list[RoleProblem]:
    """What the current connection's role could do behind the guards: be a superuser (or
    replicate, which skips triggers), own a table, create temporary objects or objects in the
    schema, truncate a log outside a test database, or update a column only the owner's
    functions write (:data:`GUARDED_COLUMNS`)."""
    problems = []
    cursor.execute(
        "SELECT current_user, rolsuper, rolbypassrls, rolreplication"
        " FROM pg_roles WHERE rolname = current_user"
    )
    role, superuser, bypass_rls, replication = cursor.fetchone()
    if superuser:
        problems.append(RoleProblem("superuser", f"{role} is a superuser"))
    if replication or bypass_rls:
        problems.append(RoleProblem("replication", f"{role} may replicate or bypass row security"))
    cursor.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'S')"
        " AND pg_has_role(current_user, c.relowner, 'USAGE') ORDER BY c.relname"
    )
    owned = [name for (name,) in cursor.fetchall()]
    if owned:
        shown = ", ".join(owned[:5]) + (" …" if len(owned) > 5 else "")
        problems.append(RoleProblem("owner", f"{role} owns {len(owned)} relations ({shown})"))
    cursor.execute(
        "SELECT has_database_privilege(current_user, current_database(), 'TEMPORARY'),"
        " has_database_privilege(current_user, current_database(), 'CREATE'),"
        " has_schema_privilege(current_user, 'public', 'CREATE')"
    )
    temporary, create_schema, create_public = cursor.fetchone()
    if temporary:
        problems.append(RoleProblem("temporary", f"{role} may create temporary tables"))
    creates = [
        what
        for what, may in (("schemas", create_schema), ("objects in public", create_public))
        if may
    ]
    if creates:
        problems.append(RoleProblem("create", f"{role} may create {' and '.join(creates)}"))
    cursor.execute(
        "SELECT t || '.' || c FROM unnest(%s::text[], %s::text[]) AS g(t, c)"
        " WHERE has_column_privilege(current_user, to_regclass('public.' || quote_ident(t)), c,"
        " 'UPDATE') ORDER BY 1",
        [
            [t for t, columns in GUARDED_COLUMNS.items() for _ in columns],
            [c for columns in GUARDED_COLUMNS.values() for c in columns],
        ],
    )
    writable = [name for (name,) in cursor.fetchall()]
    if writable:
        problems.append(RoleProblem("column", f"{role} may UPDATE {', '.join(writable)}"))
    if not is_test_database(database):
        for table in GUARDED_TABLES:
            cursor.execute(
                "SELECT to_regclass(%s) IS NOT NULL"
                " AND has_table_privilege(current_user, %s, 'TRUNCATE')",
                [table, table],
            )
            if cursor.fetchone()[0]:
                problems.append(RoleProblem("truncate", f"{role} may TRUNCATE {table}"))
    return problems
