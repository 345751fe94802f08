"""Runs the Procfile's processes in the foreground and starts again one that dies: ``make serve``
(``python -m chan_api.supervisor Procfile``).

honcho, which ran them before, stops every process as soon as one exits, so a worker killed by
the kernel took the web server and the beat down with it (docs/decisions/stack-survives-a-death.md). Here each line of the Procfile runs as ``sh -c LINE`` in a process
group of its own, its output prefixed with its name as honcho prints it. When one exits, what is
left of its group is killed (a prefork worker's children, a web master's workers, which would
hold its port) and it is started again: after a second, then after twice as long each time it
dies again within ``STABLE_SECONDS`` of its start; after ``GIVE_UP_AFTER`` such quick deaths in
a row (a configuration error, say) everything stops with its exit status. SIGTERM or SIGINT
(Ctrl-C) stops every process — SIGTERM to each group, SIGKILL ``STOP_SECONDS`` later — and
exits 0. No Django: the supervisor only reads the Procfile and the environment.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

STABLE_SECONDS = 10.0  # a process that ran this long had started well: its next restart is quick
GIVE_UP_AFTER = 5  # quick deaths in a row before the whole stack stops
FIRST_DELAY = 1.0
MAX_DELAY = 30.0
STOP_SECONDS = 10.0  # from SIGTERM to SIGKILL when the stack stops
SYSTEM = "system"


def procfile_read(path: Path) -> dict[str, str]:
    """``name: command`` lines in order (comments and blank lines skipped)."""
    entries: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, command = line.partition(":")
        if not sep or not name.strip() or not command.strip():
            raise ValueError(f"{path}: not a 'name: command' line: {line}")
        entries[name.strip()] = command.strip()
    return entries


@dataclass
class Supervised:
    """One line of the Procfile and its current process."""

    name: str
    command: str
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    quick_deaths: int = 0
    restart_at: float | None = None


class Supervisor:
    def __init__(self, entries: dict[str, str], *, out: IO[str] | None = None) -> None:
        self.processes = [Supervised(f"{name}.1", command) for name, command in entries.items()]
        self.out = out or sys.stdout
        self.width = max([len(SYSTEM), *(len(p.name) for p in self.processes)])
        self.lock = threading.Lock()
        self.stop_signal: str | None = None

    def say(self, name: str, text: str) -> None:
        stamp = datetime.datetime.now().strftime("%H:%M:%S")
        with self.lock:
            self.out.write(f"{stamp} {name.ljust(self.width)} | {text}\n")
            self.out.flush()

    def start(self, process: Supervised) -> None:
        process.proc = subprocess.Popen(
            ["/bin/sh", "-c", process.command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a group of its own: signalled whole, killed whole
        )
        process.started_at = time.monotonic()
        process.restart_at = None
        self.say(SYSTEM, f"{process.name} started (pid={process.proc.pid})")
        threading.Thread(target=self.relay, args=(process.name, process.proc), daemon=True).start()

    def relay(self, name: str, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.say(name, line.decode("utf-8", "replace").rstrip("\n"))

    def died(self, process: Supervised, returncode: int) -> int | None:
        """Note a death; the exit status to stop the stack with once it keeps dying, else None."""
        assert process.proc is not None
        self.say(SYSTEM, f"{process.name} stopped (rc={returncode})")
        group_kill(process.proc.pid, signal.SIGKILL)  # what it left behind
        process.proc = None
        if time.monotonic() - process.started_at < STABLE_SECONDS:
            process.quick_deaths += 1
        else:
            process.quick_deaths = 0
        if process.quick_deaths >= GIVE_UP_AFTER:
            self.say(
                SYSTEM, f"{process.name} died {process.quick_deaths} times at start: giving up"
            )
            return returncode if returncode > 0 else 128 - returncode if returncode < 0 else 1
        delay = min(MAX_DELAY, FIRST_DELAY * 2 ** max(0, process.quick_deaths - 1))
        process.restart_at = time.monotonic() + delay
        self.say(SYSTEM, f"{process.name} restarting in {delay:g} s")
        return None

    def run(self) -> int:
        def on_signal(signum: int, frame: object) -> None:
            self.stop_signal = signal.Signals(signum).name

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        for process in self.processes:
            self.start(process)
        status = 0
        while self.stop_signal is None:
            for process in self.processes:
                if process.proc is not None and (returncode := process.proc.poll()) is not None:
                    gave_up = self.died(process, returncode)
                    if gave_up is not None:
                        status = gave_up
                        break
                if process.restart_at is not None and time.monotonic() >= process.restart_at:
                    self.start(process)
            else:
                time.sleep(0.1)
                continue
            break
        if self.stop_signal is not None:
            self.say(SYSTEM, f"{self.stop_signal} received")
        self.stop_all()
        return status

    def stop_all(self) -> None:
        running = [p for p in self.processes if p.proc is not None]
        for process in running:
            assert process.proc is not None
            self.say(SYSTEM, f"sending SIGTERM to {process.name} (pid {process.proc.pid})")
            group_kill(process.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for process in running:
            assert process.proc is not None
            try:
                returncode = process.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.say(SYSTEM, f"sending SIGKILL to {process.name} (pid {process.proc.pid})")
                group_kill(process.proc.pid, signal.SIGKILL)
                returncode = process.proc.wait()
            group_kill(process.proc.pid, signal.SIGKILL)
            self.say(SYSTEM, f"{process.name} stopped (rc={returncode})")


def group_kill(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(pgid, signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chan_api.supervisor", description=__doc__)
    parser.add_argument("procfile", type=Path, nargs="?", default=Path("Procfile"))
    args = parser.parse_args(argv)
    return Supervisor(procfile_read(args.procfile)).run()


if __name__ == "__main__":
    sys.exit(main())
