"""Seasons (``games.services.seasons``): a week or month closes on the clock, its
boards frozen as its final standings and its prizes paid from the prize account as one ledger
transaction per board; the boards' histogram gives exact ranks."""

from __future__ import annotations

import datetime as dt
import random
import threading

import pytest
from django.db import connection

from accounts.ledger_selectors import ledger_problems, wallet_balance
from accounts.models import LedgerAccount, LedgerTransaction
from core.errors import Conflict
from games.models import (
    BoardScore,
    FeedEntry,
    PrizeLine,
    PrizeSchedule,
    Season,
    SeasonBoard,
    SeasonPrize,
)
from games.rating_terms import BOARD_TZ, season_bounds, seasons_ended, week_of
from games.selectors.leaderboards import board_rank
from games.services.seasons import (
    Payout,
    periods_writable,
    prize_account,
    prize_account_fund,
    prize_key,
    prize_payouts,
    season_close,
    seasons_close_due,
)

pytestmark = pytest.mark.django_db

WEEK = "2026-W47"  # Monday 16 November 2026 to Monday 23 November, Asia/Ho_Chi_Minh
AFTER = dt.datetime(2026, 11, 23, 1, 0, tzinfo=BOARD_TZ)  # an hour after it ended


@pytest.fixture
def staff(make_user):
    user, _ = make_user(username="boss", is_staff=True, is_superuser=True)
    return user


def _schedule(board: str = "quan", kind: str = "week", amounts=(300, 200, 100), **fields):
    schedule = PrizeSchedule.objects.create(board=board, kind=kind, **fields)
    for rank, amount in enumerate(amounts, start=1):
        PrizeLine.objects.create(schedule=schedule, rank=rank, amount=amount)
    return schedule


def _scores(make_user, scores, *, period: str = WEEK, board: str = "quan", **user_fields):
    users = []
    for score in scores:
        user, _ = make_user(**user_fields)
        BoardScore.objects.create(
            board=board, period=period, room="", user=user, score=score, hands=3
        )
        users.append(user)
    return users


# ------------------------------------------------------------------------- the season's clock


def test_season_bounds_are_local_midnights() -> None:
    start, end = season_bounds(WEEK)
    assert (start.isoformat(), end.isoformat()) == (
        "2026-11-16T00:00:00+07:00",
        "2026-11-23T00:00:00+07:00",
    )
    start, end = season_bounds("2026-12")
    assert (start.date(), end.date()) == (dt.date(2026, 12, 1), dt.date(2027, 1, 1))
    assert week_of(end - dt.timedelta(microseconds=1)) == "2026-W53"
    assert seasons_ended(AFTER, weeks=2, months=1) == ["2026-10", "2026-W46", WEEK]


def test_a_season_that_has_not_ended_does_not_close() -> None:
    with pytest.raises(Conflict) as exc:
        season_close(period=WEEK, now=AFTER - dt.timedelta(hours=2))
    assert exc.value.code == "season_open"
    assert not Season.objects.exists()


# ------------------------------------------------------------------------------ prizes


def test_ties_share_the_prizes_of_the_ranks_they_cover() -> None:
    standings = [(1, 50), (2, 40), (3, 40), (4, 40), (5, 10)]
    assert prize_payouts(standings, [300, 200, 100]) == [
        Payout(1, 1, 50, 300),
        # ranks 2–4 share 200 + 100 (+ 0): 100 each
        Payout(2, 2, 40, 100),
        Payout(3, 2, 40, 100),
        Payout(4, 2, 40, 100),
    ]
    # the indivisible Quan go one each to the first in the board's order (the older account)
    assert prize_payouts([(7, 9), (8, 9), (9, 9)], [100]) == [
        Payout(7, 1, 9, 34),
        Payout(8, 1, 9, 33),
        Payout(9, 1, 9, 33),
    ]
    # fewer players than ranks: the ranks left are not paid
    assert prize_payouts([(1, 5)], [300, 200]) == [Payout(1, 1, 5, 300)]


