"""Tasks for the worker fault tests, loaded into a test worker with ``-I tests.faults.poison_tasks``:
one that kills the process running it (a poison message), one that leaves a mark."""

from __future__ import annotations

import os
from pathlib import Path

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True)
def poison(marks: str) -> None:
    """Record this delivery, then die as a segfault would (no cleanup, no ack)."""
    with Path(marks).open("a") as f:
        f.write("delivery\n")
    os._exit(1)


@shared_task
def mark(marks: str) -> None:
    with Path(marks).open("a") as f:
        f.write("healthy\n")
