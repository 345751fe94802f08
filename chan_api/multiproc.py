"""prometheus-client's multiprocess mode, with processes named by host and pid.

With ``PROMETHEUS_MULTIPROC_DIR`` set, every process writes its metrics to files in that
directory, named by a process identifier (the pid by default). Containers sharing the directory
(deploy/compose.yaml: web and worker containers on one volume) can have the same pids, so the
identifier here is ``<hostname>-<pid>``. :func:`use_host_and_pid` must run before any metric is
created (the settings call it first thing).
"""

from __future__ import annotations

import os
import socket

_HOST = socket.gethostname()


def process_identifier(pid: int | None = None) -> str:
    return f"{_HOST}-{os.getpid() if pid is None else pid}"


def enabled() -> bool:
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


def use_host_and_pid() -> None:
    if enabled():
        from prometheus_client import values

        values.ValueClass = values.MultiProcessValue(process_identifier)


def mark_process_dead(pid: int) -> None:
    """A dead process's live gauges stop counting (gunicorn's ``child_exit``)."""
    if enabled():
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(process_identifier(pid))
