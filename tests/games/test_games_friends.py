"""Tables among friends over HTTP: private tables and their invite codes, blocks,
challenges (accept, decline, expire) and the feed entries they write."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.hold_selectors import wallet_funds
from accounts.ledger import balance_adjust
from games.models import Block, Challenge, FeedEntry, PrivateTable, Seat, Table

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"


def assert_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == code
    return response.json()


def create(player: Any, **body: Any) -> Any:
    return player.client.post("/api/v1/tables", {"stake": 10, **body}, format="json")


def join(player: Any, table_id: int, **body: Any) -> Any:
    return player.client.post(f"/api/v1/tables/{table_id}/join", body, format="json")


def block(player: Any, other: Any) -> Any:
    return player.client.put(f"/api/v1/me/blocks/{other.user.username}")


def challenge(player: Any, other: Any, **body: Any) -> Any:
    body = {"username": other.user.username, "stake": 10, **body}
    return player.client.post("/api/v1/challenges", body, format="json")


# ------------------------------------------------------------------------- private tables


def test_a_private_table_shows_its_code_to_the_creator_only_and_no_spectators(players) -> None:
    r = create(players[0], private=True, spectators=True)
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["private"] is True
    code = body["invite_code"]
    assert isinstance(code, str) and len(code) == 8
    assert body["spectators"] is False  # private tables are not watched by strangers
    assert PrivateTable.objects.get(table_id=body["id"]).invite_code == code
    # a public table has no code
    public = create(players[1]).json()
    assert public["private"] is False and public["invite_code"] is None


def test_joining_a_private_table_needs_its_code(players) -> None:
    table = create(players[0], private=True).json()
    assert_problem(join(players[1], table["id"]), 403, "invite_code_required")
    assert_problem(join(players[1], table["id"], code="AAAAAAAA"), 403, "invite_code_invalid")
    assert not Seat.objects.filter(table_id=table["id"], player=players[1].user).exists()
    r = join(players[1], table["id"], code=table["invite_code"].lower())  # case does not matter
    assert r.status_code == 200, r.content
    assert r.json()["invite_code"] == table["invite_code"]  # the seated see it too


def test_a_private_table_is_hidden_from_strangers(players) -> None:
    table = create(players[0], private=True).json()
    # not in the lobby
    listed = [t["id"] for t in players[1].client.get("/api/v1/tables").json()]
    assert table["id"] not in listed
    # 404 by id, its hands and its current hand to a stranger
    for suffix in ("", "/hands", "/hand"):
        r = players[1].client.get(f"/api/v1/tables/{table['id']}{suffix}")
        assert_problem(r, 404, "not_found")
    # the owner sees it, with its code
    mine = players[0].client.get(f"/api/v1/tables/{table['id']}").json()
    assert mine["invite_code"] == table["invite_code"]
    # once joined with the code, the table is visible to the player
    join(players[1], table["id"], code=table["invite_code"])
    assert players[1].client.get(f"/api/v1/tables/{table['id']}").status_code == 200


def test_quick_join_never_seats_at_a_private_table(players) -> None:
    private = create(players[0], private=True, stake=100).json()
    r = players[1].client.post("/api/v1/rooms/nen-dat/quick-join", {"stake": 100}, format="json")
    assert r.status_code == 201, r.content  # it opened a table of its own
    assert r.json()["id"] != private["id"]


# ------------------------------------------------------------------------------- blocks


def test_block_put_list_delete(players) -> None:
    me, other = players[0], players[1]
    r = block(me, other)
    assert r.status_code == 201, r.content
    assert r.json()["user"] == {"id": other.id, "username": other.user.username}
    assert block(me, other).status_code == 200  # idempotent
    listed = me.client.get("/api/v1/me/blocks").json()
    assert [b["user"]["id"] for b in listed] == [other.id]
    assert other.client.get("/api/v1/me/blocks").json() == []
    assert me.client.delete(f"/api/v1/me/blocks/{other.user.username}").status_code == 204
    assert me.client.delete(f"/api/v1/me/blocks/{other.user.username}").status_code == 204
    assert me.client.get("/api/v1/me/blocks").json() == []


def test_block_refusals(players) -> None:
    assert_problem(block(players[0], players[0]), 400, "cannot_block_self")
    assert_problem(players[0].client.put("/api/v1/me/blocks/nobody-here"), 404, "not_found")


def test_a_block_is_one_per_pair_and_never_oneself_in_the_database(players) -> None:
    a, b = players[0].user, players[1].user
    Block.objects.create(blocker=a, blocked=b)
    with pytest.raises(IntegrityError), transaction.atomic():
        Block.objects.create(blocker=a, blocked=b)
    with pytest.raises(IntegrityError), transaction.atomic():
        Block.objects.create(blocker=a, blocked=a)


def test_quick_join_never_seats_a_blocked_pair_together(players) -> None:
    # given players[0] alone at a public table of stake 100, blocked by players[1]
    r = players[0].client.post("/api/v1/rooms/nen-dat/quick-join", {"stake": 100}, format="json")
    first = r.json()["id"]
    block(players[1], players[0])
    # when players[1] quick-joins: it gets a table of its own
    r = players[1].client.post("/api/v1/rooms/nen-dat/quick-join", {"stake": 100}, format="json")
    assert r.status_code == 201 and r.json()["id"] != first
    # and the other way round (the blocked one quick-joins): never with its blocker
    second = r.json()["id"]
    # players[0] stands up from its table, then quick-joins: not at second (its blocker's)
    players[0].client.post(f"/api/v1/tables/{first}/leave", {}, format="json")
    r = players[0].client.post("/api/v1/rooms/nen-dat/quick-join", {"stake": 100}, format="json")
    assert r.status_code == 201 and r.json()["id"] != second
    # a third player is seated with one of them as usual
    r = players[2].client.post("/api/v1/rooms/nen-dat/quick-join", {"stake": 100}, format="json")
    assert r.status_code == 200


def test_quick_join_avoids_a_blocked_pair_under_the_lock(players) -> None:
    """seat_join with avoid_blocked checks the blocks under the table's lock: a table that
    passed quick-join's filter before the blocked player sat is still refused."""
    from core.errors import PermissionDenied
    from games.services.tables import seat_join

    table = create(players[0]).json()
    block(players[0], players[1])
    with pytest.raises(PermissionDenied) as info:
        seat_join(table_id=table["id"], user=players[1].user, avoid_blocked=True)
    assert info.value.code == "player_blocked"


