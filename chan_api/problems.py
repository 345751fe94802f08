"""Errors as ``application/problem+json`` (RFC 9457): the one place that speaks HTTP for them.

Services, selectors and views raise :class:`core.errors.DomainError` subclasses (or DRF and
Django exceptions, which are turned into domain errors here). :data:`STATUS_BY_FAMILY` maps each
family to its HTTP status, :data:`STATUS_BY_CODE` the few codes that differ from their family;
:func:`problem_exception_handler` renders ``{"type", "title", "status", "code", "detail",
"errors"?, …extra}`` with a ``detail`` and field messages in the request's language (gettext,
``locale/vi``).
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.db import InterfaceError as DatabaseInterfaceError
from django.db import OperationalError as DatabaseOperationalError
from django.http import Http404, HttpRequest, JsonResponse
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions as drf_exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from chan_api.logs import current_request_id
from core import errors

logger = logging.getLogger(__name__)
PROBLEM_CONTENT_TYPE = "application/problem+json"

# The HTTP status of each family of domain errors (the nearest class in the MRO wins) …
STATUS_BY_FAMILY: dict[type[errors.DomainError], int] = {
    errors.InvalidInput: 400,
    errors.NotAuthenticated: 401,
    errors.PermissionDenied: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.RuleRefused: 422,
    errors.RateLimited: 429,
    errors.DomainError: 400,
}
# … and the codes whose status is not their family's.
STATUS_BY_CODE: dict[str, int] = {
    "not_authenticated": 401,
    "authentication_failed": 401,
    "method_not_allowed": 405,
    "gone": 410,
    "not_acceptable": 406,
    "body_too_large": 413,
    "unsupported_media_type": 415,
    "idempotency_key_reused": 422,
    "service_unavailable": 503,
    "server_error": 500,
}

# Messages of the errors DRF raises itself, by DRF's code (translated through locale/vi).
_DRF_MESSAGES: dict[str, errors.Message] = {
    "parse_error": _("The request body is not valid JSON."),
    "invalid": _("The request has invalid fields."),
    "not_authenticated": _("Authentication credentials were not provided."),
    "authentication_failed": _("The token is invalid or revoked."),
    "permission_denied": _("You may not do this."),
    "not_found": _("Not found."),
    "method_not_allowed": _("Method not allowed."),
    "not_acceptable": _("Not acceptable."),
    "unsupported_media_type": _("Send the body as application/json."),
    "throttled": _("Too many requests; slow down."),
}


def problem_status(error: errors.DomainError) -> int:
    """The HTTP status of a domain error: its code's, else its family's."""
    if error.code in STATUS_BY_CODE:
        return STATUS_BY_CODE[error.code]
    for cls in type(error).__mro__:
        if cls in STATUS_BY_FAMILY:
            return STATUS_BY_FAMILY[cls]  # type: ignore[index]
    return 500


def flatten_errors(errors_: Any, prefix: str = "") -> dict[str, list[str]]:
    """Field errors as ``{dotted field: [messages]}``, however deeply DRF nested them.

    ``{"timeouts": {"turn": [...]}}`` becomes ``{"timeouts.turn": [...]}``; a list field's
    ``{"deck": {99: [...]}}`` becomes ``{"deck.99": [...]}``; a list of per-item dicts is keyed
    by index. Errors on the body itself are ``non_field_errors``. Lazy messages are translated.
    """
    flat: dict[str, list[str]] = {}

    def walk(value: Any, key: str) -> None:
        if isinstance(value, Mapping):
            for name, inner in value.items():
                walk(inner, f"{key}.{name}" if key else str(name))
        elif isinstance(value, list | tuple) and any(
            isinstance(v, Mapping | list | tuple) for v in value
        ):
            for i, inner in enumerate(value):
                if inner:
                    walk(inner, f"{key}.{i}" if key else str(i))
        else:
            messages = value if isinstance(value, list | tuple) else [value]
            flat.setdefault(key or "non_field_errors", []).extend(str(m) for m in messages)

    walk(errors_, prefix)
    return flat


def problem_body(error: errors.DomainError) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": f"https://chan.example/problems/{error.code}",
        "title": error.code.replace("_", " "),
        "status": problem_status(error),
        "code": error.code,
        "detail": error.detail(),
    }
    if error.errors:
        body["errors"] = flatten_errors(error.errors)
    body.update({k: str(v) if isinstance(v, Promise) else v for k, v in error.extra.items()})
    if request_id := current_request_id():  # set by chan_api.middleware.RequestContextMiddleware
        body["request_id"] = request_id
    return body


class ProblemResponse(Response):
    """A problem is JSON whatever renderer the view negotiated: the HTML pages (Swagger UI,
    ReDoc) and the YAML schema would otherwise render the problem body as ``401 Unauthorized``
    text or YAML under a problem+json header."""

    @property
    def rendered_content(self) -> bytes:
        self.accepted_renderer = JSONRenderer()
        self.accepted_media_type = "application/json"
        return super().rendered_content


def problem_response(error: errors.DomainError) -> Response:
    response = ProblemResponse(
        problem_body(error), status=problem_status(error), content_type=PROBLEM_CONTENT_TYPE
    )
    if isinstance(error, errors.RateLimited):
        response["Retry-After"] = str(max(1, error.retry_after))
    if isinstance(error, ServiceUnavailable):
        response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
    if error.code == "missing_scope":  # RFC 6750 §3.1, for OAuth clients
        scope = error.extra.get("scope", "")
        response["WWW-Authenticate"] = f'Bearer error="insufficient_scope", scope="{scope}"'
    return response


def _from_drf(exc: drf_exceptions.APIException) -> errors.DomainError:
    code = exc.default_code if isinstance(exc.default_code, str) else "error"
    if isinstance(exc, drf_exceptions.ValidationError):
        code = "invalid"
    message: errors.Message = _DRF_MESSAGES.get(code, str(exc.detail))
    field_errors = None
    if isinstance(exc, drf_exceptions.ValidationError):
        field_errors = (
            exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        )
    elif isinstance(exc, drf_exceptions.ParseError):
        message = f"{message} {exc.detail}"
    if isinstance(exc, drf_exceptions.Throttled):
        return errors.RateLimited(message, retry_after=math.ceil(exc.wait or 1))
    family = {
        400: errors.InvalidInput,
        401: errors.NotAuthenticated,
        403: errors.PermissionDenied,
        404: errors.NotFound,
    }.get(exc.status_code, errors.DomainError)
    return family(message, code=code, errors=field_errors)


DATABASE_RETRY_AFTER_SECONDS = 5


class ServiceUnavailable(errors.DomainError):
    """The database did not answer: nothing was done; the client should retry shortly."""

    code = "service_unavailable"
    message = _("The service is briefly unavailable; retry in a few seconds.")


def _from_django(exc: Exception) -> errors.DomainError | None:
    """Errors Django raises (bad bodies, 404s, a database that is down) that DRF itself would
    let through as a 500."""
    if isinstance(exc, DatabaseOperationalError | DatabaseInterfaceError):
        logger.warning("the database did not answer: %s", exc)
        return ServiceUnavailable()
    if isinstance(exc, RequestDataTooBig):
        return errors.InvalidInput(_("The request body is too large."), code="body_too_large")
    if isinstance(exc, SuspiciousOperation):  # too many query or form fields, and the like
        return errors.InvalidInput(_("Bad request."), code="bad_request")
    if isinstance(exc, RecursionError):
        return errors.InvalidInput(_("The request body is nested too deeply."), code="parse_error")
    if isinstance(exc, Http404):
        return errors.NotFound()
    return None


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER: every error becomes a problem+json response."""
    exc = _from_django(exc) or exc
    if isinstance(exc, DjangoPermissionDenied):
        exc = drf_exceptions.PermissionDenied()
    if isinstance(exc, drf_exceptions.APIException):
        response = problem_response(_from_drf(exc))
        auth_header = getattr(exc, "auth_header", None)
        if auth_header:
            response["WWW-Authenticate"] = auth_header
        return response
    if isinstance(exc, errors.DomainError):
        return problem_response(exc)
    return None


def plain_problem(error: errors.DomainError) -> JsonResponse:
    """A problem+json response outside DRF (Django's error handlers)."""
    return JsonResponse(
        problem_body(error),
        status=problem_status(error),
        content_type=PROBLEM_CONTENT_TYPE,
        json_dumps_params={"ensure_ascii": False},
    )


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """``handler404``: a URL outside every route is a problem+json 404, not an HTML page."""
    return plain_problem(errors.NotFound())


def server_error(request: HttpRequest) -> JsonResponse:
    """``handler500``: an unexpected failure still answers problem+json, revealing nothing; a
    database that did not answer outside a view (a middleware's query) is a 503 all the same."""
    unavailable = _from_django(sys.exc_info()[1] or Exception())
    if isinstance(unavailable, ServiceUnavailable):
        response = plain_problem(unavailable)
        response["Retry-After"] = str(DATABASE_RETRY_AFTER_SECONDS)
        return response
    return plain_problem(errors.DomainError(_("Internal server error."), code="server_error"))


def bad_request_page(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """``handler400``: errors Django raises before any view runs (e.g. a bad Host header)."""
    return plain_problem(errors.InvalidInput(_("Bad request."), code="bad_request"))
