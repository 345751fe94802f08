"""gunicorn settings for production: ``gunicorn -c deploy/gunicorn.conf.py chan_api.wsgi``.

Threads serve long polls (GET /hands/{id}?wait=N) without a process per waiting client; the
database connection is released while a poll waits. Logs go through the project's formatter
(JSON in production, chan_api/logs.py); each request is logged once by the application
(chan_api.middleware.RequestContextMiddleware), so gunicorn's access log is off unless
``GUNICORN_ACCESS_LOG=-``.
"""

import multiprocessing
import os

from chan_api import multiproc
from chan_api.logs import logging_config

bind = os.environ.get("BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_WORKERS", multiprocessing.cpu_count() * 2 + 1))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "16"))
timeout = 60
graceful_timeout = 30
keepalive = 5
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
errorlog = "-"
# gunicorn 23+ opens a control socket in $HOME (one path for every instance on the machine);
# nothing here uses it.
control_socket_disable = True
_config = logging_config(
    fmt=os.environ.get("LOG_FORMAT") or "json", level=os.environ.get("LOG_LEVEL", "INFO")
)
logconfig_dict = {
    **_config,
    "loggers": {
        **_config["loggers"],
        "gunicorn.error": {"level": "INFO", "handlers": [], "propagate": True},
        # With a logging config gunicorn always logs access: at WARNING it says nothing.
        "gunicorn.access": {
            "level": "INFO" if accesslog else "WARNING",
            "handlers": [],
            "propagate": True,
        },
    },
}


def child_exit(server, worker):
    """Prometheus multiprocess mode: a dead worker's live gauges stop counting."""
    multiproc.mark_process_dead(worker.pid)


# Oversized request lines and headers are refused by gunicorn itself with a plain 400 before the
# application sees them (docs/operations: the app answers problem+json for everything it can see).
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190
