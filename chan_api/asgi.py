"""ASGI entry point (``gunicorn -c deploy/gunicorn.conf.py chan_api.asgi:application``, uvicorn
workers; ``manage.py run_dev`` serves it too): Django's application, with a request class that
survives any Content-Type charset (chan_api/request_charset.py), inside
:class:`games.api.long_poll.LongPollApp`, where long polls wait without a thread or a database
connection.

Django runs each sync view in a thread of its own request, so a connection kept for
``CONN_MAX_AGE`` would be kept by a thread that is gone: this entry turns psycopg's connection
pool on (``DB_POOL``, settings.py) unless the environment says otherwise.
"""

from __future__ import annotations

import os
from typing import Any

import django
from django.core.handlers.asgi import ASGIHandler, ASGIRequest

from chan_api.request_charset import UsableCharsetMixin, media_type

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")
os.environ.setdefault("DB_POOL", "1")


def _without_charset(scope: dict[str, Any]) -> dict[str, Any]:
    headers = [
        (name, media_type(value.decode("latin1")).encode("latin1"))
        if name.lower() == b"content-type"
        else (name, value)
        for name, value in scope.get("headers", [])
    ]
    return {**scope, "headers": headers}


class ChanASGIRequest(UsableCharsetMixin, ASGIRequest):
    def __init__(self, scope: dict[str, Any], body_file: Any) -> None:
        self.build_or_drop_charset(
            lambda: ASGIRequest.__init__(self, scope, body_file),
            lambda: ASGIRequest.__init__(self, _without_charset(scope), body_file),
        )


class ChanASGIHandler(ASGIHandler):
    request_class = ChanASGIRequest


def get_django_application() -> ChanASGIHandler:
    django.setup(set_prefix=False)
    return ChanASGIHandler()


def get_application() -> Any:
    """The served application: Django's inside the long-poll application."""
    django_app = get_django_application()
    from games.api.long_poll import LongPollApp  # models load after django.setup()

    return LongPollApp(django_app)


application = get_application()
