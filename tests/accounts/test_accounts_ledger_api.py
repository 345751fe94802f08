"""The ledger over HTTP: /me's balance, POST /me/bonus, GET /me/ledger — status codes,
problem+json codes, pagination, and every response checked against the OpenAPI schema."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.ledger import balance_adjust, wallet_for
from accounts.ledger_selectors import wallet_balance
from accounts.models import LedgerEntry, User
from tests.games.test_games_schema import Checker

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"
REGISTER = {"username": "lan", "password": "a-Long-enough-pass-9"}


@pytest.fixture(scope="module")
def check() -> Checker:
    response = APIClient().get("/api/schema/?format=json")
    assert response.status_code == 200
    return Checker(response.json())


@pytest.fixture
def lan(api_client) -> tuple[User, APIClient]:
    body = api_client.post("/api/v1/auth/register", REGISTER, format="json").json()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {body['token']}")
    return User.objects.get(pk=body["user"]["id"]), client


def utc(value: str) -> dt.datetime:
    """A timestamp the API returned: ISO 8601 in UTC."""
    assert value.endswith(("Z", "+00:00")), value
    return dt.datetime.fromisoformat(value)


def test_me_shows_the_real_balance(lan, check):
    user, client = lan
    assert check(client.get("/api/v1/me"), "/api/v1/me", "get")["balance"] == 50_000
    balance_adjust(user=user, amount=-1_234, reason="test", key="k")
    assert client.get("/api/v1/me").json()["balance"] == 48_766


def test_bonus_is_credited_once_a_day_then_409_with_next_claim_at(lan, check):
    user, client = lan
    first = check(client.post("/api/v1/me/bonus"), "/api/v1/me/bonus", "post")
    assert first["amount"] == 10_000 and first["balance"] == 60_000
    claimed_at, next_at = utc(first["claimed_at"]), utc(first["next_claim_at"])
    assert dt.timedelta(0) < next_at - claimed_at <= dt.timedelta(days=1)
    assert next_at.astimezone(dt.timezone(dt.timedelta(hours=7))).time() == dt.time(0, 0)

    again = client.post("/api/v1/me/bonus", HTTP_ACCEPT_LANGUAGE="en")
    body = check(again, "/api/v1/me/bonus", "post")
    assert again.status_code == 409 and again["Content-Type"] == PROBLEM
    assert body["code"] == "bonus_already_claimed"
    assert utc(body["next_claim_at"]) == next_at
    assert wallet_balance(user) == 60_000


def test_bonus_and_ledger_need_a_token(api_client, check):
    for method, path in (("post", "/api/v1/me/bonus"), ("get", "/api/v1/me/ledger")):
        response = getattr(api_client, method)(path)
        assert check(response, path, method)["code"] == "not_authenticated"


def test_ledger_lists_my_entries_newest_first_summing_to_my_balance(lan, check):
    user, client = lan
    client.post("/api/v1/me/bonus")
    balance_adjust(user=user, amount=-500, reason="fine", key="k")
    body = check(client.get("/api/v1/me/ledger"), "/api/v1/me/ledger", "get")

    assert [e["kind"] for e in body["results"]] == ["adjustment", "daily_bonus", "welcome_grant"]
    assert [e["amount"] for e in body["results"]] == [-500, 10_000, 50_000]
    assert [e["balance_after"] for e in body["results"]] == [59_500, 60_000, 50_000]
    assert sum(e["amount"] for e in body["results"]) == wallet_balance(user) == 59_500
    assert body["next"] is None
    newest = body["results"][0]
    assert set(newest) == {
        "id", "kind", "amount", "balance_after", "created_at", "hand_id", "table_id", "memo",
        "transaction_id", "transaction_hash", "inclusion",
    }  # fmt: skip
    assert newest["inclusion"] is None and body["log_head"] is None  # (proofs not asked)
    assert newest["memo"] == "fine" and newest["hand_id"] is None and newest["table_id"] is None
    utc(newest["created_at"])


def test_ledger_pages_with_a_cursor_until_next_is_null(lan, check):
    user, client = lan
    for i in range(6):
        balance_adjust(user=user, amount=i + 1, reason=f"r{i}", key=f"k{i}")
    seen: list[dict[str, Any]] = []
    url = "/api/v1/me/ledger?limit=3"
    pages = 0
    while True:
        body = check(client.get(url), "/api/v1/me/ledger", "get")
        seen += body["results"]
        pages += 1
        if body["next"] is None:
            break
        url = f"/api/v1/me/ledger?limit=3&cursor={body['next']}"
    assert pages == 3
    ids = [e["id"] for e in seen]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 7
    assert sum(e["amount"] for e in seen) == wallet_balance(user)


def test_ledger_shows_only_my_wallet(lan):
    user, client = lan
    other = User.objects.create_user(username="other")
    balance_adjust(user=other, amount=99, reason="theirs", key="o")
    ids = {e["id"] for e in client.get("/api/v1/me/ledger").json()["results"]}
    assert ids == set(
        LedgerEntry.objects.filter(account=wallet_for(user)).values_list("id", flat=True)
    )


@pytest.mark.parametrize(
    "query", ["limit=0", "limit=201", "limit=x", "cursor=abc", "cursor=-1", "cursor=1e5"]
)
def test_ledger_refuses_bad_query_parameters(lan, check, query):
    _, client = lan
    response = client.get(f"/api/v1/me/ledger?{query}")
    body = check(response, "/api/v1/me/ledger", "get")
    assert response.status_code == 400 and body["code"] == "invalid"
    assert set(body["errors"]) <= {"limit", "cursor"}


def test_a_new_players_ledger_holds_its_welcome_grant(api_client, make_user, check):
    _, token = make_user()
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    body = check(api_client.get("/api/v1/me/ledger"), "/api/v1/me/ledger", "get")
    assert [(r["kind"], r["amount"]) for r in body["results"]] == [("welcome_grant", 50_000)]
    assert body["next"] is None
    assert api_client.get("/api/v1/me").json()["balance"] == 50_000


def test_the_schema_documents_the_ledger_endpoints(check):
    paths = check.schema["paths"]
    bonus = paths["/api/v1/me/bonus"]["post"]
    assert {"201", "401", "409", "429", "500"} <= set(bonus["responses"])
    ledger = paths["/api/v1/me/ledger"]["get"]
    assert {"200", "400", "401"} <= set(ledger["responses"])
    params = {p["name"] for p in ledger["parameters"]}
    assert {"cursor", "limit", "Accept-Language"} <= params


def test_the_ledger_head_is_the_last_transactions_hash_for_anyone_signed_in(lan, api_client, check):
    user, client = lan
    assert (
        check(api_client.get("/api/v1/ledger/head"), "/api/v1/ledger/head", "get")["code"]
        == "not_authenticated"
    )
    before = check(client.get("/api/v1/ledger/head"), "/api/v1/ledger/head", "get")
    tx = balance_adjust(user=user, amount=5, reason="test", key="head")
    after = check(client.get("/api/v1/ledger/head"), "/api/v1/ledger/head", "get")
    assert {k: after[k] for k in ("tx_id", "hash", "count")} == {
        "tx_id": tx.pk,
        "hash": tx.hash,
        "count": before["count"] + 1,
    }
    # the adjustment extends the chain of the player's issuance shard, as its grant did
    assert tx.prev_hash == before["hash"] != after["hash"]
    head = {c["chain"]: c for c in after["chains"]}[tx.chain]
    assert (head["tx_id"], head["hash"]) == (tx.pk, tx.hash)
    assert sum(c["count"] for c in after["chains"]) == after["count"]
    assert len(after["hash"]) == 64
