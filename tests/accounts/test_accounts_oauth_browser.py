"""The OAuth consent in a real headless Chromium (Debian's chromium and chromedriver): a player
signs in on ``/oauth/login/``, reads what the app asks for in Vietnamese, allows it, and the app
gets its code; refusing sends it ``access_denied``.

Screenshots go to ``tmp/artifacts/`` (or ``$CHAN_TEST_ARTIFACTS``), kept by CI, never committed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from oauth2_provider.models import get_application_model

from tests.accounts.test_accounts_oauth import PASSWORD, authorize_query, pkce
from tests.games.browser import headless_chromium

ARTIFACTS = Path(os.environ.get("CHAN_TEST_ARTIFACTS", "tmp/artifacts"))


@pytest.fixture(scope="module")
def live_server() -> Iterator[Any]:
    """pytest-django's live server, on 127.0.0.1 rather than "localhost": the app's redirect URI
    is on it, and a plain http redirect goes to a loopback address only, never to a name."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer("127.0.0.1")
    yield server
    server.stop()


@pytest.fixture
def browser() -> Iterator[Any]:
    with headless_chromium(["--lang=vi"]) as driver:
        yield driver


def screenshot(driver: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


@pytest.fixture
def live_app(live_server) -> Any:
    # The redirect URI is the live server's own (a 404 page there): the browser stops on it and
    # the test reads the code from its address, as the app would.
    return get_application_model().objects.create(
        name="Bàn Phụ Tá",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris=f"{live_server.url}/callback",
        algorithm="",
    )


def start(browser: Any, live_server: Any, app: Any, scope: str, lang: str) -> str:
    from selenium.webdriver.common.by import By

    verifier, challenge = pkce()
    url = authorize_query(app, challenge, scope, redirect=f"{live_server.url}/callback", lang=lang)
    browser.get(live_server.url + url)
    # not signed in: the login page first
    assert "/oauth/login/" in browser.current_url
    browser.find_element(By.ID, "id_username").send_keys("hoa")
    browser.find_element(By.ID, "id_password").send_keys(PASSWORD)
    browser.find_element(By.ID, "login-submit").click()
    # the click returns before the next page loads (signing in hashes the password, about a
    # second under the suite's load): wait for the consent page before reading it
    landed_on(browser, "/oauth/authorize/")
    wait_for_id(browser, "consent-title")
    return verifier


def landed_on(browser: Any, path: str) -> Any:
    """The browser's URL once it is at ``path``: a click that submits a form returns before the
    next page loads, so reading the URL at once may still see the form's."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 15).until(lambda b: urlparse(b.current_url).path == path)
    return urlparse(browser.current_url)


def wait_for_id(browser: Any, element_id: str) -> Any:
    """The element once the page holding it has loaded."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, 15).until(
        expected_conditions.presence_of_element_located((By.ID, element_id))
    )


@pytest.mark.django_db(transaction=True)
def test_a_player_consents_in_vietnamese_and_the_app_gets_a_working_code(
    browser, live_server, live_app, make_user
) -> None:
    from selenium.webdriver.common.by import By

    # given a player, and an app asking for `read bot:play` with the page in Vietnamese
    make_user(username="hoa", password=PASSWORD)
    verifier = start(browser, live_server, live_app, "read bot:play", "vi")

    # then after signing in the consent page names the app and each scope, in Vietnamese
    title = browser.find_element(By.ID, "consent-title").text
    assert title == "Cho phép Bàn Phụ Tá thay bạn hành động?"
    listed = [
        e.get_attribute("data-scope")
        for e in browser.find_elements(By.CSS_SELECTOR, "#consent-scopes li")
    ]
    assert listed == ["read", "bot:play"]
    descriptions = browser.find_element(By.ID, "consent-scopes").text
    assert "Chơi các ván ở những bàn tôi đang ngồi" in descriptions
    assert browser.find_element(By.ID, "consent-allow").text == "Cho phép"
    # styled: the table's green header, the admin's fonts
    header = browser.find_element(By.CSS_SELECTOR, ".oauth-header")
    assert header.value_of_css_property("background-color") in (
        "rgba(31, 95, 58, 1)",
        "rgb(31, 95, 58)",
    )
    badges_unclipped(browser)
    screenshot(browser, "oauth-consent-vi")

    # when the player allows it
    browser.find_element(By.ID, "consent-allow").click()

    # then the browser lands on the app's redirect with a code and the state, and the code
    # buys a token
    landed = landed_on(browser, "/callback")
    query = parse_qs(landed.query)
    assert query["state"] == ["s-123"]
    response = trade_live(live_app, query["code"][0], verifier, live_server)
    assert response.status_code == 200, response.content
    assert set(response.json()["scope"].split()) == {"read", "bot:play"}


@pytest.mark.django_db(transaction=True)
def test_the_english_page_and_refusing(browser, live_server, live_app, make_user) -> None:
    from selenium.webdriver.common.by import By

    make_user(username="hoa", password=PASSWORD)
    start(browser, live_server, live_app, "read", "en")
    assert browser.find_element(By.ID, "consent-title").text == "Allow Bàn Phụ Tá to act for you?"
    badges_unclipped(browser)
    screenshot(browser, "oauth-consent-en")
    browser.find_element(By.ID, "consent-deny").click()
    query = parse_qs(landed_on(browser, "/callback").query)
    assert query["error"] == ["access_denied"]
    assert "code" not in query


def badges_unclipped(browser: Any) -> None:
    """Each scope's badge shows its whole name: no scrollbar, nothing cut off."""
    sizes = browser.execute_script(
        "return [...document.querySelectorAll('#consent-scopes code')].map(c => ["
        "c.textContent, c.scrollWidth, c.clientWidth, c.scrollHeight, c.clientHeight])"
    )
    assert sizes, "no scope badge"
    for name, scroll_w, client_w, scroll_h, client_h in sizes:
        assert scroll_w <= client_w and scroll_h <= client_h, (name, sizes)


def trade_live(app: Any, code: str, verifier: str, live_server: Any) -> Any:
    """The app's server trades the code (its redirect URI is the live server's)."""
    from django.test import Client

    return Client().post(
        "/oauth/token/",
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": f"{live_server.url}/callback",
            "client_id": app.client_id,
            "code_verifier": verifier,
        },
    )
