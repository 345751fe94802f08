"""Check the limits players set for themselves: each limit is what its history makes it, each
change starts from the value in force and a loosening waits 24 hours, and no settled seat paid
more than its deal reserved of its loss limits. Exit 1 with a list on any mismatch."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from accounts.ledger_selectors import ledger_problems
from accounts.limit_checks import LIMIT_CHECKS


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args: Any, **options: Any) -> None:
        problems = ledger_problems(LIMIT_CHECKS)
        if not problems:
            self.stdout.write(f"limits ok ({len(LIMIT_CHECKS)} checks)")
            return
        for problem in problems:
            self.stdout.write(f"{problem.check}: {problem.detail}")
        raise CommandError(f"limits_check: {len(problems)} problem(s)", returncode=1)
