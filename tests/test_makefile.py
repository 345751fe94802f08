"""The Makefile's targets do what the README says of them (``make -n``: what they would run)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def planned(target: str, tmp_path: Path) -> list[str]:
    """The commands ``make TARGET`` would run on a fresh clone (a virtualenv not made yet)."""
    done = subprocess.run(
        ["make", "-n", target, f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def test_make_run_installs_the_python_client_and_chan_bot_before_serving(tmp_path) -> None:
    # The README has chan-bot play against `make run`: the install it makes includes the client,
    lines = planned("run", tmp_path)
    (install,) = [n for n, line in enumerate(lines) if " install " in line and "-e ." in line]
    assert "-e clients/python" in lines[install]
    # in the same pip run as the server's (one resolver pass), before the server starts,
    (serve,) = [n for n, line in enumerate(lines) if "run_dev" in line]
    assert install < serve
    # and without the tools only `make test` needs.
    assert not [line for line in lines if "[dev]" in line]
