"""``migrate`` as the owner of the tables, then the application's role granted the rows.

With ``DATABASE_OWNER_URL`` set (``settings.CHAN_DATABASE_OWNER``), the default database's
connection is reopened with the owner's credentials for the whole command (the migrations, their
data steps and Django's post-migrate signals), then put back. Either way, when the application
connects as a role of its own (``settings.CHAN_DATABASE_APP_ROLE``), that role is granted what
it needs on every table afterwards (core/db_roles.py).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.commands import migrate
from django.db import DEFAULT_DB_ALIAS, connections

from core.db_roles import app_role_grant


class Command(migrate.Command):
    help = migrate.Command.help + " Runs as the tables' owner (DATABASE_OWNER_URL) when given."

    def execute(self, *args: Any, **options: Any) -> Any:
        """The owner's credentials for everything the command does, its system checks included
        (a model check may ask the server its version: on a new server only the owner exists)."""
        alias = options.get("database") or DEFAULT_DB_ALIAS
        owner = (
            getattr(settings, "CHAN_DATABASE_OWNER", None) if alias == DEFAULT_DB_ALIAS else None
        )
        connection = connections[alias]
        self._app_settings = connection.settings_dict
        if owner:
            connection.close()
            connection.settings_dict = {**self._app_settings, **owner}
        try:
            return super().execute(*args, **options)
        finally:
            if owner:
                connection.close()
                connection.settings_dict = self._app_settings

    def handle(self, *args: Any, **options: Any) -> None:
        alias = options["database"]
        owner = (
            getattr(settings, "CHAN_DATABASE_OWNER", None) if alias == DEFAULT_DB_ALIAS else None
        )
        role = (
            getattr(settings, "CHAN_DATABASE_APP_ROLE", None) if alias == DEFAULT_DB_ALIAS else None
        )
        connection = connections[alias]
        super().handle(*args, **options)
        if role:
            app = self._app_settings if owner else getattr(settings, "CHAN_DATABASE_APP", {})
            with connection.cursor() as cursor:
                created = app_role_grant(
                    cursor=cursor,
                    role=role,
                    database=connection.settings_dict["NAME"],
                    password=app.get("PASSWORD") or "",
                )
            if options["verbosity"] >= 1:
                made = "created and granted" if created else "granted"
                self.stdout.write(f"  The application's role {role}: {made} the rows.")
