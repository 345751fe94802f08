"""Request-wide middleware: UTC in the API, the request id and log line, problem+json 404s
and the ``RateLimit-*`` headers."""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable
from datetime import UTC
from typing import Any

import structlog
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from chan_api.logs import request_id_var
from chan_api.throttles import RATE_LIMIT_ATTR, Quota

API_PREFIX = "/api/"


class UtcApiMiddleware:
    """Every timestamp the API returns is UTC (``Z``): clients compare ``now`` with deadlines
    without parsing offsets. ``TIME_ZONE`` (Asia/Ho_Chi_Minh) stays the default elsewhere, for
    calendar days (the daily bonus) and the admin."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        with timezone.override(UTC):
            return self.get_response(request)


# ----------------------------------------------------------------------- request id and log line

REQUEST_ID_HEADER = "X-Request-ID"
# A request id sent by the client or a proxy is kept when it is this tame; else a new one is made.
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{8,64}$")
request_log = structlog.get_logger("chan.request")


class RequestContextMiddleware:
    """Gives each request an id (``X-Request-ID``: the caller's, if tame, else a new one), binds
    it for every log line of the request and for problem bodies, and logs one line per request:
    method, path, status, latency, user, and the table, hand and seq when there are some."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_for(request.headers.get(REQUEST_ID_HEADER, ""))
        token = request_id_var.set(request_id)
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        start = time.perf_counter()
        try:
            response = self.get_response(request)
            response[REQUEST_ID_HEADER] = request_id
            self._log(request, response, time.perf_counter() - start)
            return response
        finally:
            structlog.contextvars.clear_contextvars()
            request_id_var.reset(token)

    def process_view(
        self, request: HttpRequest, view: Any, args: Any, kwargs: dict[str, Any]
    ) -> None:
        for name in ("table_id", "hand_id"):
            if name in kwargs:
                setattr(request, f"chan_log_{name}", kwargs[name])

    @staticmethod
    def _log(request: HttpRequest, response: HttpResponse, seconds: float) -> None:
        user = getattr(request, "user", None)  # DRF puts the token's user here too
        data = getattr(response, "data", None)
        seq = data.get("seq") if isinstance(data, dict) else None
        if not isinstance(seq, int):
            seq = getattr(response, "chan_log_seq", None)  # a body sent as kept bytes
        request_line(
            method=request.method,
            path=request.path,
            status=response.status_code,
            seconds=seconds,
            user_id=user.pk if user is not None and user.is_authenticated else None,
            table_id=getattr(request, "chan_log_table_id", None),
            hand_id=getattr(request, "chan_log_hand_id", None),
            long_poll=getattr(response, "chan_long_poll", False),
            seq=seq if isinstance(seq, int) else None,
        )


def request_id_for(sent: str) -> str:
    """The request's id: the one the client (or a proxy) sent if it is tame, else a new one."""
    return sent if _REQUEST_ID_RE.match(sent) else new_request_id()


# A version 4 UUID's bits (RFC 9562): its version nibble 0100, its variant bits 10.
_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)


def new_request_id() -> str:
    """A new request id: ``uuid.uuid4().hex`` (the same 32 digits from the same random bits)
    without building a ``UUID`` object, whose checks were 1 % of a web worker's CPU under load
    (docs/decisions/lean-move.md)."""
    bits = int.from_bytes(os.urandom(16), "big")
    return f"{bits & _UUID4_CLEAR | _UUID4_SET:032x}"


def request_line(
    *,
    method: str | None,
    path: str,
    status: int,
    seconds: float,
    user_id: int | None,
    table_id: int | None = None,
    hand_id: int | None = None,
    long_poll: bool = False,
    seq: int | None = None,
) -> None:
    """The request's one log line (the request id comes from the bound context)."""
    fields: dict[str, Any] = {
        "method": method,
        "path": path,
        "status": status,
        "latency_ms": round(seconds * 1000, 1),
        "user_id": user_id,
    }
    if table_id is not None:
        fields["table_id"] = table_id
    if hand_id is not None:
        fields["hand_id"] = hand_id
    if long_poll:
        # Handed over to the event loop to wait (games/live/long_poll.py): this line says
        # when it started; each wake-up logs one line for all the polls it answers.
        fields["long_poll"] = "waiting"
    if seq is not None:
        fields["seq"] = seq
    level = logging.ERROR if status >= 500 else logging.INFO
    request_log.log(level, "request", **fields)


def request_line_outside(request_id: str, **fields: Any) -> None:
    """:func:`request_line` for a request answered outside Django (games.live.rearm,
    games.api.move_direct), its id bound as :class:`RequestContextMiddleware` binds it."""
    token = request_id_var.set(request_id)
    try:
        with structlog.contextvars.bound_contextvars(request_id=request_id):
            request_line(**fields)
    finally:
        request_id_var.reset(token)


# ----------------------------------------------------------------------------- 404 everywhere


class ProblemNotFoundMiddleware:
    """A 404 is problem+json everywhere, under ``DEBUG`` too: Django's debug 404 page (URL
    outside every route) bypasses ``handler404``, so its HTML answer is replaced here."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code == 404 and "json" not in response.get("Content-Type", ""):
            from chan_api.problems import page_not_found

            return page_not_found(request)
        return response


# ------------------------------------------------------------------------------ RateLimit-*


class RateLimitHeadersMiddleware:
    """``RateLimit-Limit``, ``RateLimit-Remaining``, ``RateLimit-Reset`` (seconds) and
    ``RateLimit-Policy`` on every answer of a throttled endpoint (429s included), from the
    tightest of its throttles (``chan_api.throttles`` records them on the request)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        quota = getattr(request, RATE_LIMIT_ATTR, None)
        if quota is not None:
            for name, value in rate_limit_headers(quota):
                response[name] = value
        return response


def rate_limit_headers(quota: Quota) -> list[tuple[str, str]]:
    return [
        ("RateLimit-Limit", str(quota.limit)),
        ("RateLimit-Remaining", str(quota.remaining)),
        ("RateLimit-Reset", str(quota.reset)),
        ("RateLimit-Policy", f"{quota.limit};w={quota.window}"),
    ]
