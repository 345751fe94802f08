"""The house and issuance sub-accounts and the ledger's hash chains, one per shard (accounts 0017):
a fee goes to its hand's shard, a grant comes from its player's, each shard extends
its own chain, and the family's balance, ``ledger_check`` and the hand's audit read them all."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from accounts.ledger import (
    balance_adjust,
    house_account,
    issuance_account,
    ledger_post,
    pot_account,
    shard_of,
    wallet_for,
)
from accounts.ledger_selectors import (
    house_balance,
    issuance_balance,
    ledger_head,
    ledger_problems,
    wallet_balance,
)
from accounts.models import LedgerAccount, LedgerTransaction, User
from core.errors import InvalidInput
from games.models import Table
from tests.accounts.test_accounts_ledger_concurrency import at_once
from tests.db_owner import as_owner


def funded(name: str, amount: int = 10_000) -> User:
    user = User.objects.create_user(username=name)
    balance_adjust(user=user, amount=amount, reason="test funds", key=f"fund-{name}")
    return user


class FakeHand:
    """What the ledger reads of a hand to choose its shard: its table's id."""

    def __init__(self, table_id: int) -> None:
        self.table_id = table_id


def settle(players: list[User], hand_id: int, *, fee: int = 10) -> LedgerTransaction:
    """A hand at table ``hand_id`` (its shard): the others pay the first 100 each, the house
    takes ``fee`` of it."""
    losers = players[1:]
    legs = [(wallet_for(u), -100) for u in losers]
    legs += [(wallet_for(players[0]), 100 * len(losers) - fee)]
    legs += [(house_account(hand=FakeHand(hand_id)), fee)]
    return ledger_post(kind="hand_settlement", key=f"hand:{hand_id}:settle", legs=legs)


@pytest.mark.django_db
def test_a_hands_fee_goes_to_its_tables_shard_and_the_house_is_the_familys_sum(settings):
    settings.CHAN_HOUSE_SHARDS = 8
    players = [funded(n) for n in ("a", "b", "c", "d")]
    # given hands at tables 3, 11 (both shard 3) and 12 (shard 4)
    for hand_id in (3, 11, 12):
        settle(players, hand_id)
    # then shard 3 took two fees, shard 4 one, the parent none; the house is their sum
    assert house_account(shard=3).balance == 20 and house_account(shard=4).balance == 10
    assert house_account().balance == 0
    assert house_balance() == 30
    child = house_account(shard=3)
    assert (child.parent_id, child.kind) == (house_account().pk, "house")
    assert house_account(hand=FakeHand(19)) == child  # 19 mod 8 = 3: the same row
    # and every total still reconciles
    assert sum(wallet_balance(u) for u in players) + house_balance() == -issuance_balance()
    assert ledger_problems() == []


@pytest.mark.django_db
def test_what_the_parents_held_before_the_split_still_counts(settings):
    settings.CHAN_HOUSE_SHARDS = 8
    players = [funded(n) for n in ("a", "b")]
    # given postings to the parents, as every posting was before accounts 0017
    ledger_post(
        kind="adjustment",
        key="old-grant",
        legs=[(issuance_account(), -700), (wallet_for(players[1]), 700)],
    )
    ledger_post(
        kind="hand_settlement",
        key="old-hand",
        legs=[(wallet_for(players[1]), -50), (wallet_for(players[0]), 45), (house_account(), 5)],
    )
    # and postings to the shards since
    settle(players, 3)
    # then each family's balance is its parent's and its children's, and the books reconcile
    assert (house_account().balance, house_balance()) == (5, 15)
    assert issuance_account().balance == -700 and issuance_balance() == -700 - 2 * 10_000
    assert sum(wallet_balance(u) for u in players) + house_balance() == -issuance_balance()
    assert ledger_problems() == []


@pytest.mark.django_db
def test_a_players_grants_come_from_its_issuance_shard(settings):
    settings.CHAN_HOUSE_SHARDS = 4
    users = [funded(f"u{i}", 100 * (i + 1)) for i in range(6)]
    for user in users:
        shard = issuance_account(user=user)
        assert shard.shard == user.pk % 4 and shard.parent_id == issuance_account().pk
    assert issuance_balance() == -sum(100 * (i + 1) for i in range(6))
    assert issuance_account().balance == 0  # the parent keeps only what predates the split
    assert LedgerAccount.objects.filter(kind="issuance", parent__isnull=True).count() == 1


@pytest.mark.django_db
def test_each_shard_extends_its_own_chain(settings):
    settings.CHAN_HOUSE_SHARDS = 8
    players = [funded(n) for n in ("a", "b")]
    first, other, second = settle(players, 5), settle(players, 6), settle(players, 13)
    # tables 5 and 13 share shard 5: the second chains the first; table 6 is on chain 6
    assert (first.chain, other.chain, second.chain) == (5, 6, 5)
    assert second.prev_hash == first.hash
    assert other.prev_hash != first.hash
    head = {c["chain"]: c for c in ledger_head()["chains"]}
    assert (head[5]["tx_id"], head[5]["hash"]) == (second.pk, second.hash)
    assert (head[6]["tx_id"], head[6]["hash"]) == (other.pk, other.hash)
    assert ledger_problems() == []


