"""Structured logs (structlog): one JSON object a line in production, readable lines under DEBUG.

Every record, ours (``structlog.get_logger``) or a library's (``logging.getLogger``: Django,
Celery, gunicorn's error log), goes through the same formatter, so a line always carries the
time, level and logger, plus what the request middleware bound for the request: ``request_id``
(also the ``X-Request-ID`` response header and the ``request_id`` of problem bodies).
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import Any

import structlog

# The id of the request being served in this thread or task (None outside a request).
request_id_var: ContextVar[str | None] = ContextVar("chan_request_id", default=None)


def current_request_id() -> str | None:
    return request_id_var.get()


# Processors run on every record, structlog's and the standard library's alike.
_SHARED: list[Any] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_logger_name,
    structlog.stdlib.add_log_level,
    structlog.stdlib.ExtraAdder(),
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.processors.StackInfoRenderer(),
]


def formatter(fmt: str) -> dict[str, Any]:
    """A ``logging`` formatter entry rendering JSON (``fmt="json"``) or console lines."""
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer(ensure_ascii=False)
        final: list[Any] = [structlog.processors.format_exc_info, renderer]
    else:
        final = [structlog.dev.ConsoleRenderer(colors=False)]
    return {
        "()": structlog.stdlib.ProcessorFormatter,
        "foreign_pre_chain": _SHARED,
        "processors": [structlog.stdlib.ProcessorFormatter.remove_processors_meta, *final],
    }


# The beat's tasks sent every few seconds (CHAN_SWEEP_SECONDS, CHAN_ARENA_SECONDS).
FREQUENT_TASKS = ("games.tasks.clock_sweep", "games.tasks.tournaments_sweep")


class QuietSweepFilter(logging.Filter):
    """The clock sweep and the arenas' clock run every few seconds (5 s); Celery's INFO lines
    about them (beat sending them, the worker receiving them and their success) are noise. They
    pass only when the logger is at DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO:
            return True
        said = str(record.msg) + str(record.args)
        if not any(task in said for task in FREQUENT_TASKS):
            return True
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def logging_config(*, fmt: str, level: str) -> dict[str, Any]:
    """Django's ``LOGGING``: one stderr handler with the chosen format at ``level``."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"quiet_sweep": {"()": QuietSweepFilter}},
        "formatters": {"structured": formatter(fmt)},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "structured",
                "filters": ["quiet_sweep"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # Through our handler only (Django's default config gives them plain ones under
            # DEBUG); our request line replaces runserver's, which speaks only of errors.
            "django": {"handlers": [], "propagate": True},
            "django.server": {"handlers": [], "propagate": True, "level": "ERROR"},
        },
    }


def structlog_configure() -> None:
    """structlog hands its events to the standard library, which formats them (above)."""
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.filter_by_level,
            structlog.stdlib.add_logger_name,
            structlog.stdlib.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