def test_a_season_closes_once_and_pays_its_prizes_as_one_transaction(make_user, staff) -> None:
    # Given a week board of four players, a schedule 300/200/100 and a funded prize account,
    users = _scores(make_user, [10, 40, -5, 25])
    _schedule()
    prize_account_fund(amount=1000, memo="Week prizes", staff=staff, key="n1")
    before = {u.pk: wallet_balance(u) for u in users}
    # when the beat runs after the week (twice, as it may),
    assert WEEK in seasons_close_due(now=AFTER)
    seasons_close_due(now=AFTER)
    # then the season is closed, its board archived and paid once,
    season = Season.objects.get(period=WEEK)
    assert season.closed_at is not None
    row = SeasonBoard.objects.get(season=season, board="quan", room="")
    assert (row.status, row.total, row.players, row.schedule) == ("paid", 600, 4, [300, 200, 100])
    txs = LedgerTransaction.objects.filter(kind="season_prize")
    assert [t.idempotency_key for t in txs] == [prize_key(WEEK, "quan", "")]
    # by final rank (40, 25, 10; −5 wins nothing), from the prize account,
    paid = {u.pk: wallet_balance(u) - before[u.pk] for u in users}
    assert paid == {users[1].pk: 300, users[3].pk: 200, users[0].pk: 100, users[2].pk: 0}
    assert prize_account().balance == 400
    # each winner told in its feed,
    entry = FeedEntry.objects.get(user=users[1], kind="season_prize")
    assert entry.data == {
        "season": WEEK,
        "board": "quan",
        "room": None,
        "rank": 1,
        "score": 40,
        "amount": 300,
    }
    assert FeedEntry.objects.filter(kind="season_prize").count() == 3
    # and ledger_check reconciles it.
    assert ledger_problems() == []


def test_an_unfunded_board_pays_nothing_until_the_account_is_funded(make_user, staff) -> None:
    users = _scores(make_user, [10, 40])
    _schedule(amounts=(300, 200))
    prize_account_fund(amount=100, memo="Not enough", staff=staff, key="n1")
    seasons_close_due(now=AFTER)
    row = SeasonBoard.objects.get(board="quan")
    assert (row.status, row.needed, row.transaction_id) == ("unfunded", 500, None)
    assert not LedgerTransaction.objects.filter(kind="season_prize").exists()
    assert not SeasonPrize.objects.exists() and prize_account().balance == 100
    assert Season.objects.get(period=WEEK).closed_at is not None  # closed all the same
    assert ledger_problems() == []
    # once staff fund it, the next run pays the frozen standings in full
    prize_account_fund(amount=400, memo="Top up", staff=staff, key="n2")
    seasons_close_due(now=AFTER + dt.timedelta(minutes=5))
    row.refresh_from_db()
    assert (row.status, row.total) == ("paid", 500)
    assert {p.user_id: p.amount for p in row.prizes.all()} == {users[1].pk: 300, users[0].pk: 200}
    assert prize_account().balance == 0
    assert ledger_problems() == []


def test_server_bots_and_players_short_of_hands_win_nothing(make_user, staff) -> None:
    (bot,) = _scores(make_user, [1000], is_bot=True, is_active=False)
    (few,) = _scores(make_user, [900])
    BoardScore.objects.filter(user=few).update(hands=1)
    (player,) = _scores(make_user, [5])
    _schedule(amounts=(300,), min_hands=2)
    prize_account_fund(amount=300, memo="Prizes", staff=staff, key="n1")
    season_close(period=WEEK, now=AFTER)
    assert list(SeasonPrize.objects.values_list("user_id", "rank", "amount")) == [
        (player.pk, 1, 300)
    ]


