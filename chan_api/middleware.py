"""Request-wide settings of the API."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

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
