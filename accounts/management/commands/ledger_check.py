"""Check the Quan ledger: every account sums to zero overall, every balance column equals its
entries, every transaction balances, every running balance is right. Exit 1 with a list on any
mismatch."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from accounts.ledger_selectors import LEDGER_CHECKS, ledger_problems


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args: Any, **options: Any) -> None:
        problems = ledger_problems(LEDGER_CHECKS)
        if not problems:
            self.stdout.write(f"ledger ok ({len(LEDGER_CHECKS)} checks)")
            return
        for problem in problems:
            self.stdout.write(f"{problem.check}: {problem.detail}")
        raise CommandError(f"ledger_check: {len(problems)} problem(s)", returncode=1)
