"""One family of API errors, rendered as ``application/problem+json`` (RFC 9457).

Services and views raise :class:`ApiProblem` (or a DRF exception); :func:`problem_exception_handler`
turns every error into ``{"type", "title", "status", "code", "detail", "errors"?}`` with a stable
machine ``code`` and a ``detail`` in the request's language (English or Vietnamese).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, JsonResponse
from django.utils import translation
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response

PROBLEM_CONTENT_TYPE = "application/problem+json"

# code -> (English, Vietnamese) for the errors DRF raises itself.
_DRF_MESSAGES: dict[str, tuple[str, str]] = {
    "parse_error": (
        "The request body is not valid JSON.",
        "Nội dung yêu cầu không phải JSON hợp lệ.",
    ),
    "invalid": ("The request has invalid fields.", "Yêu cầu có trường không hợp lệ."),
    "not_authenticated": (
        "Authentication credentials were not provided.",
        "Chưa cung cấp thông tin xác thực.",
    ),
    "authentication_failed": ("The token is invalid or revoked.", "Mã truy cập không hợp lệ."),
    "permission_denied": ("You may not do this.", "Bạn không được phép làm việc này."),
    "not_found": ("Not found.", "Không tìm thấy."),
    "method_not_allowed": ("Method not allowed.", "Phương thức không được phép."),
    "not_acceptable": ("Not acceptable.", "Không chấp nhận được."),
    "unsupported_media_type": (
        "Send the body as application/json.",
        "Hãy gửi nội dung dạng application/json.",
    ),
    "throttled": ("Too many requests; slow down.", "Quá nhiều yêu cầu; hãy chậm lại."),
}


class ApiProblem(Exception):
    """An error with an HTTP status, a stable code and a message in English and Vietnamese."""

    def __init__(
        self,
        status: int,
        code: str,
        detail_en: str,
        detail_vi: str | None = None,
        *,
        errors: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail_en)
        self.status = status
        self.code = code
        self.detail_en = detail_en
        self.detail_vi = detail_vi or detail_en
        self.errors = errors
        self.extra = extra or {}

    def detail(self) -> str:
        return self.detail_vi if translation.get_language() == "vi" else self.detail_en


def bad_request(code: str, en: str, vi: str | None = None, **kw: Any) -> ApiProblem:
    return ApiProblem(400, code, en, vi, **kw)


def not_found(en: str = "Not found.", vi: str = "Không tìm thấy.") -> ApiProblem:
    return ApiProblem(404, "not_found", en, vi)


def conflict(code: str, en: str, vi: str | None = None, **kw: Any) -> ApiProblem:
    return ApiProblem(409, code, en, vi, **kw)


def forbidden(code: str, en: str, vi: str | None = None) -> ApiProblem:
    return ApiProblem(403, code, en, vi)


def unprocessable(code: str, en: str, vi: str | None = None, **kw: Any) -> ApiProblem:
    return ApiProblem(422, code, en, vi, **kw)


def flatten_errors(errors: Any, prefix: str = "") -> dict[str, list[str]]:
    """Field errors as ``{dotted field: [messages]}``, however deeply DRF nested them.

    ``{"timeouts": {"turn": [...]}}`` becomes ``{"timeouts.turn": [...]}``; a list field's
    ``{"deck": {99: [...]}}`` becomes ``{"deck.99": [...]}``; a list of per-item dicts is keyed
    by index. Errors on the body itself are ``non_field_errors``.
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

    walk(errors, prefix)
    return flat


def problem_body(problem: ApiProblem) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": f"https://chan.example/problems/{problem.code}",
        "title": problem.code.replace("_", " "),
        "status": problem.status,
        "code": problem.code,
        "detail": problem.detail(),
    }
    if problem.errors:
        body["errors"] = flatten_errors(problem.errors)
    body.update(problem.extra)
    return body


def problem_response(problem: ApiProblem) -> Response:
    return Response(problem_body(problem), status=problem.status, content_type=PROBLEM_CONTENT_TYPE)


def _from_drf(exc: drf_exceptions.APIException) -> ApiProblem:
    code = exc.default_code if isinstance(exc.default_code, str) else "error"
    if isinstance(exc, drf_exceptions.ValidationError):
        code = "invalid"
    en, vi = _DRF_MESSAGES.get(code, (str(exc.detail), str(exc.detail)))
    errors = None
    if isinstance(exc, drf_exceptions.ValidationError):
        errors = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
    elif isinstance(exc, drf_exceptions.ParseError):
        en = f"{en} {exc.detail}"
    problem = ApiProblem(exc.status_code, code, en, vi, errors=errors)
    return problem


def _from_bad_body(exc: Exception) -> ApiProblem | None:
    """Bodies the parser could not take, which DRF itself would let through as a 500."""
    if isinstance(exc, RequestDataTooBig):
        return ApiProblem(
            413, "body_too_large", "The request body is too large.", "Nội dung yêu cầu quá lớn."
        )
    if isinstance(exc, SuspiciousOperation):  # too many query or form fields, and the like
        return bad_request("bad_request", "Bad request.", "Yêu cầu không hợp lệ.")
    if isinstance(exc, RecursionError):
        return bad_request(
            "parse_error",
            "The request body is nested too deeply.",
            "Nội dung yêu cầu lồng nhau quá sâu.",
        )
    return None


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's EXCEPTION_HANDLER: every error becomes a problem+json response."""
    exc = _from_bad_body(exc) or exc
    if isinstance(exc, ApiProblem):
        response = problem_response(exc)
        if exc.status == 429:  # our own rate limits count per minute
            response["Retry-After"] = "60"
        return response
    if isinstance(exc, Http404):
        return problem_response(not_found())
    if isinstance(exc, PermissionDenied):
        exc = drf_exceptions.PermissionDenied()
    if isinstance(exc, drf_exceptions.APIException):
        response = problem_response(_from_drf(exc))
        if isinstance(exc, drf_exceptions.Throttled):
            response["Retry-After"] = str(max(1, math.ceil(exc.wait or 1)))
        auth_header = getattr(exc, "auth_header", None)
        if auth_header:
            response["WWW-Authenticate"] = auth_header
        return response
    return None


def _plain_problem(problem: ApiProblem) -> JsonResponse:
    """A problem+json response outside DRF (Django's error handlers)."""
    return JsonResponse(
        problem_body(problem),
        status=problem.status,
        content_type=PROBLEM_CONTENT_TYPE,
        json_dumps_params={"ensure_ascii": False},
    )


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """``handler404``: a URL outside every route is a problem+json 404, not an HTML page."""
    return _plain_problem(not_found())


def server_error(request: HttpRequest) -> JsonResponse:
    """``handler500``: an unexpected failure still answers problem+json, revealing nothing."""
    return _plain_problem(
        ApiProblem(500, "server_error", "Internal server error.", "Lỗi máy chủ nội bộ.")
    )


def bad_request_page(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """``handler400``: errors Django raises before any view runs (e.g. a bad Host header)."""
    return _plain_problem(bad_request("bad_request", "Bad request.", "Yêu cầu không hợp lệ."))
