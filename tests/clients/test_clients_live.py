"""chan_client against the real app (pytest-django's live server on the test database): accounts,
tables, long polls with ETags, idempotent moves, a real 429, and two bots playing whole hands."""

from __future__ import annotations

import random
import re
import threading
import time
import uuid
from pathlib import Path

import chan_client.client
import pytest
from chan_client import ApiError, ChanClient, RetryLater, RetryPolicy
from chan_client.bot import Bot, choose_move

from games.hand_store import hand_store_problems
from games.models import Hand

pytestmark = pytest.mark.django_db(transaction=True)
PASSWORD = "a-long-enough-Passw0rd!"


def player(base: str, name: str) -> ChanClient:
    client = ChanClient(base)
    client.login_or_register(name, PASSWORD)
    return client


def seated_pair(base: str) -> tuple[ChanClient, ChanClient, int, int]:
    """Two players at a two-seat table with a dealt hand."""
    a, b = player(base, "client_a"), player(base, "client_b")
    table = a.create_table(name="clients", stake=10, max_seats=2)
    assert b.join(table["id"])["id"] == table["id"]
    assert a.ready(table["id"])["hand_id"] is None
    hand_id = b.ready(table["id"])["hand_id"]
    assert hand_id is not None
    return a, b, table["id"], hand_id


def test_login_or_register_registers_once_then_logs_in(live_server) -> None:
    first = player(live_server.url, "client_new")
    assert first.check()["username"] == "client_new"
    again = player(live_server.url, "client_new")
    assert again.token != first.token and again.me()["balance"] == first.me()["balance"]
    with pytest.raises(ApiError) as refused:
        ChanClient(live_server.url).login_or_register("client_new", "a-wrong-Passw0rd!!")
    assert (refused.value.status, refused.value.code) == (401, "invalid_credentials")


def test_a_crowd_of_new_players_behind_one_address_is_not_locked_out(live_server, settings) -> None:
    # Given the per-address lockout (10 failed logins) and no sign-up limit,
    settings.CHAN_SIGNUPS_PER_ADDRESS_PER_DAY = 0
    # when 12 new players from this one address log in or register (as 12 bots would),
    names = [f"crowd{i}" for i in range(12)]
    for name in names:
        player(live_server.url, name)
    # then none was locked out, and each logs in again afterwards.
    for name in names:
        assert player(live_server.url, name).check()["username"] == name


def test_login_or_register_past_the_sign_up_limit(live_server, settings) -> None:
    settings.CHAN_SIGNUPS_PER_ADDRESS_PER_DAY = 1
    known = player(live_server.url, "limit_known")  # the address's one sign-up
    assert player(live_server.url, "limit_known").me()["username"] == known.me()["username"]
    # (one attempt: the client would wait out the capped Retry-After of a 429 several times)
    with pytest.raises(ApiError) as refused:
        ChanClient(live_server.url, retry=RetryPolicy(attempts=1)).login_or_register(
            "limit_unknown", PASSWORD
        )
    assert (refused.value.status, refused.value.code) == (429, "signup_limit")


def test_a_retried_join_is_no_error(live_server) -> None:
    a, b, table_id, _ = seated_pair(live_server.url)
    assert [s["username"] for s in b.join(table_id)["seats"]] == ["client_a", "client_b"]


def test_a_long_poll_answers_304_when_nothing_happened_and_wakes_on_a_move(live_server) -> None:
    a, b, _, hand_id = seated_pair(live_server.url)
    views = {c: c.hand(hand_id) for c in (a, b)}
    mover = next(c for c, (v, _) in views.items() if v["legal_moves"])
    watcher = b if mover is a else a
    view, etag = views[watcher]
    assert etag == f'"{hand_id}-{view["seq"]}"'
    # Nothing happens for a second: 304, the view is unchanged.
    assert watcher.hand(hand_id, wait=1, after_seq=view["seq"], etag=etag) == (None, etag)
    # A move 0.5 s into a 10 s poll wakes it well before the end.
    woken: list[float] = []

    def watch() -> None:
        start = time.monotonic()
        fresh, _ = watcher.hand(hand_id, wait=10, after_seq=view["seq"], etag=etag)
        assert fresh is not None and fresh["seq"] == view["seq"] + 1
        woken.append(time.monotonic() - start)

    thread = threading.Thread(target=watch)
    thread.start()
    time.sleep(0.5)
    mine = views[mover][0]
    mover.move(hand_id, choose_move(mine, random.Random(0)), expected_seq=mine["seq"])
    thread.join(15)
    assert woken and woken[0] < 5, woken


