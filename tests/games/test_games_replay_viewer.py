"""The replay viewer in the admin (``/admin/games/hand/<id>/replay/``): auditors only, every
event of a hand stepped through in a real headless browser (Debian's chromium and
chromedriver, driven by Selenium).

Screenshots go to ``tmp/artifacts/`` (or ``$CHAN_TEST_ARTIFACTS``), kept by CI, never committed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from games.models import Hand, HandEvent
from games.services.quan_booking import hand_settle
from tests.games.browser import headless_chromium
from tests.games.test_games_hands_api import play_to_end

ARTIFACTS = Path(os.environ.get("CHAN_TEST_ARTIFACTS", "tmp/artifacts"))


def staff_user(make_user, username: str, *, auditor: bool):
    user, _ = make_user(username=username, is_staff=True)
    perms = Permission.objects.filter(content_type__app_label="games", codename="view_hand")
    user.user_permissions.set(perms)
    if auditor:
        user.user_permissions.add(Permission.objects.get(codename="audit_hands"))
    return user


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def replay_data(body: str) -> dict[str, Any]:
    found = re.search(
        r'<script id="replay-data" type="application/json">(.*?)</script>', body, re.S
    )
    assert found, "no replay data on the page"
    return json.loads(found.group(1))


@pytest.fixture
def ended_hand(players, win_hand) -> int:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    return win_hand["hand"]


@pytest.mark.django_db
def test_auditors_open_the_replay_and_other_staff_get_403(make_user, players, ended_hand) -> None:
    auditor = client_for(staff_user(make_user, "auditor", auditor=True))
    clerk = client_for(staff_user(make_user, "clerk", auditor=False))
    url = f"/admin/games/hand/{ended_hand}/replay/"
    assert clerk.get(url).status_code == 403
    assert Client().get(url).status_code == 302  # to the admin login
    r = auditor.get(url)
    assert r.status_code == 200
    data = replay_data(r.content.decode())
    # every event is a step, with every seat's hand face up and the players by username,
    seqs = list(HandEvent.objects.filter(hand_id=ended_hand).values_list("seq", flat=True))
    assert [s["seq"] for s in data["steps"]] == seqs
    assert data["players"] == [
        s.user.username for s in Hand.objects.get(pk=ended_hand).hand_seats.order_by("position")
    ]
    first = data["steps"][0]["view"]
    assert all(len(seat["hand"]) > 0 for seat in first["seats"])
    # and the last step holds the verdict and the booked Quan.
    assert data["steps"][-1]["view"]["outcome"] is not None
    assert data["quan"] == Hand.objects.get(pk=ended_hand).quan
    # The hand's admin page links the replay for auditors, not for other staff.
    assert url in auditor.get(f"/admin/games/hand/{ended_hand}/change/").content.decode()
    assert url not in clerk.get(f"/admin/games/hand/{ended_hand}/change/").content.decode()


@pytest.mark.django_db
def test_a_new_fault_is_flagged_at_the_step_of_its_move(make_user, ended_hand) -> None:
    auditor = client_for(staff_user(make_user, "auditor", auditor=True))
    data = replay_data(auditor.get(f"/admin/games/hand/{ended_hand}/replay/").content.decode())
    for i, step in enumerate(data["steps"]):
        for fault in step["new_faults"]:
            seat = step["view"]["seats"][fault["seat"]]
            assert fault["slug"] in [f["slug"] for f in seat["faults"]]
            if i:
                earlier = data["steps"][i - 1]["view"]["seats"][fault["seat"]]["faults"]
                assert len(earlier) < len(seat["faults"])


# --------------------------------------------------------------------------- the browser


@pytest.fixture
def browser() -> Iterator[Any]:
    with headless_chromium() as driver:
        yield driver


def screenshot(driver: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def text(driver: Any, element_id: str) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id).text


@pytest.mark.django_db(transaction=True)
def test_the_replay_steps_forward_and_back_in_a_real_browser(
    browser, live_server, make_user, players, ended_hand
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    # Given an auditor signed in (the session cookie of a forced login),
    auditor = client_for(staff_user(make_user, "auditor", auditor=True))
    browser.get(f"{live_server.url}/admin/login/")
    browser.add_cookie({"name": "sessionid", "value": auditor.cookies["sessionid"].value})
    hand = Hand.objects.get(pk=ended_hand)
    names = [s.user.username for s in hand.hand_seats.order_by("position")]
    last_seq = hand.seq
    events = {e.seq: e.payload for e in HandEvent.objects.filter(hand_id=hand.pk)}

    # when it opens the replay, the deal is drawn: every player by name, every hand face up,
    browser.get(f"{live_server.url}/admin/games/hand/{hand.pk}/replay/?lang=en")
    assert text(browser, "replay-seq") == f"Event 0 of {last_seq}"
    board = text(browser, "replay-seats")
    assert all(name in board for name in names)
    hands = browser.find_elements(By.CSS_SELECTOR, ".seat-hand svg.card")
    assert len(hands) >= 4 * 8
    assert text(browser, "replay-stock").isdigit()
    screenshot(browser, "replay-deal")

    # stepping forward shows the first move and the card it played,
    browser.find_element(By.ID, "replay-next").click()
    assert text(browser, "replay-seq") == f"Event 1 of {last_seq}"
    card = events[1]["card"]
    assert card in text(browser, "replay-event")
    offer = browser.find_element(By.CSS_SELECTOR, "#replay-offer svg.card")
    assert offer.get_attribute("data-card") == card
    assert "seq=1" in browser.current_url
    browser.find_element(By.ID, "replay-next").click()
    assert text(browser, "replay-seq") == f"Event 2 of {last_seq}"
    # back with the previous button and the arrow keys,
    browser.find_element(By.ID, "replay-prev").click()
    assert text(browser, "replay-seq") == f"Event 1 of {last_seq}"
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    assert text(browser, "replay-seq") == f"Event 2 of {last_seq}"
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_LEFT)
    assert text(browser, "replay-seq") == f"Event 1 of {last_seq}"
    assert not browser.find_element(By.ID, "replay-end").is_displayed()

    # the last step shows the verdict, the cước and the Quan,
    browser.find_element(By.ID, "replay-last").click()
    assert text(browser, "replay-seq") == f"Event {last_seq} of {last_seq}"
    assert browser.find_element(By.ID, "replay-end").is_displayed()
    winner = names[hand.result["outcome"]["seat"]]
    assert winner in text(browser, "replay-verdict")
    assert text(browser, "replay-cuoc") not in ("", "—")
    assert "net" in text(browser, "replay-quan")
    screenshot(browser, "replay-end")

    # the slider moves to any step, and a ?seq= link opens at that step, in Vietnamese too.
    browser.execute_script(
        "var s = document.getElementById('replay-slider'); s.value = '3';"
        "s.dispatchEvent(new Event('input'));"
    )
    assert text(browser, "replay-seq") == f"Event 3 of {last_seq}"
    browser.get(f"{live_server.url}/admin/games/hand/{hand.pk}/replay/?seq=2&lang=vi")
    assert text(browser, "replay-seq") == f"Nước 2 / {last_seq}"
    assert "Nọc" in browser.find_element(By.ID, "replay-center").text
    browser.find_element(By.ID, "replay-first").click()
    assert text(browser, "replay-seq") == f"Nước 0 / {last_seq}"
    screenshot(browser, "replay-vi")
