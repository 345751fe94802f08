"""``manage.py ledger_check`` (and ``limits_check``) run in process, for the tests that read
its verdict."""

from __future__ import annotations

from io import StringIO

from django.core.management import CommandError, call_command


def ledger_check_run(command: str = "ledger_check") -> tuple[int, str]:
    """(exit code, output) of ``manage.py ledger_check`` (or another checker, ``command``): 0
    when the books are clean."""
    out = StringIO()
    try:
        call_command(command, stdout=out)
    except CommandError as exc:
        return exc.returncode, out.getvalue()
    return 0, out.getvalue()


def limits_check_run() -> tuple[int, str]:
    """(exit code, output) of ``manage.py limits_check``: 0 when every limit follows its
    history and every settled seat its reservation."""
    return ledger_check_run("limits_check")
