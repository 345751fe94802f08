"""ASGI entry point (``gunicorn -k uvicorn_worker.UvicornWorker chan_api.asgi:application``):
Django's application inside :class:`games.api.long_poll.LongPollApp`, whose long polls wait
without a thread or a database connection."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")


def get_application():  # type: ignore[no-untyped-def]
    django_app = get_asgi_application()
    from games.api.long_poll import LongPollApp

    return LongPollApp(django_app)


application = get_application()