def test_a_board_without_a_schedule_is_archived_without_prizes(make_user) -> None:
    _scores(make_user, [10, 20], board="xp")
    season_close(period=WEEK, now=AFTER)
    row = SeasonBoard.objects.get(board="xp")
    assert (row.status, row.players) == ("no_prizes", 2)
    assert not LedgerAccount.objects.filter(kind="prize", balance__gt=0).exists()


def test_a_closed_season_is_frozen_and_marked_closed_on_the_board(make_user, players) -> None:
    _scores(make_user, [10, 20])
    assert periods_writable(["all", WEEK], now=AFTER) == ["all", WEEK]
    season_close(period=WEEK, now=AFTER)
    # a late settlement or a void of one of its hands writes its rows no more
    assert periods_writable(["all", WEEK], now=AFTER) == ["all"]
    body = players[0].client.get(f"/api/v1/leaderboards/quan?season={WEEK}").json()
    assert body["closed"] is True and body["closed_at"].endswith("Z")
    assert [r["score"] for r in body["results"]] == [20, 10]
    open_week = players[0].client.get("/api/v1/leaderboards/quan?season=2026-W48").json()
    assert open_week["closed"] is False and open_week["closed_at"] is None


@pytest.mark.django_db(transaction=True)
def test_two_closes_at_once_pay_once(make_user, staff) -> None:
    _scores(make_user, [10, 40, 25])
    _schedule()
    prize_account_fund(amount=1000, memo="Prizes", staff=staff, key="n1")
    errors: list[BaseException] = []

    def close() -> None:
        try:
            season_close(period=WEEK, now=AFTER)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=close) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert LedgerTransaction.objects.filter(kind="season_prize").count() == 1
    assert SeasonPrize.objects.count() == 3 and prize_account().balance == 400


# ------------------------------------------------------------------------- the histogram


def test_the_histogram_rank_is_the_count_of_the_rows_above(make_user) -> None:
    rng = random.Random(7)
    values = [
        rng.choice([0, 1, 255, 256, -1, -256, 70000, -70000, 2**33, rng.randint(-999, 999)])
        for _ in range(60)
    ]
    users = _scores(make_user, values, period="all")

    def check() -> None:
        rows = list(
            BoardScore.objects.filter(board="quan", period="all", room="").order_by(
                "-score", "user_id"
            )
        )
        for rank, row in enumerate(rows, start=1):
            got = board_rank(
                board="quan", period="all", room="", score=row.score, user_id=row.user_id
            )
            assert got == rank, (row.score, row.user_id)

    check()
    # it follows updates (upserts as the settlement writes) and deletes
    for user in users[:20]:
        BoardScore.objects.filter(user=user).update(score=rng.randint(-300, 300))
    BoardScore.objects.filter(user__in=users[20:25]).delete()
    check()


_BUCKETS = "SELECT board, period, room, level, bucket, shard, n FROM games_boardbucket WHERE n > 0"
_RECOUNT = (
    "SELECT board, period, room, l::smallint, score >> (8 * l), (user_id % 8)::smallint,"
    " count(*) FROM games_boardscore, generate_series(0, 3) AS l GROUP BY 1, 2, 3, 4, 5, 6"
)


def test_the_histogram_follows_the_settlements_upsert_as_its_recount(make_user) -> None:
    """The board rows a settlement and a void write (one upsert of arrays: new rows, scores added
    or replaced, hands counted down) leave the histogram equal to a recount from the rows, on a
    table whose pages keep room for its updates (games 0034)."""
    from games.services.leaderboards import _upsert

    rng = random.Random(11)
    users = [make_user()[0].pk for _ in range(6)]

    def differences() -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(
                f"({_RECOUNT} EXCEPT ALL {_BUCKETS}) UNION ALL ({_BUCKETS} EXCEPT ALL {_RECOUNT})"
            )
            return cursor.fetchall()

    for step in (1, 1, 1, -1, 1):
        rows = []
        for period in ("all", "2026-W49"):
            for room in ("", "nen-dat"):
                for user in users:
                    quan = step * rng.choice([7, 300, -70000])
                    rows.append(("quan", period, room, user, quan, step))
                    rating = rng.randint(1200, 1800)
                    rows.append(("rating:chan_van_van", period, room, user, rating, step))
        _upsert(rows)
        assert differences() == []
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'games_boardbucket'")
        assert cursor.fetchone()[0] == ["fillfactor=80"]
    assert BoardScore.objects.filter(user_id=users[0], board="quan").first().hands == 3


