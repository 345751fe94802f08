"""WSGI entry point (``chan_api.wsgi:application``), with a request class that survives any
Content-Type charset (chan_api/request_charset.py).

Production serves chan_api.asgi; this entry stays for WSGI servers and is the request class the
tests give Django's test client (which speaks WSGI).
"""

from __future__ import annotations

import os
from typing import Any

import django
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest

from chan_api.request_charset import UsableCharsetMixin, media_type

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")


class ChanWSGIRequest(UsableCharsetMixin, WSGIRequest):
    def __init__(self, environ: dict[str, Any]) -> None:
        original = dict(environ)  # WSGIRequest rewrites PATH_INFO and SCRIPT_NAME in place
        self.build_or_drop_charset(
            lambda: WSGIRequest.__init__(self, environ),
            lambda: WSGIRequest.__init__(
                self,
                {**original, "CONTENT_TYPE": media_type(original.get("CONTENT_TYPE", ""))},
            ),
        )


class ChanWSGIHandler(WSGIHandler):
    request_class = ChanWSGIRequest


def get_application() -> ChanWSGIHandler:
    django.setup(set_prefix=False)
    return ChanWSGIHandler()


application = get_application()
