"""ASGI entry point (``gunicorn -c deploy/gunicorn.conf.py chan_api.asgi:application``, uvicorn
workers; ``manage.py run_dev`` serves it too), with a request class that survives any
Content-Type charset (chan_api/request_charset.py).

Django runs each sync view in a thread of its own request, so a connection kept for
``CONN_MAX_AGE`` would be kept by a thread that is gone: this entry turns psycopg's connection
pool on (``DB_POOL``, settings.py) unless the environment says otherwise.
"""

from __future__ import annotations

import os
from typing import Any

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler, ASGIRequest
from django.http import HttpRequest, HttpResponseBase

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
    """Django's ASGI handler with the middleware chain and the view run in one thread hop.

    Stock, it runs each async-capable middleware in the event loop and hops to a thread for each
    sync method it calls (most of ours are MiddlewareMixin: a dozen hops a request), which halved
    the floor's request rate in bench/load_bench.py. Here the chain is built as under WSGI and runs
    whole in the request's thread; an async view would run through async_to_sync there.
    """

    request_class = ChanASGIRequest

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


def get_application() -> ChanASGIHandler:
    django.setup(set_prefix=False)
    return ChanASGIHandler()


application = get_application()