# ---------------------------------------------------------------------------- the admin


def test_staff_fund_the_prize_account_and_see_the_seasons_in_the_admin(make_user, staff) -> None:
    from django.test import Client

    _scores(make_user, [10, 40])
    _schedule(amounts=(50,))
    client = Client()
    client.force_login(staff)
    # adding a funding books issuance → prize account, once per form
    page = client.get("/admin/games/prizefunding/add/")
    assert page.status_code == 200
    nonce = page.context["adminform"].form["nonce"].value()
    body = {"amount": "500", "memo": "Week 47 prizes", "nonce": nonce}
    assert client.post("/admin/games/prizefunding/add/", body).status_code == 302
    assert client.post("/admin/games/prizefunding/add/", body).status_code == 302  # re-sent
    assert LedgerTransaction.objects.filter(kind="prize_funding").count() == 1
    assert prize_account().balance == 500
    assert client.post("/admin/games/prizefunding/add/", {**body, "amount": "0"}).status_code == 200
    season_close(period=WEEK, now=AFTER)
    row = SeasonBoard.objects.get(board="quan")
    for url in (
        "/admin/games/prizeschedule/",
        "/admin/games/prizeschedule/add/",
        "/admin/games/season/",
        f"/admin/games/season/{row.season_id}/change/",
        "/admin/games/seasonboard/",
        f"/admin/games/seasonboard/{row.pk}/change/",
        "/admin/games/prizefunding/",
    ):
        assert client.get(url).status_code == 200, url


@pytest.mark.django_db(transaction=True)
def test_the_close_waits_for_a_board_write_of_its_season_in_flight() -> None:
    import time

    from django.db import transaction

    from games.services.seasons import season_open

    order: list[str] = []
    writing = threading.Event()

    def late_settlement() -> None:
        try:
            with transaction.atomic():
                assert periods_writable(["all", WEEK], now=AFTER) == ["all", WEEK]
                writing.set()
                time.sleep(0.5)
                order.append("write committed")
        finally:
            connection.close()

    def close() -> None:
        try:
            writing.wait(5)
            season_open(WEEK)
            order.append("season opened")
        finally:
            connection.close()

    threads = [threading.Thread(target=late_settlement), threading.Thread(target=close)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert order == ["write committed", "season opened"]
    # and a write after it skips the season
    assert periods_writable(["all", WEEK], now=AFTER) == ["all"]


def test_around_me_is_the_slice_of_the_whole_board_around_my_rank(make_user) -> None:
    from games.selectors.leaderboards import leaderboard

    users = _scores(make_user, [5, 9, 9, 9, 1, 9, 5, 0, 9, 5], period="all")
    ordered = list(
        BoardScore.objects.filter(board="quan", period="all")
        .order_by("-score", "user_id")
        .values_list("user__username", flat=True)
    )
    for user in users:
        page = leaderboard(board="quan", around=user, limit=5)
        rank = ordered.index(user.username) + 1
        assert page.me["rank"] == rank
        first = page.results[0]["rank"]
        assert [r["username"] for r in page.results] == ordered[first - 1 : first - 1 + 5]
        assert [r["rank"] for r in page.results] == list(range(first, first + len(page.results)))
        assert first == max(1, min(rank - 2, len(ordered) - 4)) or len(page.results) < 5
    # a cursor page continues where the last one stopped
    top = leaderboard(board="quan", limit=4)
    rest = leaderboard(board="quan", limit=4, cursor=top.next_cursor)
    assert [r["username"] for r in top.results + rest.results] == ordered[:8]
