"""The transparency log's API over HTTP: the signed head and its key, consistency and inclusion
proofs that verify with the rules core, 400 problems for bad parameters, and a hand's export
carrying its head's inclusion proof under a signed head."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from rest_framework.test import APIClient

from games.rules.log_entries import hand_leaf_hash, key_id, ledger_leaf_hash, tree_head_message
from games.rules.merkle import verify_consistency, verify_inclusion
from games.services.quan_booking import hand_settle
from tests.games.test_games_hands_api import assert_problem, play_to_end
from tests.games.test_games_schema import Checker
from transparency.models import LogLeaf
from transparency.services import log_publish

pytestmark = pytest.mark.django_db

HEAD = "/api/v1/log/head"
KEY = "/api/v1/log/key"
CONSISTENCY = "/api/v1/log/proof/consistency"
INCLUSION = "/api/v1/log/proof/inclusion"


@pytest.fixture
def check() -> Checker:
    return Checker(APIClient().get("/api/schema/?format=json").json())


def test_the_head_and_key_verify_and_the_proofs_hold_between_heads(make_player, check) -> None:
    reader = make_player()
    assert_problem(reader.client.get(HEAD), 404, "log_empty")
    assert APIClient().get(HEAD).status_code == 401  # signed-in users only
    for _ in range(4):
        make_player()
    log_publish()
    first = check(reader.client.get(HEAD), HEAD, "get")
    key = check(reader.client.get(KEY), KEY, "get")
    raw = base64.b64decode(key["public_key"])
    assert key["key_id"] == first["key_id"] == key_id(raw)
    pem = load_pem_public_key(key["public_key_pem"].encode())
    assert isinstance(pem, Ed25519PublicKey)
    message = tree_head_message(
        size=first["size"], root=bytes.fromhex(first["root"]), timestamp_ms=first["timestamp"]
    )
    pem.verify(base64.b64decode(first["signature"]), message)  # raises if it does not verify
    # the log grows; the later head is consistent with the earlier
    for _ in range(3):
        make_player()
    log_publish()
    second = check(reader.client.get(HEAD), HEAD, "get")
    assert second["size"] == first["size"] + 3
    r = reader.client.get(CONSISTENCY, {"first": first["size"], "second": second["size"]})
    proof = check(r, CONSISTENCY, "get")["proof"]
    assert verify_consistency(
        first["size"],
        second["size"],
        bytes.fromhex(first["root"]),
        bytes.fromhex(second["root"]),
        [bytes.fromhex(p) for p in proof],
    )
    # every leaf's inclusion proof leads to the head's root
    for leaf in LogLeaf.objects.order_by("index"):
        r = reader.client.get(INCLUSION, {"leaf": leaf.leaf_hash, "size": second["size"]})
        body = check(r, INCLUSION, "get")
        assert body["index"] == leaf.index
        assert verify_inclusion(
            leaf.index,
            second["size"],
            bytes.fromhex(leaf.leaf_hash),
            [bytes.fromhex(p) for p in body["proof"]],
            bytes.fromhex(second["root"]),
        )


@pytest.mark.parametrize(
    ("path", "query", "status", "code"),
    [
        (CONSISTENCY, {}, 400, "invalid"),
        (CONSISTENCY, {"first": "x", "second": 2}, 400, "invalid"),
        (CONSISTENCY, {"first": -1, "second": 2}, 400, "invalid"),
        (CONSISTENCY, {"first": 3, "second": 2}, 400, "invalid"),
        (CONSISTENCY, {"first": 1, "second": 999}, 400, "size_out_of_range"),
        (CONSISTENCY, {"first": 1, "second": 2**70}, 400, "invalid"),
        (INCLUSION, {"leaf": "00" * 32}, 400, "invalid"),
        (INCLUSION, {"leaf": "zz" * 32, "size": 1}, 400, "invalid"),
        (INCLUSION, {"leaf": "AB" * 32, "size": 1}, 400, "invalid"),
        (INCLUSION, {"leaf": "ab", "size": 1}, 400, "invalid"),
        (INCLUSION, {"leaf": "ab" * 32, "size": 0}, 400, "invalid"),
        (INCLUSION, {"leaf": "ab" * 32, "size": 999}, 400, "size_out_of_range"),
        (INCLUSION, {"leaf": "ab" * 32, "size": 2}, 404, "leaf_not_found"),
    ],
)
def test_bad_parameters_are_problems(make_player, check, path, query, status, code) -> None:
    reader = make_player()
    make_player()
    log_publish()
    body = assert_problem(reader.client.get(path, query), status, code)
    check(reader.client.get(path, query), path, "get")
    assert body["code"] == code


def test_a_leaf_beyond_the_size_asked_is_not_found(make_player) -> None:
    reader = make_player()
    make_player()
    log_publish()
    last = LogLeaf.objects.order_by("-index").first()
    r = reader.client.get(INCLUSION, {"leaf": last.leaf_hash, "size": last.index})
    assert_problem(r, 404, "leaf_not_found")


def test_a_hand_s_export_carries_its_head_s_inclusion_under_a_signed_head(
    players, win_hand, check
) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}/export"
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    doc = players[0].client.get(url).json()
    assert doc["log"] is None  # not yet appended and signed
    log_publish()
    doc = check(players[0].client.get(url), "/api/v1/hands/{hand_id}/export", "get")
    head, proof = doc["log"]["head"], doc["log"]["hand"]
    last = doc["events"][-1]
    leaf = hand_leaf_hash(hand_id=doc["hand_id"], seq=last["seq"], head=last["hash"])
    assert proof["leaf_hash"] == leaf.hex() and last["type"] == "settled"
    root = bytes.fromhex(head["root"])
    path = [bytes.fromhex(p) for p in proof["proof"]]
    assert verify_inclusion(proof["index"], head["size"], leaf, path, root)
    [tx] = doc["log"]["ledger"]
    tx_leaf = ledger_leaf_hash(tx_id=doc["ledger"]["id"], tx_hash=doc["ledger"]["hash"])
    assert tx["leaf_hash"] == tx_leaf.hex()
    assert verify_inclusion(
        tx["index"], head["size"], tx_leaf, [bytes.fromhex(p) for p in tx["proof"]], root
    )
    assert head == players[0].client.get(HEAD).json()


def test_a_players_statement_lines_carry_their_inclusion_under_the_signed_head(
    make_player, check
) -> None:
    """``GET /me/ledger?proofs=true``: the log's latest signed head beside the page, and each
    line's transaction proved in it; nothing of the log before a head is signed or unasked."""
    player = make_player()
    LEDGER = "/api/v1/me/ledger"
    page = check(player.client.get(LEDGER), LEDGER, "get")
    assert page["log_head"] is None and page["results"][0]["inclusion"] is None
    assert check(player.client.get(LEDGER, {"proofs": "true"}), LEDGER, "get")["log_head"] is None
    for _ in range(4):
        make_player()
    log_publish()
    page = check(player.client.get(LEDGER, {"proofs": "true"}), LEDGER, "get")
    head = page["log_head"]
    assert head == check(player.client.get(HEAD), HEAD, "get")
    (line,) = page["results"]  # the welcome grant
    leaf = ledger_leaf_hash(tx_id=line["transaction_id"], tx_hash=line["transaction_hash"])
    proof = line["inclusion"]
    assert proof["leaf_hash"] == leaf.hex()
    assert verify_inclusion(
        proof["index"],
        head["size"],
        leaf,
        [bytes.fromhex(p) for p in proof["proof"]],
        bytes.fromhex(head["root"]),
    )
    # without proofs asked, the page says nothing of the log
    plain = check(player.client.get(LEDGER), LEDGER, "get")
    assert plain["log_head"] is None and plain["results"][0]["inclusion"] is None
    assert_problem(player.client.get(LEDGER, {"proofs": "maybe"}), 400, "invalid")
