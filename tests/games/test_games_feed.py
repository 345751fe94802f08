"""The player's feed (``GET /me/feed``, games/services/feed.py, games/selectors/feed.py): what
concerns a player across its tables, in order, cursor-paged, with an ETag and a long poll; and
a client that plays four tables at once driven only by its feed ("Done when")."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from games.hand_store import hand_state
from games.live.kinds import FEED_KINDS
from games.models import FeedEntry, Hand
from games.services.feed import _APPEND_SQL, FeedNote, _append_params, feed_append
from games.services.hands import hand_clock_tick
from games.services.quan_booking import hand_settle
from tests.games.conftest import Player, client_with, start_table
from tests.games.decks import WIN_DECK

pytestmark = pytest.mark.django_db
FAR_FUTURE = timezone.timedelta(days=1)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "api" / "live.md"


def feed(player: Player, **query: Any) -> dict[str, Any]:
    r = player.client.get("/api/v1/me/feed", query)
    assert r.status_code == 200, r.content
    return r.json()


def kinds(page: dict[str, Any]) -> list[str]:
    return [e["kind"] for e in page["entries"]]


def test_a_deal_tells_every_player_and_the_dealer_that_it_is_its_turn(players) -> None:
    # Given four players at a table, ready: the fixed deck's dealer is seat 0
    ids = start_table(players, WIN_DECK)
    hand = Hand.objects.get(pk=ids["hand"])
    for position, p in enumerate(players):
        page = feed(p)
        # each one's feed says, in order, who joined and who is ready, then the deal
        dealt = [e for e in page["entries"] if e["kind"] == "hand_dealt"]
        assert len(dealt) == 1 and dealt[0]["hand_id"] == hand.pk
        assert dealt[0]["data"] == {"seat": position, "dealer": 0, "seq": 0}
        assert dealt[0]["table_id"] == ids["table"]
        seqs = [e["seq"] for e in page["entries"]]
        assert seqs == list(range(1, len(seqs) + 1))  # dense, in order
        turn = [e for e in page["entries"] if e["kind"] == "your_turn"]
        # and only the dealer is told it is its turn, with the seq and the deadline
        if position == 0:
            (entry,) = turn
            assert entry["data"]["seq"] == 0 and entry["data"]["phase"] == "dealer_start"
            assert entry["data"]["deadline"].endswith("Z")
            table_news = [k for k in kinds(page) if k != "bonus_available"]  # (on the read)
            assert table_news[-2:] == ["hand_dealt", "your_turn"]
        else:
            assert turn == []


def test_seats_changing_at_my_table_are_in_my_feed(players) -> None:
    owner, guest = players[0], players[1]
    table_id = owner.client.post(
        "/api/v1/tables", {"name": "f", "stake": 10}, format="json"
    ).json()["id"]
    guest.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    guest.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
    guest.client.post(f"/api/v1/tables/{table_id}/leave", {}, format="json")
    changes = [
        (e["data"]["change"], e["data"]["username"], e["data"]["seat"])
        for e in feed(owner)["entries"]
        if e["kind"] == "seats_changed"
    ]
    name = guest.user.username
    assert changes == [("joined", name, 1), ("ready", name, 1), ("left", name, 1)]
    # the one who left hears of its own leaving, and nobody else's feed has them
    mine = [e["data"]["change"] for e in feed(guest)["entries"] if e["kind"] == "seats_changed"]
    assert mine == ["joined", "ready", "left"]
    assert "seats_changed" not in kinds(feed(players[2]))


def test_the_feed_pages_by_cursor_with_an_etag(players) -> None:
    start_table(players, WIN_DECK)
    p = players[0]
    everything = feed(p)["entries"]
    assert len(everything) >= 5
    first = feed(p, limit=2)
    assert [e["seq"] for e in first["entries"]] == [1, 2] and first["has_more"]
    second = feed(p, after=first["next_after"], limit=2)
    assert [e["seq"] for e in second["entries"]] == [3, 4]
    assert first["head"] == second["head"] == everything[-1]["seq"]
    # the page after the end is empty, its cursor unchanged
    tail = feed(p, after=everything[-1]["seq"])
    assert tail == {
        "entries": [],
        "head": everything[-1]["seq"],
        "next_after": everything[-1]["seq"],
        "has_more": False,
        "truncated": False,
    }
    # ETag: 304 while the feed has nothing new; a new entry changes it
    r = p.client.get("/api/v1/me/feed", {"after": 2})
    etag = r.headers["ETag"]
    again = p.client.get("/api/v1/me/feed", {"after": 2}, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.headers["ETag"] == etag
    feed_append(notes=[FeedNote(p.user.pk, "hand_voided", "test:1", data={"seq": 9})])
    changed = p.client.get("/api/v1/me/feed", {"after": 2}, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed.headers["ETag"] != etag


def test_a_long_poll_answers_at_once_when_there_is_news_and_empty_at_its_timeout(players) -> None:
    start_table(players, WIN_DECK)
    p = players[1]
    head = feed(p)["head"]
    started = time.monotonic()
    assert feed(p, after=0, wait=5)["entries"]  # something after 0: no wait
    assert time.monotonic() - started < 2
    started = time.monotonic()
    page = feed(p, after=head, wait=1)
    assert page["entries"] == [] and page["next_after"] == head
    assert time.monotonic() - started >= 0.9


@pytest.mark.parametrize(
    "query", [{"after": -1}, {"after": "x"}, {"limit": 0}, {"limit": 101}, {"wait": 31}]
)
def test_a_bad_cursor_is_a_400(players, query) -> None:
    r = players[0].client.get("/api/v1/me/feed", query)
    assert r.status_code == 400
    assert r.headers["Content-Type"].startswith("application/problem+json")


def test_the_feed_needs_a_token(client) -> None:
    assert client.get("/api/v1/me/feed").status_code == 401


def test_a_bonus_to_claim_is_in_the_feed_once_a_day(players) -> None:
    p = players[0]
    bonus = [e for e in feed(p)["entries"] if e["kind"] == "bonus_available"]
    assert len(bonus) == 1 and bonus[0]["data"]["amount"] > 0
    feed(p)
    assert [e["kind"] for e in feed(p)["entries"]].count("bonus_available") == 1
    # once claimed, the next player's read does not announce it again
    q = players[1]
    assert q.client.post("/api/v1/me/bonus", {}, format="json").status_code in (200, 201)
    assert "bonus_available" not in kinds(feed(q))


def test_the_feed_refuses_an_unknown_kind_and_an_edit(players) -> None:
    p = players[0]
    with pytest.raises(ValueError, match="not a feed kind"):
        feed_append(notes=[FeedNote(p.user.pk, "nonsense", "k")])
    feed_append(notes=[FeedNote(p.user.pk, "hand_voided", "k", data={"seq": 1})])
    heads = feed_append(notes=[FeedNote(p.user.pk, "hand_voided", "k", data={"seq": 2})])
    entry = FeedEntry.objects.get(user=p.user, key="k")
    assert entry.data == {"seq": 1} and heads[p.user.pk] == entry.seq  # the same fact once
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        FeedEntry.objects.filter(pk=entry.pk).update(kind="your_turn")


def feed_rows_scanned(plan: dict[str, Any]) -> int:
    """The rows that the scans of the feed's table in an ``EXPLAIN (ANALYZE, FORMAT JSON)``
    plan returned (the notes' own rows, from ``unnest`` and the statement's CTEs, not counted)."""
    own = plan["Actual Rows"] * plan["Actual Loops"]
    own = own if plan.get("Relation Name") == "games_feedentry" else 0
    return own + sum(feed_rows_scanned(p) for p in plan.get("Plans", []))


def test_appending_reads_the_feeds_last_line_and_its_known_keys_not_the_whole_feed(
    make_player,
) -> None:
    # Given a player with a long feed (3,000 lines), the table's statistics up to date
    p = make_player()
    FeedEntry.objects.bulk_create(
        FeedEntry(user_id=p.user.pk, seq=n, kind="hand_voided", key=f"old:{n}", data={})
        for n in range(1, 3001)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE games_feedentry")
        # when the append runs as feed_append runs it, for a known key and a new one (rolled
        # back: EXPLAIN ANALYZE inserts)
        with transaction.atomic():
            cursor.execute(
                "EXPLAIN (ANALYZE, FORMAT JSON) " + _APPEND_SQL,
                _append_params(
                    [
                        FeedNote(p.user.pk, "hand_voided", "old:7"),
                        FeedNote(p.user.pk, "hand_voided", "new"),
                    ],
                    timezone.now(),
                ),
            )
            (plan,) = cursor.fetchone()[0]
            transaction.set_rollback(True)
    # then it reads two index entries of the feed (the last seq, the known key), not the 3,000
    # lines (an aggregate over the player's feed read 750,000 of them a move at 13.5 million)
    assert feed_rows_scanned(plan["Plan"]) <= 2, plan
    # and the append numbers after the last line and leaves the known fact out
    heads = feed_append(
        notes=[
            FeedNote(p.user.pk, "hand_voided", "old:7"),
            FeedNote(p.user.pk, "hand_voided", "new"),
        ]
    )
    assert heads[p.user.pk] == 3001
    assert FeedEntry.objects.get(user=p.user, key="new").seq == 3001


def test_every_kind_is_in_the_api_guide() -> None:
    guide = DOCS.read_text()
    section = guide[guide.index("## The player's feed") :]
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))
    assert documented >= set(FEED_KINDS), set(FEED_KINDS) - documented
    # and each kind's row names every field of its `data`
    rows = dict(re.findall(r"^\| `([a-z_]+)` \|[^|]*\|(.*)\|$", section, re.M))
    for kind in FEED_KINDS.values():
        named = set(re.findall(r"`([a-z_]+)`", rows[kind.name]))
        assert set(kind.fields) <= named, (kind.name, set(kind.fields) - named)


# ------------------------------------------------------------------------- four tables at once


def _bots_move(hand_ids: list[int], me: int) -> None:
    """The server's bots (the clock's work): every move that is a bot's, until it is mine."""
    for hand_id in hand_ids:
        for _ in range(200):
            hand = Hand.objects.get(pk=hand_id)
            if hand.status == Hand.Status.ENDED:
                break
            state = hand_state(hand)
            if hand.seat_list()[state.turn].user_id == me:
                break
            assert hand_clock_tick(hand_id=hand_id, now=timezone.now() + FAR_FUTURE) is not None


