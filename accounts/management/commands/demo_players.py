"""Create the demo players demo1..demo4 (once, with their welcome grant) and print a fresh
token for each.

They share one password, so it is hashed (PBKDF2, a good fraction of a second) once, not four
times, and checked once against the hash they share, not once a player: ``make run`` runs this
at every start."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.ledger import welcome_grant_book
from accounts.models import User
from accounts.services import token_create, user_password_set, user_register
from core.errors import DomainError

DEMO_USERNAMES = ("demo1", "demo2", "demo3", "demo4")
DEFAULT_DEMO_PASSWORD = "chan-demo-pass"


class Command(BaseCommand):
    help = (
        "Create demo players demo1..demo4 (password from DEMO_PASSWORD, default "
        f"'{DEFAULT_DEMO_PASSWORD}') if missing, and print one fresh API token for each."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--force",
            action="store_true",
            help="Run even when DEBUG is off (demo accounts have a known password).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG and not options["force"]:
            raise CommandError("DEBUG is off: demo players have a known password; use --force.")
        password = os.environ.get("DEMO_PASSWORD") or DEFAULT_DEMO_PASSWORD
        self.password_hash = ""  # a hash known to match the password, once one is
        for number, username in enumerate(DEMO_USERNAMES, start=1):
            try:
                user = self._ensure(username, password, display_name=f"Demo {number}")
            except DomainError as exc:
                raise CommandError(f"{username}: {exc.detail()} {exc.errors or ''}") from exc
            _, raw = token_create(user=user, name="demo_players")
            self.stdout.write(f"{username}  {raw}")

    def _ensure(self, username: str, password: str, *, display_name: str) -> User:
        user = User.objects.filter(username=username).first()
        if user is None:
            user = user_register(
                username=username,
                password=password,
                display_name=display_name,
                password_hash=self.password_hash,
            )
        else:
            if user.password != self.password_hash and not user.check_password(password):
                user_password_set(user=user, password=password)
            welcome_grant_book(user=user)  # booked once ever: a no-op after the first time
        self.password_hash = user.password
        return user
