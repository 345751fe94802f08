"""WSGI entry point (``gunicorn chan_api.wsgi``), with a request class that survives any
Content-Type charset.

Django's ``WSGIRequest`` applies the Content-Type ``charset`` while it is being built, and that
re-parses the query string with it; a charset that is not a text codec (``rot13``), that cannot
decode the query (``idna``) or a query over ``DATA_UPLOAD_MAX_NUMBER_FIELDS`` then raises before
any middleware or error handler runs, and the WSGI server answers an HTML 500. JSON is UTF-8
(RFC 8259), so :class:`ChanWSGIRequest` drops a charset it cannot use and carries on; the request
then gets the ordinary problem+json answers (a 400 for too many query fields).
"""

from __future__ import annotations

import os
from typing import Any

import django
from django.core.exceptions import SuspiciousOperation
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")


class ChanWSGIRequest(WSGIRequest):
    def __init__(self, environ: dict[str, Any]) -> None:
        original = dict(environ)  # WSGIRequest rewrites PATH_INFO and SCRIPT_NAME in place
        try:
            super().__init__(environ)
            if self.encoding is not None:  # a charset was given: it must decode the query
                self.GET  # noqa: B018 (parsed now, so that a failure is caught here)
        except (LookupError, UnicodeError, SuspiciousOperation):
            media_type = original.get("CONTENT_TYPE", "").split(";", 1)[0].strip()
            self.__dict__.clear()  # forget the charset and anything parsed with it
            super().__init__({**original, "CONTENT_TYPE": media_type})


class ChanWSGIHandler(WSGIHandler):
    request_class = ChanWSGIRequest


def get_application() -> ChanWSGIHandler:
    django.setup(set_prefix=False)
    return ChanWSGIHandler()


application = get_application()
