"""ReDoc served wholly from this server: drf-spectacular's page asks Google Fonts for its fonts
and ReDoc's bundle (drf-spectacular-sidecar) shows Redocly's logo from cdn.redoc.ly. The page
here has no font link, and the bundle is served with the logo's address replaced by an inline
image, so no page of the server asks any other host for anything (tests/chan_api/
test_offline_pages.py)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import drf_spectacular_sidecar
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from drf_spectacular.views import SpectacularRedocView

_BUNDLE = (
    Path(drf_spectacular_sidecar.__file__).parent
    / "static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
)
_LOGO_URL = "https://cdn.redoc.ly/redoc/logo-mini.svg"
# A blank 1×1 SVG: the link to Redocly stays, its image costs no request.
_INLINE_LOGO = (
    "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E"
)


@lru_cache(maxsize=1)
def _offline_bundle() -> bytes:
    text = _BUNDLE.read_text(encoding="utf-8")
    return text.replace(_LOGO_URL, _INLINE_LOGO).encode("utf-8")


def redoc_bundle(request: HttpRequest) -> HttpResponse:
    """``GET /api/redoc/redoc.standalone.js``: the sidecar's ReDoc, its remote logo inlined."""
    response = HttpResponse(_offline_bundle(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=86400"
    return response


class OfflineRedocView(SpectacularRedocView):
    template_name = "chan_api/redoc.html"

    @staticmethod
    def _redoc_standalone() -> str:
        return reverse("redoc-bundle")