@pytest.mark.django_db
def test_a_transaction_without_a_shard_leg_takes_the_chain_of_its_table_or_user(settings):
    settings.CHAN_HOUSE_SHARDS = 8
    owner = funded("owner")
    table = Table.objects.create(owner=owner, name="t", stake=10)
    tx = ledger_post(
        kind="ga_gop",
        key="pot-in",
        legs=[(wallet_for(owner), -5), (pot_account(table), 5)],
        table=table,
    )
    assert tx.chain == shard_of(table) == table.pk % 8
    refund = ledger_post(
        kind="ga_gop_refund",
        key="pot-out",
        legs=[(pot_account(table), -5), (wallet_for(owner), 5)],
        user=owner,
        table=table,
    )
    assert refund.chain == table.pk % 8  # the table's chain, as the pot's other moves
    grant = balance_adjust(user=owner, amount=5, reason="x", key="more")
    assert grant.chain == owner.pk % 8  # the player's issuance shard
    assert ledger_problems() == []


@pytest.mark.django_db
def test_one_shard_is_the_one_chain_of_before(settings):
    settings.CHAN_HOUSE_SHARDS = 1
    players = [funded(n) for n in ("a", "b")]
    txs = [settle(players, h) for h in (5, 6, 7)]
    assert {tx.chain for tx in txs} == {0}
    assert [t.prev_hash for t in txs[1:]] == [t.hash for t in txs[:-1]]
    assert LedgerAccount.objects.filter(kind="house", parent__isnull=False).count() == 1


@pytest.mark.django_db
def test_a_shard_must_be_a_whole_number_from_zero():
    for bad in (-1, True, "3"):
        with pytest.raises(InvalidInput):
            house_account(shard=bad)  # type: ignore[arg-type]


@pytest.mark.django_db
def test_the_database_refuses_a_stray_or_moved_sub_account():
    house = house_account()
    child = house_account(shard=2)
    with connection.cursor() as cursor:
        # a wallet kind may not have a shard; a shard without a parent is refused too
        for sql, params in (
            (
                "INSERT INTO accounts_ledgeraccount (kind, balance, created_at, parent_id, shard)"
                " VALUES ('house', 0, now(), NULL, 4)",
                [],
            ),
            (  # an issuance child of the house
                "INSERT INTO accounts_ledgeraccount (kind, balance, created_at, parent_id, shard)"
                " VALUES ('issuance', 0, now(), %s, 5)",
                [house.pk],
            ),
            (  # a second child for shard 2
                "INSERT INTO accounts_ledgeraccount (kind, balance, created_at, parent_id, shard)"
                " VALUES ('house', 0, now(), %s, 2)",
                [house.pk],
            ),
            ("UPDATE accounts_ledgeraccount SET shard = 7 WHERE id = %s", [child.pk]),
            ("UPDATE accounts_ledgeraccount SET parent_id = NULL WHERE id = %s", [child.pk]),
        ):
            with pytest.raises(DatabaseError), transaction.atomic():
                cursor.execute(sql, params)
    assert house_account(shard=2).parent_id == house.pk


@pytest.mark.django_db
def test_ledger_check_finds_a_transaction_moved_to_another_chain(settings):
    settings.CHAN_HOUSE_SHARDS = 8
    players = [funded(n) for n in ("a", "b")]
    settle(players, 5)
    moved = settle(players, 13)
    settle(players, 21)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    as_owner(
        "ALTER TABLE accounts_ledgertransaction"
        " DISABLE TRIGGER accounts_ledgertransaction_append_only"
    )
    with connection.cursor() as cursor:
        cursor.execute("UPDATE accounts_ledgertransaction SET chain = 6 WHERE id = %s", [moved.pk])
    as_owner(
        "ALTER TABLE accounts_ledgertransaction"
        " ENABLE TRIGGER accounts_ledgertransaction_append_only"
    )
    problems = ledger_problems()
    assert problems and {p.check for p in problems} == {"chain"}
    assert any("on chain 5" in p.detail for p in problems)  # hand 21 no longer follows hand 5


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers")
def test_settlements_on_every_shard_at_once_book_without_deadlock(settings):
    settings.CHAN_HOUSE_SHARDS = 4
    # given 8 tables of 4 players, and 3 rounds of hands spread over the 4 shards
    tables = [[funded(f"t{t}p{i}") for i in range(4)] for t in range(8)]
    for r in range(3):
        # when every table settles a hand at the same instant (two per shard)
        results = at_once(8, lambda i, r=r: settle(tables[i], 100 * r + i))
        # then all are booked
        assert all(isinstance(tx, LedgerTransaction) for tx in results), results
    assert house_balance() == 8 * 3 * 10
    assert sorted({tx.chain for tx in LedgerTransaction.objects.filter(kind="hand_settlement")})
    assert ledger_problems() == []
