"""The page at /play/: served by the server with its own script and style, under a policy that
lets it load and call nothing but this origin; anything but a read is refused, never a 500."""

from __future__ import annotations

import pytest
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db


def test_the_page_loads_its_script_and_style_from_this_server_only(client) -> None:
    response = client.get("/play/")
    assert response.status_code == 200
    body = response.content.decode()
    assert '<script src="/static/play/play.js" defer></script>' in body
    assert '<link rel="stylesheet" href="/static/play/play.css">' in body
    assert "http://" not in body and "https://" not in body
    policy = dict(
        part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";")
    )
    assert policy["default-src"] == "'none'"
    for directive in ("script-src", "style-src", "connect-src"):
        assert policy[directive] == "'self'", directive
    # and the files it names are static files of the project (whitenoise serves them).
    assert finders.find("play/play.js") and finders.find("play/play.css")


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_anything_but_a_read_is_refused(client, method: str) -> None:
    assert getattr(client, method)("/play/").status_code == 405
