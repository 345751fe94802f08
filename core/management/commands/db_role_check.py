"""``manage.py db_role_check``: exit 1 if the application's connection could step around the
database's guards (a superuser, an owner of the tables, a role that may create temporary tables or
objects in the schema, UPDATE of a column only the owner's functions write, TRUNCATE on a log):
core/db_roles.py."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from core.db_roles import app_role_problems


class Command(BaseCommand):
    help = "Check that the application connects as a role that cannot step around the guards."

    def handle(self, *args: Any, **options: Any) -> None:
        with connection.cursor() as cursor:
            problems = app_role_problems(cursor=cursor, database=connection.settings_dict["NAME"])
            cursor.execute("SELECT current_user")
            (role,) = cursor.fetchone()
        for problem in problems:
            self.stderr.write(f"{problem.check}: {problem.detail}")
        if problems:
            raise CommandError(f"{len(problems)} problem(s) with the application's role {role}")
        self.stdout.write(f"ok: the application connects as {role}, which owns no table")