def test_a_blocked_player_cannot_join_my_private_table_even_with_the_code(players) -> None:
    table = create(players[0], private=True).json()
    block(players[0], players[1])
    r = join(players[1], table["id"], code=table["invite_code"])
    assert_problem(r, 403, "player_blocked")
    # nor a player blocked by someone seated there (either way)
    join(players[2], table["id"], code=table["invite_code"])
    block(players[3], players[2])
    assert_problem(join(players[3], table["id"], code=table["invite_code"]), 403, "player_blocked")


# --------------------------------------------------------------------------- challenges


def test_challenge_accept_opens_a_private_table_with_both_seated(players) -> None:
    a, b = players[0], players[1]
    r = challenge(a, b, stake=20)
    assert r.status_code == 201, r.content
    sent = r.json()
    assert sent["status"] == "pending" and sent["direction"] == "sent"
    assert r["Location"] == f"/api/v1/challenges/{sent['id']}"
    # the challenged player's feed says so
    entry = FeedEntry.objects.get(user=b.user, kind="challenge_received")
    assert entry.data["challenge_id"] == sent["id"] and entry.data["username"] == a.user.username
    assert entry.data["stake"] == 20
    received = b.client.get("/api/v1/challenges?box=received").json()
    assert [c["id"] for c in received] == [sent["id"]] and received[0]["direction"] == "received"
    assert b.client.get("/api/v1/challenges?box=sent").json() == []
    # when b accepts
    r = b.client.post(f"/api/v1/challenges/{sent['id']}/accept")
    assert r.status_code == 200, r.content
    accepted = r.json()
    assert accepted["status"] == "accepted" and accepted["table_id"] is not None
    table = Table.objects.get(pk=accepted["table_id"])
    assert hasattr(table, "private") and table.owner_id == a.id and table.stake == 20
    seats = dict(Seat.objects.filter(table=table).values_list("player_id", "number"))
    assert seats == {a.id: 0, b.id: 1}
    # both seats hold their stakes as any seat does (15 × stake)
    assert wallet_funds(a.user).held == 15 * 20
    assert wallet_funds(b.user).held == 15 * 20
    # the challenger's feed has the answer
    answer = FeedEntry.objects.get(user=a.user, kind="challenge_answered")
    assert answer.data["answer"] == "accepted" and answer.data["table_id"] == table.pk
    # both see the table and its code
    for p in (a, b):
        assert p.client.get(f"/api/v1/tables/{table.pk}").json()["invite_code"]
    # a second answer is refused
    r = b.client.post(f"/api/v1/challenges/{sent['id']}/decline")
    assert_problem(r, 409, "challenge_answered")