def test_a_move_sent_twice_with_its_key_is_applied_once(live_server) -> None:
    a, b, _, hand_id = seated_pair(live_server.url)
    mover = next(c for c in (a, b) if c.hand(hand_id)[0]["legal_moves"])
    view, _ = mover.hand(hand_id)
    move = choose_move(view, random.Random(0))
    key = uuid.uuid4().hex
    first = mover.move(hand_id, move, expected_seq=view["seq"], idempotency_key=key)
    replay = mover.request(
        "POST",
        f"/api/v1/hands/{hand_id}/moves",
        json={**move, "expected_seq": view["seq"]},
        headers={"Idempotency-Key": key},
    )
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json()["seq"] == first["seq"] == view["seq"] + 1
    assert Hand.objects.get(pk=hand_id).seq == view["seq"] + 1
    # A stale expected_seq without the key is refused with the current seq.
    with pytest.raises(ApiError) as refused:
        mover.move(hand_id, move, expected_seq=view["seq"])
    assert refused.value.code in {"stale_seq", "not_your_turn"}


def test_a_throttled_login_waits_for_retry_after_then_gives_up(live_server, monkeypatch) -> None:
    # Given the server's login limit at 2 a minute,
    monkeypatch.setenv("THROTTLE_AUTH", "2/min")
    sleeps: list[float] = []
    client = ChanClient(
        live_server.url, retry=RetryPolicy(attempts=3, max_delay=60), sleep=sleeps.append
    )
    for _ in range(2):
        with pytest.raises(ApiError) as refused:
            client.login("client_nobody", PASSWORD)
        assert refused.value.code == "invalid_credentials"
    # when a third login is throttled, the client waits as told twice, then raises the 429.
    with pytest.raises(ApiError) as throttled:
        client.login("client_nobody", PASSWORD)
    assert (throttled.value.status, throttled.value.code) == (429, "throttled")
    retry_after = int(throttled.value.headers["Retry-After"])
    assert 1 <= retry_after <= 60
    assert len(sleeps) == 2 and all(retry_after - 1 <= s <= 60 for s in sleeps), sleeps
    assert client.stats.statuses == {401: 2, 429: 3}
    # A client that waits less than the server asks raises at once, saying how long to wait.
    impatient = ChanClient(
        live_server.url, retry=RetryPolicy(attempts=3, max_delay=0.5), sleep=sleeps.append
    )
    with pytest.raises(RetryLater) as later:
        impatient.login("client_nobody", PASSWORD)
    assert later.value.code == "throttled" and 1 <= later.value.retry_after <= 60
    assert len(sleeps) == 2 and impatient.stats.requests == 1


@pytest.mark.slow
def test_two_bots_play_two_hands_to_the_end(live_server) -> None:
    # Given two bots, one opening a two-seat table and the other joining it,
    bots = [
        Bot(player(live_server.url, f"client_bot{i}"), f"client_bot{i}", rng=random.Random(i))
        for i in range(2)
    ]
    table_id = bots[0].sit(create=True, max_seats=2, stake=10)
    assert bots[1].sit(table_id=table_id) == table_id
    errors: list[BaseException] = []

    def run(bot: Bot) -> None:
        try:
            bot.play(table_id, hands=2)
        except BaseException as e:  # reported below
            errors.append(e)

    # when both play two hands, each in its own thread with its own client,
    threads = [threading.Thread(target=run, args=(bot,)) for bot in bots]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == [] and not any(t.is_alive() for t in threads)
    # then they played the same two hands to the end, through the API only,
    hands = bots[0].result.hands
    assert len(hands) == 2 and bots[1].result.hands == hands
    assert [h.status for h in Hand.objects.filter(pk__in=hands)] == ["ended", "ended"]
    assert all(o is not None for o in bots[0].result.outcomes)
    assert sum(b.result.moves for b in bots) > 0
    # every hand is the replay of its log, and the table was closed when both left.
    assert all(hand_store_problems(h) == [] for h in Hand.objects.filter(pk__in=hands))
    with pytest.raises(ApiError) as closed:
        bots[0].client.ready(table_id)
    assert closed.value.code in {"table_closed", "not_seated"}


def test_every_path_the_client_calls_is_in_the_schema(live_server) -> None:
    """The client is written by hand (docs/decisions/): it calls every path of the schema, and
    only those."""
    schema = ChanClient(live_server.url).request("GET", "/api/schema/?format=json").json()
    source = (Path(chan_client.client.__file__).parent / "_async_client.py").read_text()
    called = set(re.findall(r'"(/api/v1/[^"]*)"', source))
    called |= {re.sub(r"\{[a-z_]+\}", "{x}", p) for p in re.findall(r'f"(/api/v1/[^"]*)"', source)}
    known = {re.sub(r"\{[a-z_]+\}", "{x}", p) for p in schema["paths"]}
    called = {re.sub(r"\{[a-z_]+\}", "{x}", p) for p in called}
    assert called == known, (called - known, known - called)


def test_quick_join_seats_two_bots_at_one_table(live_server) -> None:
    bots = [Bot(player(live_server.url, f"client_qj{i}"), f"client_qj{i}") for i in range(2)]
    first = bots[0].sit(room="nen-dat", stake=100)
    assert bots[1].sit(room="nen-dat", stake=100) == first
    seats = bots[0].client.table(first)["seats"]
    assert sorted(s["username"] for s in seats if s.get("username")) == ["client_qj0", "client_qj1"]
