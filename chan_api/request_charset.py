"""A request that survives any Content-Type charset, for both entry points (chan_api.wsgi and
chan_api.asgi).

Django's request classes apply the Content-Type ``charset`` while they are being built, and
``HttpRequest.encoding``'s setter then builds ``request.GET``; a charset that is not a text codec
(``rot13``), that cannot decode the query (``idna``) or a query over
``DATA_UPLOAD_MAX_NUMBER_FIELDS`` then raises before any middleware or error handler runs, and the
server answers its own 500. JSON is UTF-8 (RFC 8259), so a request built through
:class:`UsableCharsetMixin` drops a charset it cannot use and carries on; it then gets the ordinary
problem+json answers (a 400 for too many query fields).
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import SuspiciousOperation

UNUSABLE_CHARSET = (LookupError, UnicodeError, SuspiciousOperation)


def media_type(content_type: str) -> str:
    """``text/plain; charset=rot13`` -> ``text/plain``."""
    return content_type.split(";", 1)[0].strip()


class UsableCharsetMixin:
    """For a subclass of a Django request class: ``__init__`` calls :meth:`build_or_drop_charset`
    with two ways of running the parent's ``__init__``, as given and without the charset."""

    encoding: str | None
    GET: object

    def build_or_drop_charset(
        self, build: Callable[[], None], build_without_charset: Callable[[], None]
    ) -> None:
        try:
            build()
            if self.encoding is not None:  # a charset was given: it must decode the query
                self.GET  # noqa: B018 (parsed now, so that a failure is caught here)
        except UNUSABLE_CHARSET:
            self.__dict__.clear()  # forget the charset and anything parsed with it
            build_without_charset()