def test_challenge_decline(players) -> None:
    a, b = players[0], players[1]
    sent = challenge(a, b).json()
    assert_problem(a.client.post(f"/api/v1/challenges/{sent['id']}/accept"), 403, "not_challenged")
    assert_problem(
        players[2].client.post(f"/api/v1/challenges/{sent['id']}/accept"), 404, "not_found"
    )
    r = b.client.post(f"/api/v1/challenges/{sent['id']}/decline")
    assert r.status_code == 200 and r.json()["status"] == "declined"
    assert r.json()["table_id"] is None
    answer = FeedEntry.objects.get(user=a.user, kind="challenge_answered")
    assert answer.data["answer"] == "declined"
    assert not Table.objects.filter(owner=a.user).exists()
    # once declined, a new challenge to the same player may be sent
    assert challenge(a, b).status_code == 201


def test_one_pending_challenge_per_pair(players) -> None:
    a, b = players[0], players[1]
    assert challenge(a, b).status_code == 201
    assert_problem(challenge(a, b), 409, "challenge_pending")
    assert challenge(b, a).status_code == 201  # the other way round is another challenge


def test_challenge_refusals(players) -> None:
    a, b = players[0], players[1]
    assert_problem(challenge(a, a), 400, "cannot_challenge_self")
    r = a.client.post("/api/v1/challenges", {"username": "nobody", "stake": 10}, format="json")
    assert_problem(r, 404, "not_found")
    assert_problem(challenge(a, b, room="no-such-room"), 400, "invalid_room")
    assert_problem(challenge(a, b, stake=0), 400, "invalid")
    r = a.client.post("/api/v1/challenges", {"username": b.user.username}, format="json")
    assert_problem(r, 400, "invalid")


def test_a_blocked_player_cannot_challenge_me(players) -> None:
    me, other = players[0], players[1]
    block(me, other)
    assert_problem(challenge(other, me), 403, "player_blocked")
    assert_problem(challenge(me, other), 403, "player_blocked")  # nor I the one I block
    assert not FeedEntry.objects.filter(user=me.user, kind="challenge_received").exists()


def test_a_block_since_the_challenge_refuses_its_accept(players) -> None:
    a, b = players[0], players[1]
    sent = challenge(a, b).json()
    block(a, b)
    assert_problem(b.client.post(f"/api/v1/challenges/{sent['id']}/accept"), 403, "player_blocked")
    assert Challenge.objects.get(pk=sent["id"]).status == "pending"


