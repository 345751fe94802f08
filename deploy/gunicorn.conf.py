"""gunicorn settings for production:
``gunicorn -c deploy/gunicorn.conf.py chan_api.asgi:application``.

Each worker process runs uvicorn (``uvicorn_worker.UvicornWorker``; ``WEB_WORKER_CLASS`` may name
another ASGI worker class): an event loop serves the connections and the waiting long polls, and
Django runs in a fixed pool of ``WEB_THREADS`` threads (chan_api/asgi.py), each keeping its
database connection (``DB_POOL=1``: psycopg's pool instead). Logs go through the project's formatter (JSON in production,
chan_api/logs.py); each request is logged once by the application
(chan_api.middleware.RequestContextMiddleware), so the access log is off unless
``GUNICORN_ACCESS_LOG=-``.
"""

import logging
import multiprocessing
import os

from chan_api import multiproc
from chan_api.logs import logging_config

bind = os.environ.get("BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_WORKERS", multiprocessing.cpu_count() * 2 + 1))
worker_class = os.environ.get("WEB_WORKER_CLASS", "chan_api.uvicorn_worker.UvicornWorker")
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


def post_worker_init(worker):
    """The uvicorn worker gives its loggers gunicorn's handlers (none: gunicorn's loggers
    propagate to the project's), and would then print nothing: they propagate too (the access
    log only when it is on)."""
    for name in ("uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = True
    access = logging.getLogger("uvicorn.access")
    access.setLevel(logging.INFO if accesslog else logging.WARNING)
    # uvicorn formats each access line's arguments whenever the logger has handlers, whatever
    # its level: without the access log it has none (2 to 5 % of a long poll's answer).
    access.propagate = bool(accesslog)


def child_exit(server, worker):
    """Prometheus multiprocess mode: a dead worker's live gauges stop counting."""
    multiproc.mark_process_dead(worker.pid)


# The uvicorn worker ignores gunicorn's limit_request_line, limit_request_fields and
# limit_request_field_size. Its parser (httptools) refuses a URL over 65,535 bytes with a plain-text
# 400 ("Invalid HTTP request received.") before the application sees it, and bounds neither the
# number nor the size of headers: whatever faces the internet in front of it (a proxy, a load
# balancer) should bound those (tests/chan_api/test_deploy.py checks the request line).
# The worker (chan_api/uvicorn_worker.py) leaves X-Forwarded-For and X-Forwarded-Proto alone:
# REMOTE_ADDR is the socket's peer, and Django judges the headers by NUM_PROXIES alone (the
# throttles, /metrics, the sign-up limit), so a client's own X-Forwarded-For is never taken.