def _choose(legal: list[dict[str, Any]]) -> dict[str, Any]:
    order = ["u", "declare", "draw", "pass", "discard", "tra_cua", "eat", "chiu"]
    return min(legal, key=lambda m: order.index(m["type"]) if m["type"] in order else 99)


def test_one_client_plays_four_tables_at_once_driven_only_by_its_feed(
    make_player, django_capture_on_commit_callbacks
) -> None:
    # Given a player at four practice tables with three bots each, all dealt
    me = make_player()
    tables = []
    for n in range(4):
        body = {"name": f"four-{n}", "practice": True, "bots": 3, "bot_delay": 0}
        tables.append(me.client.post("/api/v1/tables", body, format="json").json()["id"])
    for table_id in tables:
        r = me.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
        assert r.json()["hand_id"]
    hand_ids = list(Hand.objects.filter(table_id__in=tables).values_list("pk", flat=True))
    # When the client reads only its feed (a long poll) and moves when it says "your turn"
    cursor, ended, moves = 0, set(), 0
    for _ in range(2000):
        if ended == set(hand_ids):
            break
        _bots_move(hand_ids, me.user.pk)
        page = feed(me, after=cursor, wait=1)
        cursor = page["next_after"]
        for entry in page["entries"]:
            if entry["kind"] == "hand_ended":
                ended.add(entry["hand_id"])
            if entry["kind"] != "your_turn":
                continue
            url = f"/api/v1/hands/{entry['hand_id']}"
            legal = me.client.get(url).json()["legal_moves"]
            move = {**_choose(legal), "expected_seq": entry["data"]["seq"]}
            r = me.client.post(url + "/moves", move, format="json")
            # an older "your turn" of a hand that moved on since is refused as stale
            assert r.status_code == 201 or r.json()["code"] == "stale_seq", r.content
            moves += r.status_code == 201
    # Then all four hands end, each told in the feed, and the client made its moves from it
    assert ended == set(hand_ids)
    assert moves >= 4
    assert all(h.status == "ended" for h in Hand.objects.filter(pk__in=hand_ids))
    # and once settled (the worker's task), each hand's settlement is in the feed too
    with django_capture_on_commit_callbacks(execute=True):
        for hand_id in hand_ids:
            hand_settle(hand_id=hand_id)
    settled = [e for e in feed(me, after=cursor)["entries"] if e["kind"] == "hand_settled"]
    assert {e["hand_id"] for e in settled} == set(hand_ids)
    assert all(e["data"]["quan"] is not None for e in settled)


