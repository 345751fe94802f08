"""``/favicon.ico``: the small icon every browser asks for on every page (the admin, the replay
viewer, the OAuth pages), read once from ``chan_api/static/chan_api/favicon.ico``."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

ICON = Path(__file__).resolve().parent / "static" / "chan_api" / "favicon.ico"


@cache
def _icon() -> bytes:
    return ICON.read_bytes()


@require_safe
@cache_control(public=True, max_age=86400)
def favicon(request: HttpRequest) -> HttpResponse:
    return HttpResponse(_icon(), content_type="image/x-icon")
