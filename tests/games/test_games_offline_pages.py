"""No page the server serves asks another host for anything (STYLE.md: no CDN): Swagger UI,
ReDoc, the admin and the replay viewer, opened in a real headless browser whose network outside
the server is blocked, and every request it makes counted from Chrome's performance log."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.games.browser import headless_chromium
from tests.games.test_games_replay_viewer import (  # noqa: F401 (fixture)
    client_for,
    ended_hand,
    staff_user,
)

LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}


@pytest.fixture
def logged_browser() -> Iterator[Any]:
    # every host but this machine's resolves nowhere: the network outside is blocked
    blocked = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"
    with headless_chromium([blocked], performance_log=True) as driver:
        yield driver


def requested_urls(driver: Any) -> list[str]:
    """The URLs the browser asked for since the last call (Network.requestWillBeSent)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def wait_for(driver: Any, script: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not driver.execute_script(f"return Boolean({script})"):
        assert time.monotonic() < deadline, f"the page never showed {script}"
        time.sleep(0.2)
    time.sleep(1)  # what the page asks for once it is drawn (fonts, images) too


def test_no_page_asks_another_host_for_anything(
    logged_browser,
    live_server,
    make_user,
    ended_hand,  # noqa: F811
) -> None:
    driver = logged_browser
    # Given an auditor's admin session (the admin and the replay viewer need one)
    auditor = client_for(staff_user(make_user, "auditor", auditor=True))
    driver.get(f"{live_server.url}/admin/login/")
    driver.add_cookie({"name": "sessionid", "value": auditor.cookies["sessionid"].value})
    pages = {
        "/api/docs/": "document.querySelector('.swagger-ui .info')",
        "/api/redoc/": "document.querySelector('img[alt=\"redocly logo\"]')",
        "/admin/login/": "document.querySelector('#content')",
        "/admin/": "document.querySelector('#content')",
        f"/admin/games/hand/{ended_hand}/replay/": "document.getElementById('replay-seq')",
    }
    requested_urls(driver)
    seen: dict[str, list[str]] = {}
    for path, drawn in pages.items():
        # when each page is opened and drawn
        driver.get(live_server.url + path)
        wait_for(driver, drawn)
        seen[path] = requested_urls(driver)
    # then it asked this server alone (data: URLs are no request)
    outside = {
        path: [
            u
            for u in urls
            if urlsplit(u).scheme in {"http", "https", "ws", "wss"}
            and urlsplit(u).hostname not in LOCAL_HOSTS
        ]
        for path, urls in seen.items()
    }
    assert all(seen.values()), seen  # the log did record the pages' own requests
    assert outside == {path: [] for path in pages}