# ------------------------------------------------------------------------- reality checks


def test_my_own_reminder_comes_once_per_period_in_the_feed(make_player) -> None:
    from accounts.limits import limits_set
    from games.models import Seat

    # Given a player who asked for a reality check every 5 minutes, seated for 11 minutes
    me = make_player()
    limits_set(user=me.user, changes={"reminder_minutes": 5})
    table_id = me.client.post(
        "/api/v1/tables", {"name": "rc", "stake": 10, "max_seats": 2}, format="json"
    ).json()["id"]
    assert feed(me)["entries"] == [] or "reality_check" not in kinds(feed(me))
    Seat.objects.filter(table_id=table_id, player=me.user).update(
        created_at=timezone.now() - timezone.timedelta(minutes=11)
    )
    # When it reads its feed, twice
    first = [e for e in feed(me)["entries"] if e["kind"] == "reality_check"]
    again = [e for e in feed(me)["entries"] if e["kind"] == "reality_check"]
    # Then one reminder, the second of the session, with what it played and won
    assert len(first) == 1 and again == first
    data = first[0]["data"]
    assert data["minutes_played"] == 11 and data["reminder_minutes"] == 5 and data["net"] == 0
    assert data["next_at"].endswith("Z")


@pytest.mark.django_db(transaction=True)
def test_the_players_feed_locks_are_one_statement_taken_in_id_order() -> None:
    import threading

    import psycopg

    from games.services.feed import _LOCKS_SQL, FEED_LOCK_SPACE, _locks_params

    s = connection.settings_dict
    params = {"dbname": s["NAME"], "user": s["USER"], "host": s["HOST"], "port": s["PORT"]}
    ids = [900_000_001, 900_000_002, 900_000_003]
    with psycopg.connect(**params) as holder, psycopg.connect(**params) as taker:
        # Given another transaction holding the middle player's feed lock,
        holder.execute("SELECT pg_advisory_xact_lock(%s, %s)", [FEED_LOCK_SPACE, ids[1]])
        taker_pid = taker.info.backend_pid
        # when the statement takes the three players' locks,
        thread = threading.Thread(target=taker.execute, args=(_LOCKS_SQL, _locks_params(ids)))
        thread.start()
        deadline = time.monotonic() + 10
        while True:
            with psycopg.connect(**params, autocommit=True) as probe:
                rows = probe.execute(
                    "SELECT objid::int, granted FROM pg_locks WHERE locktype = 'advisory' "
                    "AND classid = %s AND pid = %s",
                    [FEED_LOCK_SPACE, taker_pid],
                ).fetchall()
            if any(not granted for _, granted in rows) or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        # then it holds the first, waits for the second and has not asked for the third: the
        # locks are taken one by one in the ids' order, in one statement.
        assert sorted(rows) == [(ids[0], True), (ids[1], False)]
        holder.rollback()
        thread.join(timeout=10)
        taker.rollback()


def test_a_format_the_feed_does_not_render_is_406_not_404(make_user) -> None:
    _, raw = make_user()
    client = client_with(raw)
    for bad in ("å", "xml", "sse", "ndjson"):  # a stream is asked for with Accept
        response = client.get(f"/api/v1/me/feed?format={bad}")
        assert response.status_code == 406, (bad, response.status_code)
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["code"] == "not_acceptable"
    assert client.get("/api/v1/me/feed?format=json").status_code == 200
