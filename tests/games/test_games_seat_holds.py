"""Holds: a seat holds 15 × stake of its player's wallet while it sits; what is
held is not available to another seat, nor to be spent; settlements pay from the hold at their
own table and free Quan only; the database refuses a balance below what is held."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.test import Client

from accounts.hold_selectors import hold_amount, wallet_funds, wallet_holds
from accounts.holds import hold_hash, hold_release, hold_set, wallets_lock
from accounts.ledger import balance_adjust, wallet_for
from accounts.ledger_selectors import ledger_problems
from accounts.models import LedgerHold, User
from games.models import FeedEntry, Hand, Seat, Table
from games.rules.verify import verify_export
from games.services.quan_booking import hand_settle
from tests.games.conftest import start_table
from tests.games.decks import WIN_DECK, WIN_SEAT
from tests.games.test_games_concurrency import at_once
from tests.games.test_games_hands_api import assert_problem, play_to_end

pytestmark = pytest.mark.django_db

WELCOME = 50_000


def create(player: Any, stake: int, **extra: Any) -> int:
    r = player.client.post("/api/v1/tables", {"name": "t", "stake": stake, **extra}, format="json")
    assert r.status_code == 201, r.content
    return r.json()["id"]


def join(player: Any, table_id: int) -> Any:
    return player.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")


def spend_down_to(player: Any, balance: int) -> None:
    """An admin adjustment leaving the player ``balance`` Quan (before it sits anywhere)."""
    balance_adjust(
        user=player.user,
        amount=balance - wallet_funds(player.user).balance,
        reason="test",
        key=f"test:down:{player.user.pk}:{balance}",
    )


def test_sitting_holds_15_stakes_and_me_shows_balance_held_available_and_holds(
    make_player,
) -> None:
    owner, guest = make_player(), make_player()
    table_id = create(owner, 100)
    # The owner's seat holds 15 × stake from the start (creating needs 10 × stake available).
    assert wallet_funds(owner.user).held == 1_500
    r = join(guest, table_id)
    assert r.status_code == 200, r.content
    me = guest.client.get("/api/v1/me").json()
    assert (me["balance"], me["held"], me["available"]) == (WELCOME, 1_500, WELCOME - 1_500)
    assert [(h["table_id"], h["stake"], h["amount"]) for h in me["holds"]] == [
        (table_id, 100, 1_500)
    ]
    # A hold moves no Quan: the balance is untouched and no ledger transaction names it.
    assert wallet_funds(guest.user).balance == WELCOME
    assert list(LedgerHold.objects.filter(table_id=table_id).values_list("kind", "amount")) == [
        ("placed", 1_500),
        ("placed", 1_500),
    ]
    call_command("ledger_check")


def test_leaving_between_hands_releases_the_hold(make_player) -> None:
    owner, guest = make_player(), make_player()
    table_id = create(owner, 100)
    assert join(guest, table_id).status_code == 200
    r = guest.client.post(f"/api/v1/tables/{table_id}/leave", {}, format="json")
    assert r.status_code == 200, r.content
    assert wallet_funds(guest.user).held == 0 and wallet_holds(guest.user) == []
    assert guest.client.get("/api/v1/me").json()["holds"] == []
    kinds = LedgerHold.objects.filter(account=wallet_for(guest.user)).values_list("kind", flat=True)
    assert list(kinds) == ["placed", "released"]
    call_command("ledger_check")


def test_a_practice_table_holds_nothing(make_player) -> None:
    player = make_player()
    r = player.client.post(
        "/api/v1/tables", {"name": "p", "practice": True, "bots": 1}, format="json"
    )
    assert r.status_code == 201, r.content
    assert wallet_funds(player.user).held == 0
    assert not LedgerHold.objects.exists()


def test_held_quan_is_not_available_to_another_seat_nor_to_spend(make_player) -> None:
    owners = [make_player() for _ in range(2)]
    hero = make_player()
    spend_down_to(hero, 2_000)
    first, second = create(owners[0], 100), create(owners[1], 100)
    assert join(hero, first).status_code == 200  # holds 1,500 of 2,000
    body = assert_problem(join(hero, second), 409, "insufficient_balance")
    assert (body["needed"], body["available"], body["held"]) == (1_500, 500, 1_500)
    # Creating a table needs 10 × stake available too.
    body = assert_problem(
        hero.client.post("/api/v1/tables", {"name": "t", "stake": 60}, format="json"),
        409,
        "insufficient_balance",
    )
    assert (body["needed"], body["available"], body["held"]) == (600, 500, 1_500)
    # The ledger refuses to spend the hold (an admin debit of 501 leaves 1,499 < 1,500).
    with pytest.raises(Exception) as refused:
        balance_adjust(user=hero.user, amount=-501, reason="t", key="t:501")
    assert getattr(refused.value, "code", None) == "insufficient_balance"
    # Quick-join counts what is available too: no table it can afford (the open one at 100
    # needs 1,500), and opening one at 100 needs 1,000 of the 500 free.
    body = assert_problem(
        hero.client.post("/api/v1/rooms/nen-dat/quick-join", {}, format="json"),
        409,
        "insufficient_balance",
    )
    assert (body["available"], body["held"]) == (500, 1_500)
    call_command("ledger_check")


def test_the_database_refuses_a_hold_beyond_the_balance_and_edits(make_player) -> None:
    owner = make_player()
    table_id = create(owner, 100)
    wallet = wallet_for(owner.user)
    prev = LedgerHold.objects.filter(account=wallet).order_by("-id").first()
    assert prev is not None
    digest = hold_hash(
        prev=prev.hash,
        account=wallet.pk,
        table=table_id,
        kind="resized",
        amount=WELCOME + 1,
        hand=None,
        reason="x",
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerHold.objects.create(
            account=wallet,
            table_id=table_id,
            kind="resized",
            amount=WELCOME + 1,
            reason="x",
            prev_hash=prev.hash,
            hash=digest,
        )
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE accounts_ledgerhold SET amount = 1 WHERE id = %s", [prev.pk])
    with (  # the application's role may not write the column (the guard's message as one role)
        pytest.raises(DatabaseError, match="permission denied|moves only with a hold event"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("UPDATE accounts_ledgeraccount SET held = 0 WHERE id = %s", [wallet.pk])
    with pytest.raises(IntegrityError), transaction.atomic():  # a second "placed" at one table
        LedgerHold.objects.create(
            account=wallet,
            table_id=table_id,
            kind="placed",
            amount=10,
            prev_hash=prev.hash,
            hash=hold_hash(
                prev=prev.hash,
                account=wallet.pk,
                table=table_id,
                kind="placed",
                amount=10,
                hand=None,
                reason="",
            ),
        )
    assert ledger_problems() == []


def test_a_loser_pays_from_its_hold_here_and_free_quan_never_its_other_holds(
    make_player,
) -> None:
    # Given a hero holding exactly two seats' worth (stake 10: 150 + 150, nothing free),
    hero = make_player()
    spend_down_to(hero, 300)
    others = [make_player() for _ in range(3)]
    elsewhere = create(make_player(), 10)
    assert join(hero, elsewhere).status_code == 200
    # who sits at a second table (seat 1; seat 2 wins the scripted hand) and loses there,
    ids = start_table([others[0], hero, *others[1:]], WIN_DECK)
    assert WIN_SEAT != 1
    play_to_end([others[0], hero, *others[1:]], ids)
    hand_settle(hand_id=ids["hand"])
    hand = Hand.objects.get(pk=ids["hand"])
    # it paid what it owed from its 150 held there: the cap it was settled under is 150,
    assert hand.quan["balances"][1] == 150
    paid = -hand.quan["seats"][1]["net"]
    assert 0 < paid <= 150
    # its hold at the other table is untouched, and its hold here is what is left of it.
    wallet = wallet_for(hero.user)
    assert hold_amount(account_id=wallet.pk, table_id=elsewhere) == 150
    assert hold_amount(account_id=wallet.pk, table_id=ids["table"]) == 150 - paid
    assert wallet_funds(hero.user).balance == 300 - paid
    # At the next deal it cannot hold 15 × stake there: it is unseated and its hold released.
    players = [others[0], hero, *others[1:]]
    for p in players:
        p.client.post(f"/api/v1/tables/{ids['table']}/ready", {}, format="json")
    assert not Seat.objects.filter(table_id=ids["table"], player=hero.user).exists()
    assert hold_amount(account_id=wallet.pk, table_id=ids["table"]) == 0
    assert wallet_funds(hero.user).held == 150
    told = FeedEntry.objects.filter(user=hero.user, kind="seats_changed", table_id=ids["table"])
    assert [(e.data["change"], e.data["reason"]) for e in told.order_by("seq")][-1] == (
        "left",
        "stake",
    )
    assert ledger_problems() == []


def test_the_8_tables_case_gets_the_seats_its_money_covers_and_pays_winners_in_full(
    make_player,
) -> None:
    # Given one 50,000-Quan wallet and 8 tables of stake 3,333 (15 × stake = 49,995),
    hero = make_player()
    tables = []
    for _ in range(8):
        owner = make_player()
        r = owner.client.post(
            "/api/v1/tables",
            {"name": "t", "stake": 3_333, "deck": WIN_DECK, "dealer": 0},
            format="json",
        )
        assert r.status_code == 201, r.content
        tables.append((owner, r.json()["id"]))
    # it gets the one seat its money covers and is refused the seven others,
    answers = [join(hero, table_id) for _, table_id in tables]
    assert [a.status_code for a in answers] == [200] + [409] * 7
    for refused in answers[1:]:
        body = assert_problem(refused, 409, "insufficient_balance")
        assert (body["needed"], body["available"], body["held"]) == (49_995, 5, 49_995)
    # and the hand it loses there pays every winner in full.
    owner, table_id = tables[0]
    rest = [make_player(), make_player()]
    for p in rest:
        assert join(p, table_id).status_code == 200
    seated = [owner, hero, *rest]
    hand_id = None
    for p in seated:
        r = p.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
        hand_id = r.json()["hand_id"] or hand_id
    assert hand_id is not None
    ids = {"table": table_id, "hand": hand_id}
    play_to_end(seated, ids)
    hand_settle(hand_id=hand_id)
    hand = Hand.objects.get(pk=hand_id)
    assert hand.quan["capped"] == []
    transfers = hand.result["settlement"]["transfers"]
    owed_by_hero = sum(t["points"] for t in transfers if t["from"] == 1) * 3_333
    assert owed_by_hero > 0 and -hand.quan["seats"][1]["net"] == owed_by_hero
    winner = hand.result["outcome"]["seat"]
    gross = sum(t["points"] for t in transfers if t["to"] == winner) * 3_333
    assert hand.quan["seats"][winner]["net"] + hand.quan["fees"] == gross
    call_command("ledger_check")


@pytest.mark.django_db(transaction=True)
def test_8_concurrent_joins_backed_by_one_seat_of_quan_exactly_one_succeeds(make_player) -> None:
    # Given one wallet covering one seat at stake 3,333 and 8 open tables,
    hero = make_player()
    table_ids = [create(make_player(), 3_333) for _ in range(8)]
    # when it joins all 8 at once (8 real connections),
    clients = [hero.client.__class__() for _ in range(8)]
    for client in clients:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {hero.token}")
    responses = at_once(
        8, lambda i: clients[i].post(f"/api/v1/tables/{table_ids[i]}/join", {}, format="json")
    )
    # exactly one succeeds; the others are refused with what is needed, available and held.
    assert sorted(r.status_code for r in responses) == [200] + [409] * 7
    for r in responses:
        if r.status_code == 409:
            body = r.json()
            assert body["code"] == "insufficient_balance"
            assert (body["needed"], body["available"], body["held"]) == (49_995, 5, 49_995)
    assert Seat.objects.filter(player=hero.user).count() == 1
    assert wallet_funds(hero.user).held == 49_995
    assert Table.objects.filter(pk__in=table_ids).count() == 8
    assert ledger_problems() == []


def test_ledger_check_finds_a_hold_left_without_a_seat(make_player) -> None:
    # Given a hold at a table where its player does not sit (a bug that forgot to release it),
    owner, stranger = make_player(), make_player()
    table_id = create(owner, 100)
    table = Table.objects.get(pk=table_id)
    with transaction.atomic():
        account = wallets_lock([stranger.user])[stranger.user.pk]
        hold_set(account=account, table=table, amount=500, reason="bug")
    # ledger_check names it (and still finds held = Σ holds),
    problems = ledger_problems()
    assert [p.check for p in problems] == ["hold_seat"]
    assert f"table {table_id}" in problems[0].detail
    with pytest.raises(CommandError):
        call_command("ledger_check", stdout=StringIO())
    # and releasing it makes the books clean again.
    with transaction.atomic():
        account = wallets_lock([stranger.user])[stranger.user.pk]
        hold_set(account=account, table=table, amount=0, reason="fix")
    assert ledger_problems() == []


def test_the_admin_shows_held_available_and_the_hold_events(make_player) -> None:
    owner = make_player()
    table_id = create(owner, 100)
    staff = User.objects.create_superuser(username="holds-admin", password="x")
    client = Client()
    client.force_login(staff)
    page = client.get(f"/admin/accounts/user/{owner.user.pk}/change/").content.decode()
    assert "Quan held (seats)" in page and "1500" in page and "48500" in page
    assert f"table {table_id}: 1500" in page
    events = client.get("/admin/accounts/ledgerhold/")
    assert events.status_code == 200 and b"placed" in events.content.lower()
    assert client.get("/admin/accounts/ledgeraccount/").status_code == 200


def test_a_capped_payer_holding_seats_elsewhere_exports_and_verifies(make_player) -> None:
    # Given a payer that holds 150 at another table and has 1 Quan free besides (its seat here
    # taken before holds existed: nothing held here),
    seated = [make_player() for _ in range(4)]
    payer = seated[1]
    elsewhere = create(make_player(), 10)
    assert join(payer, elsewhere).status_code == 200
    ids = start_table(seated, WIN_DECK)
    table = Table.objects.get(pk=ids["table"])
    hold_release(user=payer.user, table=table)
    balance_adjust(
        user=payer.user, amount=151 - wallet_funds(payer.user).balance, reason="t", key="t:151"
    )
    play_to_end(seated, ids)
    hand_settle(hand_id=ids["hand"])
    hand = Hand.objects.get(pk=ids["hand"])
    # the settlement capped it at the 1 Quan it had free, not at its 151,
    assert hand.quan["capped"] == [1] and hand.quan["balances"][1] == 1
    assert hold_amount(account_id=wallet_for(payer.user).pk, table_id=elsewhere) == 150
    # and its export proves it: the previous entry's 151 less the 150 held elsewhere.
    auditor = make_player()
    auditor.user.user_permissions.add(Permission.objects.get(codename="audit_hands"))
    doc = auditor.client.get(f"/api/v1/hands/{hand.pk}/export").json()
    assert [(c["seat"], c["held_elsewhere"]) for c in doc["caps"]] == [(1, 150)]
    assert doc["caps"][0]["entry"]["balance_after"] == 151
    assert verify_export(doc) is None
    forged = json.loads(json.dumps(doc))
    forged["caps"][0]["held_elsewhere"] = 0
    assert verify_export(forged) is not None
    assert ledger_problems() == []