def test_a_challenge_expires(players) -> None:
    a, b = players[0], players[1]
    sent = challenge(a, b).json()
    Challenge.objects.filter(pk=sent["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    # it reads as expired
    assert b.client.get(f"/api/v1/challenges/{sent['id']}").json()["status"] == "expired"
    assert b.client.get("/api/v1/challenges?status=pending").json() == []
    assert [c["id"] for c in b.client.get("/api/v1/challenges?status=expired").json()] == [
        sent["id"]
    ]
    # it cannot be answered
    assert_problem(
        b.client.post(f"/api/v1/challenges/{sent['id']}/accept"), 409, "challenge_expired"
    )
    assert_problem(
        b.client.post(f"/api/v1/challenges/{sent['id']}/decline"), 409, "challenge_expired"
    )
    assert not Table.objects.filter(owner=a.user).exists()
    # and a new one to the same player may be sent (the old one stored as expired)
    assert challenge(a, b).status_code == 201
    assert Challenge.objects.get(pk=sent["id"]).status == "expired"


def test_accept_goes_through_the_seat_rules(players) -> None:
    """The challenged player's seat is refused as any seat would be: not enough Quan to hold
    15 × stake → 409, no table opened, the challenge still pending."""
    a, b = players[0], players[1]
    balance_adjust(user=a.user, amount=200_000, reason="test", key=f"test:rich:{a.id}")
    available = wallet_funds(b.user).available
    stake = available // 15 + 1  # b cannot hold 15 × stake; a can
    assert wallet_funds(a.user).available >= 15 * stake
    sent = challenge(a, b, stake=stake).json()
    r = b.client.post(f"/api/v1/challenges/{sent['id']}/accept")
    assert r.status_code == 409, r.content
    assert r.json()["code"] in ("insufficient_balance", "room_requirements_not_met")
    assert not Table.objects.filter(owner=a.user).exists()
    assert Challenge.objects.get(pk=sent["id"]).status == "pending"
    assert wallet_funds(a.user).held == 0


def test_challenges_are_only_mine(players) -> None:
    sent = challenge(players[0], players[1]).json()
    assert_problem(players[2].client.get(f"/api/v1/challenges/{sent['id']}"), 404, "not_found")
    assert players[2].client.get("/api/v1/challenges").json() == []


def test_the_refusals_speak_vietnamese(players) -> None:
    table = create(players[0], private=True).json()
    r = players[1].client.post(
        f"/api/v1/tables/{table['id']}/join", {}, format="json", HTTP_ACCEPT_LANGUAGE="vi"
    )
    assert r.json()["detail"] == "Bàn này là bàn riêng: hãy vào bằng mã mời của bàn."
    r = players[0].client.put(
        f"/api/v1/me/blocks/{players[0].user.username}", HTTP_ACCEPT_LANGUAGE="vi"
    )
    assert r.json()["detail"] == "Bạn không thể chặn chính mình."


def test_the_lobby_does_not_count_private_tables(players) -> None:
    def nen_dat() -> dict[str, Any]:
        rooms = players[1].client.get("/api/v1/rooms").json()
        return next(r for r in rooms if r["slug"] == "nen-dat")

    before = nen_dat()
    create(players[0], private=True)
    after = nen_dat()
    assert after["open_tables"] == before["open_tables"]
    assert after["players_seated"] == before["players_seated"]


def test_staff_see_challenges_and_blocks_in_the_admin(players, make_user) -> None:
    from django.test import Client

    sent = challenge(players[0], players[1]).json()
    block(players[2], players[3])
    user, _token = make_user(username="friends_admin", is_staff=True, is_superuser=True)
    staff = Client()
    staff.force_login(user)
    for model in ("challenge", "block"):
        r = staff.get(f"/admin/games/{model}/")
        assert r.status_code == 200, model
    r = staff.get(f"/admin/games/challenge/{sent['id']}/change/")
    assert r.status_code == 200
    assert staff.post(f"/admin/games/challenge/{sent['id']}/change/", {}).status_code == 403


def test_the_sweep_expires_a_challenge_once_with_a_feed_entry_to_both(players) -> None:
    from games.services.challenges import challenges_expire

    a, b = players[0], players[1]
    sent = challenge(a, b).json()
    fresh = challenge(a, players[2]).json()
    Challenge.objects.filter(pk=sent["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    # the beat's sweep stores it as expired, twice over as it may run
    assert challenges_expire() == 1
    assert challenges_expire() == 0
    assert Challenge.objects.get(pk=sent["id"]).status == "expired"
    assert Challenge.objects.get(pk=fresh["id"]).status == "pending"
    # and both players read it in their feed, once
    mine = FeedEntry.objects.get(user=a.user, kind="challenge_expired")
    assert mine.data["challenge_id"] == sent["id"] and mine.data["direction"] == "sent"
    assert mine.data["username"] == b.user.username
    theirs = FeedEntry.objects.get(user=b.user, kind="challenge_expired")
    assert theirs.data["direction"] == "received"
    feed = a.client.get("/api/v1/me/feed?limit=100").json()["entries"]
    assert [e["kind"] for e in feed].count("challenge_expired") == 1


def test_the_challenger_cancels_a_pending_challenge(players) -> None:
    a, b = players[0], players[1]
    sent = challenge(a, b).json()
    # the challenged cannot cancel it, a stranger cannot see it
    assert_problem(b.client.post(f"/api/v1/challenges/{sent['id']}/cancel"), 403, "not_challenger")
    assert_problem(
        players[2].client.post(f"/api/v1/challenges/{sent['id']}/cancel"), 404, "not_found"
    )
    r = a.client.post(f"/api/v1/challenges/{sent['id']}/cancel")
    assert r.status_code == 200, r.content
    assert r.json()["status"] == "cancelled" and r.json()["answered_at"]
    entry = FeedEntry.objects.get(user=b.user, kind="challenge_cancelled")
    assert entry.data["challenge_id"] == sent["id"] and entry.data["username"] == a.user.username
    # it cannot be answered or cancelled again, and a new one may be sent
    assert_problem(
        b.client.post(f"/api/v1/challenges/{sent['id']}/accept"), 409, "challenge_answered"
    )
    assert_problem(
        a.client.post(f"/api/v1/challenges/{sent['id']}/cancel"), 409, "challenge_answered"
    )
    assert challenge(a, b).status_code == 201


def test_an_expired_challenge_cannot_be_cancelled(players) -> None:
    a, b = players[0], players[1]
    sent = challenge(a, b).json()
    Challenge.objects.filter(pk=sent["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert_problem(
        a.client.post(f"/api/v1/challenges/{sent['id']}/cancel"), 409, "challenge_expired"
    )
