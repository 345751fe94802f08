"""/play/: the page that loads the reference web client (clients/web, bundled into
play/static/play/play.js). It reads nothing and knows no one: the script signs in and plays
through the public API alone, with a bearer token it keeps in the browser."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

# Everything the page loads comes from this server: its script, its style, its API. The cards
# are drawn in SVG by the script, and the only image is the empty icon (a data: URL).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@require_safe
def play_page(request: HttpRequest) -> HttpResponse:
    response = render(request, "play/index.html")
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return response
