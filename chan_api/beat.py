"""The beat's Celery application: the schedule, the queues and routes and the broker, read from
the settings module, without Django (``celery -A chan_api.beat beat``: the Procfile's ``beat``).

The beat only sends messages by task name at their times; it runs no task, reads no model and
serves no request. ``chan_api.celery``'s application sets Django up and imports every app and
task module (64 MB of a 101 MB process); this one imports ``chan_api.settings`` as a plain module
for its ``CELERY_*`` values, with Celery's Django fixup off, so the one beat of a deployment
costs about a third of the memory (docs/decisions/lean-move.md: the stack's RSS). Every
entry of ``CELERY_BEAT_SCHEDULE`` names its task by its dotted name, which the workers
(``chan_api.celery``) register; a test holds the two applications' schedule, queues and routes
equal. Its log lines go through the settings' ``LOGGING`` (JSON in production, the frequent
sends quiet at INFO), as the worker's and the web's do, not through Celery's plain handler.
"""

from __future__ import annotations

import logging.config
import os
from importlib import import_module
from typing import Any

from celery import Celery
from celery.signals import setup_logging

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")

app = Celery("chan_api", fixups=[])
app.config_from_object(os.environ["DJANGO_SETTINGS_MODULE"], namespace="CELERY")


@setup_logging.connect
def logging_configure(**_: Any) -> None:
    """Celery's ``setup_logging``: connected, it configures nothing of its own."""
    logging.config.dictConfig(import_module(os.environ["DJANGO_SETTINGS_MODULE"]).LOGGING)
