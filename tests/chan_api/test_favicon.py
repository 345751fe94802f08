"""``/favicon.ico``, which every browser asks for on every page, is a small icon, not a 404."""

from __future__ import annotations

import struct

import pytest
from django.test import Client


@pytest.mark.django_db
def test_the_favicon_is_served_and_cached() -> None:
    response = Client().get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    body = b"".join(response.streaming_content) if response.streaming else response.content
    # an ICO file (reserved 0, type 1) with at least one image, small
    reserved, kind, count = struct.unpack("<HHH", body[:6])
    assert (reserved, kind) == (0, 1) and count >= 1 and len(body) < 4096
    assert "max-age=86400" in response["Cache-Control"]
    # and a HEAD answers alike
    assert Client().head("/favicon.ico").status_code == 200
