"""The records' MACs (games.rules.record_mac): the key list's form, rotation (the first key signs,
every listed key verifies, an unknown one does not) and where a row without a MAC is allowed."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from games.rules.record_mac import (
    HAND,
    LEDGER,
    MacChain,
    RecordKeyError,
    mac_problem,
    record_key_text,
    record_keys_from,
    record_mac,
)

OLD = record_key_text("k2025", b"o" * 32)
NEW = record_key_text("k2026", b"n" * 32)
DIGEST = hashlib.sha256(b"a transaction").hexdigest()


def test_the_mac_is_hmac_sha256_of_the_domain_and_the_hash_under_the_first_key() -> None:
    keys = record_keys_from(f"{NEW},{OLD}")
    mac, kid = record_mac(keys, domain=LEDGER, digest=DIGEST)
    wanted = hmac.new(b"n" * 32, f"chan-record-v1:ledger:{DIGEST}".encode(), hashlib.sha256)
    assert (mac, kid) == (wanted.hexdigest(), "k2026")
    # the same hash in the other domain has another MAC: a hand event's cannot pass as a ledger's
    assert record_mac(keys, domain=HAND, digest=DIGEST)[0] != mac


def test_a_row_under_a_retired_but_listed_key_verifies_under_an_unknown_key_it_does_not() -> None:
    mac, kid = record_mac(record_keys_from(OLD), domain=LEDGER, digest=DIGEST)
    rotated = record_keys_from(f"{NEW},{OLD}")
    assert mac_problem(rotated, domain=LEDGER, digest=DIGEST, mac=mac, mac_key=kid) is None
    dropped = record_keys_from(NEW)
    why = mac_problem(dropped, domain=LEDGER, digest=DIGEST, mac=mac, mac_key=kid)
    assert why == "its MAC is under key 'k2025', which is not a record key"
    # a MAC under a listed id but not made with its key is refused too
    why = mac_problem(rotated, domain=LEDGER, digest=DIGEST, mac=mac, mac_key="k2026")
    assert why == "its MAC is not the record key's MAC of its hash"
    why = mac_problem(rotated, domain=LEDGER, digest="0" * 64, mac=mac, mac_key=kid)
    assert why == "its MAC is not the record key's MAC of its hash"


def test_rows_without_a_mac_are_allowed_only_before_the_first_keyed_row() -> None:
    keys = record_keys_from(NEW)
    mac, kid = record_mac(keys, domain=HAND, digest=DIGEST)
    chain = MacChain(keys, domain=HAND)
    assert chain.check(digest="1" * 64, mac="", mac_key="") is None  # written before keys
    assert chain.check(digest=DIGEST, mac=mac, mac_key=kid) is None
    assert chain.check(digest="2" * 64, mac="", mac_key="") == (
        "it carries no MAC, after a row that does"
    )
    assert chain.check(digest="3" * 64, mac="f" * 64, mac_key=kid) == (
        "its MAC is not the record key's MAC of its hash"
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        " , ",
        "no-colon",
        "bad id:" + base64.b64encode(b"x" * 32).decode(),
        "k1:not base64!",
        "k1:" + base64.b64encode(b"short").decode(),
        f"{NEW},{NEW}",
    ],
)
def test_a_key_list_that_cannot_be_read_is_refused_without_showing_key_material(text) -> None:
    with pytest.raises(RecordKeyError) as refused:
        record_keys_from(text)
    assert "CHAN_RECORD_KEY" in str(refused.value)
    assert base64.b64encode(b"n" * 32).decode() not in str(refused.value)
