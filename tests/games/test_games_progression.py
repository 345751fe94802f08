"""Experience, levels and the history of hands (RULES.md §11): XP per hand awarded once with the
settlement, the level table, ``/me/hands`` and the public player profiles."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connections, transaction

from accounts.models import User
from accounts.selectors import MAX_LEVEL, level_for_xp, next_level_xp, xp_for_level
from games.models import FeedEntry, Hand
from games.rules.results import (
    Declaration,
    HandResult,
    Outcome,
    Settlement,
    Transfer,
    Verdict,
)
from games.rules.scoring import Score
from games.services.feed import FeedNote, feed_append
from games.services.progression import (
    XP_FINED,
    XP_PLAYED,
    XP_U,
    XP_U_WITH_GA,
    hand_award_xp,
    hand_xp,
)
from games.services.quan_booking import hand_settle
from tests.games.conftest import start_table
from tests.games.decks import HOA_DECK, WIN_SEAT
from tests.games.test_games_hands_api import assert_problem, play_to_end

pytestmark = pytest.mark.django_db

# --------------------------------------------------------------------------- the level table


def test_the_level_table_starts_at_1_and_follows_5_l_l_minus_1() -> None:
    assert [xp_for_level(n) for n in (1, 2, 3, 5, 10, 30, 50)] == [0, 10, 30, 100, 450, 4350, 12250]
    assert [level_for_xp(x) for x in (0, 9, 10, 29, 30, 99, 100)] == [1, 1, 2, 2, 3, 4, 5]
    for level in range(1, MAX_LEVEL + 1):
        assert level_for_xp(xp_for_level(level)) == level
        assert level_for_xp(xp_for_level(level) - 1) == max(level - 1, 1)
    assert level_for_xp(10**9) == MAX_LEVEL and next_level_xp(MAX_LEVEL) is None
    assert next_level_xp(1) == 10


# --------------------------------------------------------------------------- XP of one hand


def _result(
    outcome: dict[str, Any], transfers: list[dict[str, Any]], ga: int | None = None
) -> HandResult:
    """A typed result with this outcome, these transfers and (``ga`` given) a declaration."""
    declaration = None
    if ga is not None:
        score = Score(base=4, ga=ga, total=4 + ga)
        declaration = Declaration(
            cuoc=(("thong", 1),),
            auto=False,
            verdict=Verdict.DUNG,
            true_cuoc=(("thong", 1),),
            declared_score=score,
            true_score=score,
        )
    kind = Outcome.from_dict(outcome)
    return HandResult(
        outcome=kind,
        declaration=declaration,
        settlement=Settlement(
            result=kind.result, transfers=tuple(Transfer.from_dict(t) for t in transfers)
        ),
    )


def _won(ga: int, transfers: list[dict[str, Any]] | None = None) -> HandResult:
    if transfers is None:
        transfers = [{"from": s, "to": 1, "points": 4 + ga, "reason": "win"} for s in (0, 2)]
    return _result({"result": "u", "seat": 1}, transfers, ga)


def test_a_win_with_ga_earns_10_a_plain_win_3_the_others_1() -> None:
    assert hand_xp(_won(ga=2), 3) == [XP_PLAYED, XP_U_WITH_GA, XP_PLAYED] == [1, 10, 1]
    assert hand_xp(_won(ga=0), 3) == [1, XP_U, 1] == [1, 3, 1]
    assert hand_xp(_result({"result": "hoa"}, []), 4) == [1] * 4


@pytest.mark.parametrize("reason", ["den_lang", "xuong_sai", "four_eleven"])
def test_a_winner_fined_for_its_own_fault_loses_1(reason: str) -> None:
    fine = [{"from": 1, "to": s, "points": 5, "reason": reason} for s in (0, 2)]
    assert hand_xp(_won(ga=2, transfers=fine), 3) == [1, XP_FINED, 1] == [1, -1, 1]


def test_a_false_u_claimer_and_a_bao_seat_paying_for_the_village_lose_1() -> None:
    u_lao = _result(
        {"result": "u_lao", "seat": 0},
        [{"from": 0, "to": s, "points": 17, "reason": "u_lao"} for s in (1, 2)],
    )
    assert hand_xp(u_lao, 3) == [-1, 1, 1]
    bao = [{"from": 2, "to": 1, "points": 8, "reason": "bao_den_lang"}]
    assert hand_xp(_won(ga=0, transfers=bao), 3) == [1, 3, -1]


# --------------------------------------------------------------------------- XP booked once


def _xp(players: list[Any]) -> list[tuple[int, int]]:
    return [(u.xp, u.level) for u in (User.objects.get(pk=p.user.pk) for p in players)]


def test_a_settled_hand_gives_its_xp_once_and_me_shows_it(players, win_hand) -> None:
    # Given the scripted hand played to seat 2's win,
    play_to_end(players, win_hand)
    hand = Hand.objects.get(pk=win_hand["hand"])
    result = hand.outcome_result()
    expected = hand_xp(result, hand.n_seats)
    assert result.declaration is not None
    winner_xp = XP_U_WITH_GA if result.declaration.declared_score.ga else XP_U
    assert expected == [winner_xp if s == WIN_SEAT else XP_PLAYED for s in range(4)]
    # when its settlement is booked three times (the task, the sweep, the next deal),
    for _ in range(3):
        hand_settle(hand_id=hand.pk)
    # then each player earned the hand's XP exactly once,
    by_user = {s.user_id: x for s, x in zip(hand.seat_list(), expected, strict=True)}
    assert _xp(players) == [(by_user[p.user.pk], level_for_xp(by_user[p.user.pk])) for p in players]
    # and /me shows it with the level and the next level's XP.
    me = players[WIN_SEAT].client.get("/api/v1/me").json()
    assert (me["xp"], me["level"], me["next_level_xp"]) == (winner_xp, 1, 10)
    assert (me["vip_points"], me["badge"]) == (0, False)


def test_xp_never_goes_below_0_and_the_level_follows_it(players) -> None:
    # Given a hand where players[0] has 30 XP (level 3) and players[1] none,
    User.objects.filter(pk=players[0].user.pk).update(xp=30, level=3)
    hand = Hand.objects.get(pk=start_table(players, HOA_DECK)["hand"])
    assert [s.user_id for s in hand.seat_list()] == [p.user.pk for p in players]
    # when both are fined in it (a false ù, a báo seat paying for the village),
    hand.result = _result(
        {"result": "u_lao", "seat": 0},
        [
            {"from": 0, "to": 2, "points": 17, "reason": "u_lao"},
            {"from": 1, "to": 3, "points": 17, "reason": "bao_den_lang"},
        ],
    ).to_dict()
    hand_award_xp(hand=hand)
    # then the first drops to level 2, the second stays at 0 XP, the others earn 1.
    assert _xp(players) == [(29, 2), (0, 1), (1, 1), (1, 1)]


@pytest.mark.django_db(transaction=True)
def test_two_settlements_at_once_give_the_xp_once(players, win_hand) -> None:
    play_to_end(players, win_hand)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def settle() -> None:
        try:
            barrier.wait()
            hand_settle(hand_id=win_hand["hand"])
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=settle) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert sum(xp for xp, _level in _xp(players)) == sum(
        hand_xp(Hand.objects.get(pk=win_hand["hand"]).outcome_result(), 4)
    )


# --------------------------------------------------------------------------- history, profiles


def _next_hand(players: list[Any], table_id: int) -> int:
    hand_id = None
    for p in players:
        r = p.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
        assert r.status_code == 200, r.content
        hand_id = r.json()["hand_id"] or hand_id
    assert hand_id is not None
    return hand_id


def test_my_hands_newest_first_with_my_seat_result_and_quan(players, win_hand) -> None:
    # Given a won hand, settled, then a second hand dealt at the table,
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    second = _next_hand(players, win_hand["table"])
    won = Hand.objects.get(pk=win_hand["hand"])
    seat_of = {s.user_id: s.position for s in won.seat_list()}
    winner = next(p for p in players if seat_of[p.user.pk] == WIN_SEAT)
    # when the winner pages through its hands one at a time,
    r = winner.client.get("/api/v1/me/hands?limit=1")
    assert r.status_code == 200
    page = r.json()
    # then the playing hand comes first, then the won one with its booked Quan,
    assert [h["id"] for h in page["results"]] == [second]
    assert page["results"][0]["status"] == "playing" and page["results"][0]["result"] is None
    assert page["next"] is not None
    older = winner.client.get(f"/api/v1/me/hands?limit=1&cursor={page['next']}").json()
    assert older["next"] is None
    item = older["results"][0]
    net = {s["seat"]: s["net"] for s in won.quan["seats"]}
    assert item == {
        "id": won.pk,
        "table_id": win_hand["table"],
        "number": 1,
        "room": "nen-dat",
        "stake": 10,
        "n_seats": 4,
        "seat": WIN_SEAT,
        "table_seat": WIN_SEAT,
        "status": "ended",
        "outcome": {"result": "u", "seat": WIN_SEAT},
        "result": "won",
        "quan": net[WIN_SEAT],
        "practice": False,
        "rating_change": item["rating_change"],  # tests/games/test_games_ratings.py
        "created_at": item["created_at"],
        "ended_at": item["ended_at"],
    }
    assert net[WIN_SEAT] > 0 and item["ended_at"].endswith("Z")
    loser = players[0] if players[0] is not winner else players[1]
    mine = loser.client.get("/api/v1/me/hands").json()["results"]
    assert [h["result"] for h in mine] == [None, "lost"] and mine[1]["quan"] < 0
    # and a bad cursor is a 400 naming it.
    body = assert_problem(winner.client.get("/api/v1/me/hands?cursor=x"), 400, "invalid")
    assert list(body["errors"]) == ["cursor"]


def test_a_players_public_profile_and_its_ended_hands(players, win_hand, make_player) -> None:
    # Given seat 2's won hand (settled) and a hand being played at the same table,
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    second = _next_hand(players, win_hand["table"])
    won = Hand.objects.get(pk=win_hand["hand"])
    seat_of = {s.user_id: s.position for s in won.seat_list()}
    winner = next(p for p in players if seat_of[p.user.pk] == WIN_SEAT)
    stranger = make_player()
    # when a stranger reads the winner's profile (the username in any case),
    r = stranger.client.get(f"/api/v1/players/{winner.user.username.upper()}")
    assert r.status_code == 200, r.content
    profile = r.json()
    # then it shows one ended hand played and won, the points and the declared cước,
    paid = sum(t["points"] for t in won.result["settlement"]["transfers"] if t["to"] == WIN_SEAT)
    cuoc = won.result["declaration"]["cuoc"]
    assert profile == {
        "username": winner.user.username,
        "display_name": "",
        "level": profile["level"],
        "xp": profile["xp"],
        "badge": False,
        "hands_played": 1,
        "wins": 1,
        "win_rate": 1.0,
        "biggest_win_points": paid,
        "favourite_cuoc": min(cuoc, key=lambda k: (-cuoc[k], k)),
        "member_since": profile["member_since"],
        "rating": profile["rating"],  # tests/games/test_games_ratings.py
        "ratings": profile["ratings"],
    }
    assert paid > 0 and profile["xp"] > 0 and profile["member_since"].endswith("Z")
    loser = stranger.client.get(f"/api/v1/players/{players[0].user.username}").json()
    if players[0] is not winner:
        assert (loser["hands_played"], loser["wins"], loser["win_rate"]) == (1, 0, 0.0)
    # and its hands are the ended ones only.
    hands = stranger.client.get(f"/api/v1/players/{winner.user.username}/hands").json()
    assert [h["id"] for h in hands["results"]] == [won.pk] and second != won.pk
    new = stranger.client.get(f"/api/v1/players/{stranger.user.username}").json()
    assert (new["hands_played"], new["wins"], new["win_rate"]) == (0, 0, None)
    # An unknown player is a 404.
    assert_problem(stranger.client.get("/api/v1/players/nobody-here"), 404, "not_found")
    assert_problem(stranger.client.get("/api/v1/players/nobody-here/hands"), 404, "not_found")


@pytest.mark.slow
def test_a_hoa_gives_everyone_1_xp(players, hoa_hand) -> None:
    play_to_end(players, hoa_hand)
    hand_settle(hand_id=hoa_hand["hand"])
    assert _xp(players) == [(1, 1)] * 4
    assert {
        h["result"] for p in players for h in p.client.get("/api/v1/me/hands").json()["results"]
    } == {"hoa"}


@pytest.mark.django_db(transaction=True)
def test_a_settlement_holding_its_players_rows_does_not_deadlock_a_feed_append_committing(
    players,
) -> None:
    """A transaction that appended to a player's feed holds that feed's advisory lock to its
    COMMIT, where the feed entry's deferred foreign key reads the player's row ``FOR KEY
    SHARE``. A settlement that locked the player's row for the XP and then waits for the same
    feed must not block that check: the rows are locked ``FOR NO KEY UPDATE`` (``FOR UPDATE``
    made PostgreSQL detect a deadlock here and abort one of the two)."""
    hand = Hand.objects.get(pk=start_table(players, HOA_DECK)["hand"])
    hand.result = _result({"result": "u_lao", "seat": 0}, []).to_dict()
    user_id = players[0].user.pk
    appended, locked = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def note(key: str) -> FeedNote:
        return FeedNote(user_id=user_id, kind="hand_dealt", key=key, data={"seat": 0})

    def feed_first() -> None:
        with transaction.atomic():
            feed_append(notes=[note("first")])
            appended.set()
            assert locked.wait(10)
            time.sleep(0.3)  # the settlement is waiting for this feed's lock now

    def settlement() -> None:
        assert appended.wait(10)
        with transaction.atomic():
            hand_award_xp(hand=hand)
            locked.set()
            feed_append(notes=[note("second")])

    def run(call: Any) -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 (reported below)
            locked.set()
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(f,)) for f in (feed_first, settlement)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
    keys = set(FeedEntry.objects.filter(user_id=user_id).values_list("key", flat=True))
    assert {"first", "second"} <= keys
    assert User.objects.get(pk=user_id).xp == hand_xp(hand.outcome_result(), 4)[0]
