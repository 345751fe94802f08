"""The replay viewer in the admin (``/admin/games/hand/<id>/replay/``): auditors only, every
event of a hand stepped through in a real headless browser (Debian's chromium and
chromedriver, driven by Selenium). A disputed hand (advanced mode: a hidden fault at seq 2, a
wrong declaration at the end) shows the declared and the true cước with their points, the
mover's legal moves and its choice at each step, the fault at its step, the ledger entries,
zoned times and the winning card, in English and Vietnamese (``?lang`` or Accept-Language).

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

from accounts.models import LedgerEntry
from games.hand_store import hand_replay
from games.models import Hand, HandEvent, Room
from games.rules.engine import can_win
from games.services.quan_booking import hand_settle, settlement_key
from games.services.rooms import XUONG_SAI_FEES
from tests.games.browser import headless_chromium
from tests.games.decks import WIN_DECK, WIN_SEAT, scripted_move
from tests.games.test_games_hands_api import hand_view, play_to_end, post_move

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


# The disputed hand: the dealer discards 3V, seat 1 eats it with 3S while holding 3V 3N (treo
# tranh, a hidden fault, at seq 2); seat 2 wins on 9V and declares Chì it does not have.
FAULT_SEQ, FAULT_SLUG, WIN_CARD = 2, "treo_tranh", "9V"
WRONG_DECLARATION = {"xuong": 1, "chi": 1}


@pytest.fixture
def disputed_hand(players, start_hand) -> int:
    # In a room where a xướng sai is settled (it pays the table), so the ledger moves.
    fees = {"declared": 5, "auto": 10, "xuong_sai": XUONG_SAI_FEES}
    Room.objects.filter(slug="nen-dat").update(xuong_sai_settled=True, fees=fees)
    hand = start_hand(WIN_DECK, mode="advanced")
    assert post_move(players[0], hand, {"type": "discard", "card": "3V"}).status_code == 201
    eat = {"type": "eat", "card": "3V", "with": "3S"}
    assert post_move(players[1], hand, eat).status_code == 201
    for _ in range(200):
        view = hand_view(players[0], hand)
        if view["phase"] == "declare":
            break
        turn = view["turn_seat"]
        legal = hand_view(players[turn], hand)["legal_moves"]
        if not can_win(hand_replay(Hand.objects.get(pk=hand["hand"])), turn):
            legal = [m for m in legal if m["type"] != "u"]  # advanced mode accepts ù láo
        assert post_move(players[turn], hand, scripted_move(legal)).status_code == 201
    declare = {"type": "declare", "cuoc": WRONG_DECLARATION}
    assert post_move(players[WIN_SEAT], hand, declare).status_code == 201
    hand_settle(hand_id=hand["hand"])
    return hand["hand"]


@pytest.mark.django_db
def test_the_dispute_data_holds_the_cuoc_table_legal_moves_faults_ledger_and_zoned_times(
    make_user, disputed_hand
) -> None:
    auditor = client_for(staff_user(make_user, "auditor", auditor=True))
    data = replay_data(auditor.get(f"/admin/games/hand/{disputed_hand}/replay/").content.decode())
    steps = {s["seq"]: s for s in data["steps"]}
    # The mover's legal moves before its move, the chosen one among them (the faulty eat too:
    # advanced mode lists it),
    eat = steps[FAULT_SEQ]
    assert {"type": "eat", "card": "3V", "with": "3S"} in eat["legal"]["moves"]
    assert {"type": "draw"} in eat["legal"]["moves"] and eat["legal"]["chosen_legal"] is True
    assert steps[0]["legal"] == {"moves": [], "chosen_legal": None}  # the deal
    moves = [s for s in data["steps"] if s["seq"] > 0 and s["type"] not in ("settled", "voided")]
    assert moves and all(s["legal"]["moves"] and s["legal"]["chosen_legal"] for s in moves)
    # the hidden fault at the step it was made, and nowhere else,
    assert eat["new_faults"] == [{"seat": 1, "slug": FAULT_SLUG, "visible": False, "move": 1}]
    assert all(not s["new_faults"] for q, s in steps.items() if q != FAULT_SEQ)
    # the declared and the true cước, a row per cước either names, with điểm and dịch,
    cuoc = data["cuoc"]
    rows = {r["slug"]: r for r in cuoc["rows"]}
    assert set(rows) == {"xuong", "chi"}
    assert (rows["chi"]["declared"], rows["chi"]["true"], rows["chi"]["match"]) == (1, 0, False)
    assert rows["chi"]["diem"] > 0 and rows["chi"]["dich"] > 0
    assert cuoc["verdict"] == "sai" and cuoc["true_score"] == {"base": 2, "ga": 0, "total": 2}
    assert cuoc["declared_score"]["total"] > cuoc["true_score"]["total"]
    # the winning card, the ledger entries of the settlement (they sum to zero),
    assert data["win"]["card"] == WIN_CARD and data["win"]["seat"] == WIN_SEAT
    booked = LedgerEntry.objects.filter(transaction__idempotency_key=settlement_key(disputed_hand))
    assert [e["amount"] for e in data["ledger"]] == list(
        booked.order_by("id").values_list("amount", flat=True)
    )
    assert data["ledger"] and sum(e["amount"] for e in data["ledger"]) == 0
    assert {e["purpose"] for e in data["ledger"]} == {"settlement"}
    # and every time in Asia/Ho_Chi_Minh with its offset, beside UTC.
    at = eat["at"]
    assert (at["zone"], at["offset"]) == ("Asia/Ho_Chi_Minh", "UTC+07:00")
    assert (
        at["utc"].endswith("Z") and at["local"][11:13] == f"{(int(at['utc'][11:13]) + 7) % 24:02}"
    )
    assert data["ended"]["zone"] == "Asia/Ho_Chi_Minh"


@pytest.mark.django_db
def test_a_voided_hand_lists_its_reversal_and_the_selector_only_reads(
    make_user, disputed_hand
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from games.selectors.replay import hand_replay_steps
    from games.services.void import hand_void

    staff = staff_user(make_user, "auditor", auditor=True)
    hand_void(hand_id=disputed_hand, staff=staff, reason="collusion")
    hand = Hand.objects.select_related("table", "room").get(pk=disputed_hand)
    with CaptureQueriesContext(connection) as queries:
        data = hand_replay_steps(hand)
    assert all(q["sql"].lstrip().upper().startswith("SELECT") for q in queries.captured_queries)
    assert len(queries.captured_queries) <= 4  # the events, the seats, the ledger entries
    by_purpose: dict[str, list[int]] = {}
    for entry in data["ledger"]:
        by_purpose.setdefault(entry["purpose"], []).append(entry["amount"])
    assert sorted(by_purpose["void"]) == sorted(-a for a in by_purpose["settlement"])
    assert data["voided"]["zone"] == "Asia/Ho_Chi_Minh" and data["void_reason"].startswith(
        "collusion"
    )
    assert data["steps"][-1]["type"] == "voided" and data["steps"][-1]["legal"]["moves"] == []


@pytest.mark.django_db
def test_a_hoa_has_no_cuoc_table_and_no_winning_card(make_user, players, hoa_hand) -> None:
    play_to_end(players, hoa_hand)
    auditor = client_for(staff_user(make_user, "auditor", auditor=True))
    page = auditor.get(f"/admin/games/hand/{hoa_hand['hand']}/replay/")
    data = replay_data(page.content.decode())
    assert data["cuoc"] is None and data["win"] is None and data["ledger"] == []
    assert data["steps"][-1]["view"]["outcome"] == {"result": "hoa"}


@pytest.mark.django_db
def test_the_labels_come_from_the_catalogue_in_the_pages_language(make_user, ended_hand) -> None:
    auditor = client_for(staff_user(make_user, "auditor", auditor=True))
    url = f"/admin/games/hand/{ended_hand}/replay/"

    def labels(response) -> dict[str, Any]:
        found = re.search(
            r'<script id="replay-labels" type="application/json">(.*?)</script>',
            response.content.decode(),
            re.S,
        )
        assert found, "no labels on the page"
        return json.loads(found.group(1))

    en, vi = labels(auditor.get(url, {"lang": "en"})), labels(auditor.get(url, {"lang": "vi"}))
    assert (en["ledger"], vi["ledger"]) == ("Ledger entries", "Bút toán sổ cái")
    assert (en["win_card"], vi["win_card"]) == ("Winning card", "Quân ù")
    assert vi["cuoc_names"]["thien_khai"] == "Thiên khai" and vi["moves"]["draw"] == "bốc"
    assert vi["faults"][FAULT_SLUG] != en["faults"][FAULT_SLUG]
    assert set(en) == set(vi) and all(en[k] for k in en)
    # Accept-Language picks the language when ?lang does not.
    assert labels(auditor.get(url, HTTP_ACCEPT_LANGUAGE="vi"))["seq"] == "Nước"


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


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


@pytest.mark.django_db(transaction=True)
def test_a_disputed_hand_in_a_real_browser(browser, live_server, make_user, disputed_hand) -> None:
    from selenium.webdriver.common.by import By

    auditor = client_for(staff_user(make_user, "auditor", auditor=True))
    browser.get(f"{live_server.url}/admin/login/")
    browser.add_cookie({"name": "sessionid", "value": auditor.cookies["sessionid"].value})
    hand = Hand.objects.get(pk=disputed_hand)
    url = f"{live_server.url}/admin/games/hand/{hand.pk}/replay/"

    # At the faulty eat: the mover's legal moves with its choice marked, the hidden fault marked
    # at its step (and on the fault strip under the slider), the time with its zone.
    browser.get(url + f"?lang=en&seq={FAULT_SEQ}")
    assert text(browser, "replay-seq") == f"Event {FAULT_SEQ} of {hand.seq}"
    chosen = css(browser, "#replay-legal-moves li.legal-chosen")
    assert [li.get_attribute("data-move") for li in chosen] == ["eat:3V+3S"]
    assert "chosen" in chosen[0].text
    assert "draw" in [
        li.get_attribute("data-move") for li in css(browser, "#replay-legal-moves li")
    ]
    assert "Legal moves of the mover" in text(browser, "replay-legal")
    marker = css(browser, "#replay-faults .fault-marker")
    assert [m.get_attribute("data-fault") for m in marker] == [FAULT_SLUG]
    assert "fault-hidden" in marker[0].get_attribute("class") and "hidden" in marker[0].text
    assert [b.get_attribute("data-seq") for b in css(browser, "#replay-marks .fault-mark")] == [
        str(FAULT_SEQ)
    ]
    zoned = text(browser, "replay-time")
    assert "(Asia/Ho_Chi_Minh, UTC+07:00)" in zoned
    assert browser.find_element(By.ID, "replay-time").get_attribute("datetime").endswith("Z")
    screenshot(browser, "replay-dispute-fault")
    # A step without a fault shows none; the fault strip opens the fault's step.
    browser.find_element(By.ID, "replay-next").click()
    assert not browser.find_element(By.ID, "replay-faults").is_displayed()
    css(browser, "#replay-marks .fault-mark")[0].click()
    assert text(browser, "replay-seq") == f"Event {FAULT_SEQ} of {hand.seq}"

    # At the declaration: the auto-declaration the rules core lists, and the declaration made.
    declared_at = HandEvent.objects.get(hand_id=hand.pk, type="declare").seq
    browser.get(url + f"?lang=en&seq={declared_at}")
    chosen = css(browser, "#replay-legal-moves li.legal-chosen")
    assert len(chosen) == 1 and "Xuông, Chì" in chosen[0].text
    assert len(css(browser, "#replay-legal-moves li")) == 2

    # At the end: the winning card, the declared and the true cước with their points and the
    # verdict, the Quan and the ledger entries.
    browser.find_element(By.ID, "replay-last").click()
    assert css(browser, "#replay-win-card svg.card")[0].get_attribute("data-card") == WIN_CARD
    chi = css(browser, '.cuoc-table tr[data-cuoc="chi"] td')
    assert [c.text for c in chi[:3]] == ["Chì", "1", "0"]
    assert "cuoc-mismatch" in css(browser, '.cuoc-table tr[data-cuoc="chi"]')[0].get_attribute(
        "class"
    )
    assert css(browser, ".cuoc-true-score")[0].text == "2 + 0 = 2"
    assert text(browser, "replay-cuoc").count("Sai:") == 1
    entries = css(browser, ".ledger-table tr.ledger-entry")
    booked = LedgerEntry.objects.filter(transaction__idempotency_key=settlement_key(hand.pk))
    assert len(entries) == booked.count() > 0
    names = [s.user.username for s in hand.hand_seats.order_by("position")]
    # (the winner's xướng sai pays the table: its wallet's entry is its net, negative)
    winner_entry = next(e for e in entries if names[WIN_SEAT] in e.text)
    net = hand.quan["seats"][WIN_SEAT]["net"]
    assert net < 0
    assert winner_entry.find_element(By.CSS_SELECTOR, ".ledger-amount").text == str(net)
    assert "Asia/Ho_Chi_Minh" in text(browser, "replay-ledger")
    assert "Asia/Ho_Chi_Minh" in text(browser, "replay-ended")
    screenshot(browser, "replay-dispute-end")

    # In Vietnamese by Accept-Language (no ?lang): every label from the catalogue.
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Accept-Language": "vi"}})
    browser.get(url + f"?seq={hand.seq}")
    assert text(browser, "replay-seq") == f"Nước {hand.seq} / {hand.seq}"
    end = text(browser, "replay-end")
    for label in ("Quân ù", "Đã xướng", "Thực có", "Bút toán sổ cái", "Kết thúc ván"):
        assert label in end
    assert "Sai: xướng cước không có trên bài" in end
    assert "Thời gian" in browser.find_element(By.ID, "replay").text
    assert f"Xem lại ván {hand.pk}" in browser.find_element(By.ID, "content").text
    browser.get(url + f"?seq={FAULT_SEQ}")
    assert "Các nước hợp lệ của người đi" in text(browser, "replay-legal")
    assert "ẩn" in css(browser, "#replay-faults .fault-marker")[0].text
    screenshot(browser, "replay-dispute-vi")


# --------------------------------------------------------------------------- tied named hands


@pytest.fixture
def tied_hand(named_tie_hand) -> int:
    """The thapthanh hand whose chì bạch thủ on 8V is both cá lội sân đình (the true cước) and
    cá nhảy đầu thuyền (tied in điểm and dịch), declared as the latter and booked."""
    hand = named_tie_hand({"ca_nhay_dau_thuyen": 1})
    hand_settle(hand_id=hand["hand"])
    return hand["hand"]


@pytest.mark.django_db
def test_the_cuoc_table_says_which_readings_were_equally_right(make_user, tied_hand) -> None:
    auditor = client_for(staff_user(make_user, "auditor", auditor=True))
    data = replay_data(auditor.get(f"/admin/games/hand/{tied_hand}/replay/").content.decode())
    cuoc = data["cuoc"]
    # The true cước names cá lội sân đình, cá nhảy đầu thuyền is as right as it,
    assert cuoc["equally_right"] == [{"ca_nhay_dau_thuyen": 1}]
    rows = {r["slug"]: r for r in cuoc["rows"]}
    assert set(rows) == {"ca_loi_san_dinh", "ca_nhay_dau_thuyen"}
    assert (rows["ca_loi_san_dinh"]["true"], rows["ca_nhay_dau_thuyen"]["true"]) == (1, 0)
    # and the declaration (cá nhảy) matches that reading row by row: đúng, 24 + 5 = 29.
    assert all(r["match"] for r in rows.values())
    assert (rows["ca_nhay_dau_thuyen"]["diem"], rows["ca_nhay_dau_thuyen"]["dich"]) == (24, 21)
    assert cuoc["verdict"] == "dung" and cuoc["declared_score"] == cuoc["true_score"]
    assert cuoc["true_score"] == {"base": 24, "ga": 5, "total": 29}


@pytest.mark.django_db(transaction=True)
def test_a_tied_named_hand_in_a_real_browser(browser, live_server, make_user, tied_hand) -> None:
    auditor = client_for(staff_user(make_user, "auditor", auditor=True))
    browser.get(f"{live_server.url}/admin/login/")
    browser.add_cookie({"name": "sessionid", "value": auditor.cookies["sessionid"].value})
    url = f"{live_server.url}/admin/games/hand/{tied_hand}/replay/"
    # At the end the cước table shows the reading as right as the true cước, in both languages.
    browser.get(url + "?lang=en")
    browser.find_element("id", "replay-last").click()
    [line] = css(browser, ".cuoc-equally-right")
    assert line.text == (
        "Equally right (named hands tied in điểm and dịch: declaring it is đúng):"
        " Cá nhảy đầu thuyền"
    )
    assert text(browser, "replay-cuoc").count("Đúng:") == 1
    assert not css(browser, ".cuoc-table tr.cuoc-mismatch")
    screenshot(browser, "replay-tied-named-hands")
    browser.get(url + "?lang=vi")
    browser.find_element("id", "replay-last").click()
    [line] = css(browser, ".cuoc-equally-right")
    assert line.text.startswith("Cũng đúng") and line.text.endswith(": Cá nhảy đầu thuyền")
