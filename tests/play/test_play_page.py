"""/play/, the reference web client (clients/web), in a real headless Chromium against the ASGI
server (uvicorn: live event streams) and a Celery worker (the clock that moves the bots): a new
player signs up, opens a practice table with three server bots and plays a whole hand through the
page's buttons to its settlement screen, then the next hand's deal; no console error, no request
to another host, no serious or critical axe-core violation on the lobby, the table and the result.

Screenshots (phone 390 × 844 and desktop) go to ``tmp/artifacts/play/`` (or
``$CHAN_TEST_ARTIFACTS``), kept by CI, never committed.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from games.models import Hand, Table
from tests.games.browser import headless_chromium
from tests.games.test_games_tasks import broker_env, worker, worker_log  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("CHAN_TEST_ARTIFACTS", "tmp/artifacts")) / "play"
AXE = ROOT / "clients" / "web" / "node_modules" / "axe-core" / "axe.min.js"
RED_CODES = {"CC", "8V", "8S", "9V", "9S"}
SUITS = {"V": "Vạn", "N": "Văn", "S": "Sách"}
RANKS = {2: "Nhị", 3: "Tam", 4: "Tứ", 5: "Ngũ", 6: "Lục", 7: "Thất", 8: "Bát", 9: "Cửu"}
VIETNAMESE_NAMES = {
    "CC": "Chi Chi",
    **{f"{r}{s}": f"{RANKS[r]} {n}" for r in RANKS for s, n in SUITS.items()},
}
PHONE, DESKTOP = (390, 844), (1280, 900)
# The page's moves in the order a simple player prefers them (a win first, a discard last).
PREFERENCE = ["u", "chiu", "eat", "draw", "pass", "tra_cua"]


def wait_until(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except Exception:  # the page redraws under the driver (a stale element): look again
            value = None
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def find(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def shot(driver: Any, name: str, size: tuple[int, int]) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.set_window_size(*size)
    time.sleep(0.2)  # the layout after the resize
    driver.save_screenshot(str(ARTIFACTS / f"{name}-{size[0]}x{size[1]}.png"))


def axe_violations(driver: Any) -> list[dict[str, Any]]:
    """The serious and critical violations axe-core (from npm, run in the page) finds."""
    driver.execute_script(AXE.read_text())
    driver.set_script_timeout(60)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations),"
        " e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));"
    )
    return [
        {"id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": len(v["nodes"])}
        for v in result
        if v["impact"] in ("serious", "critical")
    ]


def play_one_move(driver: Any) -> bool:
    """Make one of the moves the page offers (declaring with the picker when asked); false when
    it offers none."""
    picker = find(driver, "#declare")
    if picker:
        boxes = find(driver, "#declare input[type=checkbox]")
        if boxes and not boxes[0].is_selected():
            boxes[0].click()  # xướng Xuông: the server judges it, whatever the hand has
        find(driver, "#declare-send")[0].click()
        return True
    offered = {b.get_attribute("data-move"): b for b in find(driver, "#moves button[data-move]")}
    for kind in PREFERENCE:
        if kind in offered:
            offered[kind].click()
            return True
    cards = find(driver, ".card-button[data-suggested]") or find(driver, ".card-button")
    if cards:
        cards[0].click()
        return True
    return False


def requests_of(driver: Any) -> list[str]:
    """Every URL the page requested (the performance log's requestWillBeSent)."""
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


@pytest.mark.slow(seconds=120)
@pytest.mark.django_db(transaction=True)
def test_a_new_player_plays_a_practice_hand_to_its_settlement_and_the_next_deal(
    web_node,
    asgi_live_server,
    worker,  # noqa: F811
) -> None:
    base = asgi_live_server.url
    with headless_chromium(performance_log=True, console_log=True) as driver:
        # Given the page at /play/, a new player signs up,
        driver.get(f"{base}/play/")
        wait_until(lambda: find(driver, "#auth"), 20, "the sign-up form")
        find(driver, "#username")[0].send_keys("lan")
        find(driver, "#password")[0].send_keys("a long enough password 7")
        find(driver, "#auth-submit")[0].click()
        balance = wait_until(lambda: find(driver, "#balance"), 20, "the lobby")[0]
        assert "Quan" in balance.text  # my balance, in Vietnamese first
        assert driver.execute_script("return localStorage.getItem('chan.play.token')")
        shot(driver, "lobby", PHONE)
        lobby_violations = axe_violations(driver)
        shot(driver, "lobby", DESKTOP)

        # when it opens a practice table with three server bots that move at once,
        find(driver, "#bot-delay option[value='0']")[0].click()
        find(driver, "#practice")[0].click()
        wait_until(lambda: find(driver, "#hand .cards svg.card"), 30, "the deal")
        table = Table.objects.get()
        assert table.practice and table.seats.filter(player__is_bot=True).count() == 3
        first = Hand.objects.get(table=table)
        # (each card drawn by the page: its Vietnamese name for screen readers, red in red)
        cards = driver.execute_script(
            "return [...document.querySelectorAll('#hand svg.card')].map(s =>"
            " [s.dataset.card, s.getAttribute('aria-label'), s.classList.contains('red'),"
            " s.querySelector('title').textContent])"
        )
        assert len(cards) in (19, 20)
        for code, label, red, title in cards:
            assert label == title == VIETNAMESE_NAMES[code]
            assert red == (code in RED_CODES)
        assert len(find(driver, "#seats > li")) == 4 and find(driver, "#stock")
        table_violations = axe_violations(driver)

        # and plays whatever the page offers it, by its buttons, until the hand ends,
        moves, shots = 0, set()
        deadline = time.monotonic() + 240
        while not find(driver, "#result"):
            assert time.monotonic() < deadline, worker_log(worker)
            try:
                if find(driver, "#moves .move-buttons") and "playing" not in shots:
                    shot(driver, "table", PHONE)
                    shot(driver, "table", DESKTOP)
                    shots.add("playing")
                moves += play_one_move(driver)
            except Exception:  # the page redrew under the click: look again
                pass
            time.sleep(0.15)

        # then the result screen shows the outcome and, once booked, the practice's no-Quan line,
        wait_until(lambda: find(driver, "#quan"), 30, "the settlement's Quan")
        first.refresh_from_db()
        assert first.status == Hand.Status.ENDED and first.settled_at is not None
        outcome = find(driver, "#outcome")[0].text
        assert outcome in ("Ù", "Ù láo", "Hòa (hết nọc)"), outcome
        if first.events.filter(type="declare").exists():
            assert find(driver, "#verdict") and find(driver, "#true-cuoc")
        assert (
            moves > 0
            and first.events.filter(bot=False, system=False, actor_seat__isnull=False).exists()
        )
        shot(driver, "result", PHONE)
        result_violations = axe_violations(driver)
        shot(driver, "result", DESKTOP)

        # and the next hand is dealt from the result screen's button.
        find(driver, "#next-hand")[0].click()
        wait_until(lambda: Hand.objects.filter(table=table).count() == 2, 30, "the next deal")
        second = Hand.objects.filter(table=table).order_by("-number").first()
        wait_until(
            lambda: (
                f"Ván {second.number}" in find(driver, "h1")[0].text
                and find(driver, "#hand svg.card")
            ),
            30,
            "the next hand on the page",
        )
        shot(driver, "next-hand", PHONE)

        # The stream was the hand's SSE (uvicorn serves it live), nothing came from elsewhere,
        transport = find(driver, "#transport")[0].text
        assert transport == "Luồng sự kiện (SSE)", transport
        # (the browser's own chrome:// pages aside, and the data: icon)
        urls = [urlsplit(u) for u in requests_of(driver)]
        hosts = {u.netloc for u in urls if u.scheme not in ("chrome", "data")}
        assert hosts == {urlsplit(base).netloc}, hosts
        # the console stayed clean, and axe found nothing serious on the lobby and the table.
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
        assert lobby_violations == [] and table_violations == [] and result_violations == []


def human_moves(hand: Hand) -> int:
    return hand.events.filter(bot=False, system=False, actor_seat__isnull=False).count()


@pytest.mark.slow(seconds=60)
@pytest.mark.django_db(transaction=True)
def test_in_english_by_keyboard_on_long_polls_where_streams_end_at_once(
    web_node,
    live_server,
    worker,  # noqa: F811
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    with headless_chromium(console_log=True) as driver:
        # Given the WSGI server (its streams send what there is and end), a player who signs up
        # and turns the page to English,
        driver.get(f"{live_server.url}/play/")
        wait_until(lambda: find(driver, "#auth"), 20, "the sign-up form")
        find(driver, "#username")[0].send_keys("minh")
        find(driver, "#password")[0].send_keys("a long enough password 7")
        find(driver, "#auth-submit")[0].click()
        wait_until(lambda: find(driver, "#balance"), 20, "the lobby")
        find(driver, "#lang")[0].click()
        wait_until(lambda: find(driver, "#wallet dt")[0].text == "Balance", 10, "English")
        assert find(driver, "h1")[0].text.startswith("Lobby")
        assert driver.execute_script("return document.documentElement.lang") == "en"
        # when it opens a practice table and plays by keys alone (B draws, D passes, U wins,
        # Q discards the suggested card),
        find(driver, "#bot-delay option[value='0']")[0].click()
        find(driver, "#practice")[0].click()
        wait_until(lambda: find(driver, "#hand .cards svg.card"), 30, "the deal")
        hand = Hand.objects.get(table=Table.objects.get())
        deadline = time.monotonic() + 90
        while human_moves(hand) < 3 and hand.status == Hand.Status.PLAYING:
            assert time.monotonic() < deadline, worker_log(worker)
            offered = {
                b.get_attribute("data-move") for b in find(driver, "#moves button[data-move]")
            }
            key = next(
                (k for k, m in (("u", "u"), ("b", "draw"), ("d", "pass")) if m in offered), None
            )
            if key is None and find(driver, ".card-button"):
                key = "q"
            if key:
                ActionChains(driver).send_keys(key).perform()
            time.sleep(0.3)
            hand.refresh_from_db()
        # then its moves reach the server, the others' moves reach the page by long polls (its
        # turn came back three times), all in English, with a clean console.
        assert human_moves(hand) >= (1 if hand.status == Hand.Status.ENDED else 3)
        transport = find(driver, "#transport")[0].text
        assert transport == "Long poll", transport
        assert "My cards" in find(driver, "#hand-title")[0].text
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []


def sign_up(driver: Any, base: str, username: str) -> None:
    driver.get(f"{base}/play/")
    wait_until(lambda: find(driver, "#auth"), 20, "the sign-up form")
    find(driver, "#username")[0].send_keys(username)
    find(driver, "#password")[0].send_keys("a long enough password 7")
    find(driver, "#auth-submit")[0].click()
    wait_until(lambda: find(driver, "#balance"), 20, "the lobby")


@pytest.mark.slow(seconds=150)
@pytest.mark.django_db(transaction=True)
def test_two_browser_players_play_a_hand_at_a_real_table(
    web_node,
    asgi_live_server,
    worker,  # noqa: F811
) -> None:
    base = asgi_live_server.url
    with (
        headless_chromium(console_log=True) as lan,
        headless_chromium(console_log=True, extra_args=["--window-size=390,844"]) as minh,
    ):
        # Given two players signed up, one on a desktop and one on a phone, the first opens a
        # two-seat table in Nền đất at a stake of 1 Quan a point,
        sign_up(lan, base, "lan")
        sign_up(minh, base, "minh")
        find(lan, "#max-seats option[value='2']")[0].click()
        find(lan, "#create")[0].click()
        wait_until(lambda: find(lan, "#waiting-seats"), 20, "the table's waiting room")
        table = Table.objects.get()
        assert (table.practice, table.room_id, table.stake, table.max_seats) == (
            False,
            "nen-dat",
            1,
            2,
        )
        # and the second finds it among the open tables (read again) and sits down,
        minh.refresh()
        join = wait_until(
            lambda: find(minh, f"#open-tables button[data-table='{table.pk}']"), 20, "the table"
        )
        join[0].click()
        # when both, ready, are dealt a hand and play it by the page's buttons,
        for driver in (lan, minh):
            wait_until(lambda d=driver: find(d, "#hand .cards svg.card"), 30, "the deal")
        hand = Hand.objects.get(table=table)
        deadline = time.monotonic() + 300
        while not (find(lan, "#result") and find(minh, "#result")):
            assert time.monotonic() < deadline, worker_log(worker)
            for driver in (lan, minh):
                with contextlib.suppress(Exception):  # the page redrew under the click
                    play_one_move(driver)
            time.sleep(0.15)
        # then both see the result and, once booked, each seat's Quan,
        for driver in (lan, minh):
            wait_until(lambda d=driver: find(d, "#quan li"), 30, "the Quan of the settlement")
        hand.refresh_from_db()
        assert hand.status == Hand.Status.ENDED and hand.settled_at is not None
        seats = {
            e.actor_seat
            for e in hand.events.filter(bot=False, system=False).exclude(actor_seat=None)
        }
        assert seats == {0, 1}  # both played through their pages
        assert len(find(lan, "#quan li")) == len(find(minh, "#quan li")) == 2  # each seat's net
        shot(lan, "real-table-result", DESKTOP)
        shot(minh, "real-table-result", PHONE)
        # and the next hand is dealt once both say so.
        for driver in (lan, minh):
            find(driver, "#next-hand")[0].click()
        wait_until(lambda: Hand.objects.filter(table=table).count() == 2, 30, "the next deal")
        for driver in (lan, minh):
            wait_until(
                lambda d=driver: "Ván 2" in find(d, "h1")[0].text and find(d, "#hand svg.card"),
                30,
                "hand 2",
            )
            assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
