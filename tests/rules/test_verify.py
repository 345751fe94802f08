"""The offline verifier (``python -m games.rules.verify``): an export built from a hand played by
the rules core verifies, and every tampering the verifier was built against (a seed, a card, two events
swapped, a declaration, an amount) is the first discrepancy at the right seq, with its reason."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from games.rules.bots import make_bot
from games.rules.cards import CODES
from games.rules.chain import CHAIN_ALGORITHM, event_hash
from games.rules.deck import first_dealer, shuffle
from games.rules.engine import new_hand
from games.rules.ledger_chain import ledger_tx_hash
from games.rules.quan import FeeSchedule, result_quan
from games.rules.record_mac import HAND, LEDGER, record_key_text, record_keys_from, record_mac
from games.rules.replay import EVENT_VERSION, move_effects, replay
from games.rules.results import HandResult
from games.rules.ruleset import build_ruleset
from games.rules.simulate import play_hand
from games.rules.state import HandConfig, Mode
from games.rules.verify import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    FIXED_SHUFFLE,
    SHUFFLE_ALGORITHM,
    Discrepancy,
    log_break,
    mac_discrepancies,
    main,
    seed_break,
    verify_export,
)
from games.rules.views import missed_wins_of, result_of

RULESET = {"preset": "chan_van_van", "overrides": {}}
FEES = {"declared": 5, "auto": 10}
BALANCES = [50_000, 40_000, 30_000, 20_000]
STAKE = 100
# A hand won (lèo ×2 + chíu, 47 moves) that opens discard, eat, discard, eat.
SEED = hashlib.sha256(b"export-3").digest()


def export_of(seed: bytes, *, bot_seed: int = 3) -> dict[str, Any]:
    """An export as the server writes it, of a hand self-played by the rules core's bots."""
    config = HandConfig(
        n_seats=4, mode=Mode.BASIC, ruleset=build_ruleset(RULESET), prefs=((True, True),) * 4
    )
    rng = random.Random(bot_seed)
    bots = {s: make_bot("heuristic", rng) for s in range(4)}
    played = play_hand(config, seed, bots)
    result = result_of(played.final)
    quan = result_quan(
        HandResult.from_dict(result),
        n_seats=4,
        stake=STAKE,
        fees=FeeSchedule.from_dict(FEES),
        xuong_sai_settled=False,
        balances=BALANCES,
        pot_balance=0,
    )
    moves = [m.to_dict() for m in played.moves]
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "hand_id": 7,
        "number": 1,
        "status": "ended",
        "table": {"id": 3, "name": "test"},
        "room": {"slug": "nen-dat", "name": "Nền đất", "fees": FEES, "xuong_sai_settled": False},
        "stake": STAKE,
        "players": [{"seat": s, "username": f"p{s}", "table_seat": s} for s in range(4)],
        "config": {
            "seats": 4,
            "mode": "basic",
            "ruleset": RULESET,
            "previous_winner": None,
            "prefs": [{"auto_u": True, "auto_chiu": True}] * 4,
        },
        "dealer": played.final.dealer,
        "seed": seed.hex(),
        "seed_hash": hashlib.sha256(seed).hexdigest(),
        "shuffle": SHUFFLE_ALGORITHM,
        "events": [
            {"seq": 0, "type": "deal", "seat": None, "system": True, "payload": {}},
            *(
                {"seq": i, "type": m["type"], "seat": m["seat"], "system": False, "payload": m}
                for i, m in enumerate(moves, start=1)
            ),
        ],
        "result": result,
        "bo_u": missed_wins_of(played.final),
        "quan": {**quan.to_dict(), "balances": BALANCES, "pot_before": 0},
        "ledger": {
            "id": 1,
            "key": "hand:7:settlement",
            "kind": "hand_settlement",
            "entries": [
                {"account": i, "party": party, "amount": amount}
                for i, (party, amount) in enumerate(quan.legs().items())
                if amount
            ],
        },
    }


@pytest.fixture(scope="module")
def clean() -> dict[str, Any]:
    doc = export_of(SEED)
    assert doc["result"]["outcome"]["result"] == "u"
    assert [e["type"] for e in doc["events"][1:5]] == ["discard", "eat", "discard", "eat"]
    return doc


@pytest.fixture
def doc(clean: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(clean)


def last_seq(doc: dict[str, Any]) -> int:
    return doc["events"][-1]["seq"]


def test_an_honest_export_verifies(doc: dict[str, Any]) -> None:
    assert verify_export(doc) is None


def test_a_fixed_deck_export_verifies_and_a_deck_that_is_not_the_100_cards_does_not(
    doc: dict[str, Any],
) -> None:
    # a test table dealing the seed's own order as a fixed deck: the same hand, no shuffle
    fixed = {**doc, "shuffle": FIXED_SHUFFLE, "deck": [CODES[k] for k in shuffle(SEED)]}
    assert verify_export(fixed) is None
    fixed["deck"][0], fixed["deck"][-1] = "CC", "CC"
    found = verify_export(fixed)
    assert found is not None and found.seq == 0 and "100 cards" in found.reason


def test_a_tampered_seed_is_the_deal(doc: dict[str, Any]) -> None:
    doc["seed"] = ("0" if doc["seed"][0] != "0" else "1") + doc["seed"][1:]
    assert verify_export(doc) == Discrepancy(0, "seed_hash is not the SHA-256 of the seed's bytes")


def test_another_seed_with_its_own_hash_deals_other_cards(doc: dict[str, Any]) -> None:
    other = hashlib.sha256(b"another seed").digest()
    doc.update(seed=other.hex(), seed_hash=hashlib.sha256(other).hexdigest())
    if first_dealer(other, 4) != doc["dealer"]:
        assert verify_export(doc) == Discrepancy(
            0, "the first hand's dealer is not the one the seed draws"
        )
    doc["number"] = 2  # not the table's first hand: the dealer is not the seed's to choose
    found = verify_export(doc)
    assert found is not None and found.seq is not None and found.seq >= 1
    assert "is refused" in found.reason


def test_an_export_made_before_bo_u_were_listed_still_verifies(doc: dict[str, Any]) -> None:
    del doc["bo_u"]
    assert verify_export(doc) is None


def test_a_made_up_bo_u_is_found(doc: dict[str, Any]) -> None:
    assert doc["bo_u"] == []  # nobody let a win go by in this hand
    doc["bo_u"] = [{"seat": 0, "card": "2V", "seq": 5, "replaced_by": None}]
    found = verify_export(doc)
    assert found is not None and found.seq == last_seq(doc)
    assert "the replay does not have" in found.reason
    doc["bo_u"] = "none"
    assert verify_export(doc) == Discrepancy(last_seq(doc), "the document's bo_u is not a list")


def test_a_tampered_card_is_refused_at_its_seq(doc: dict[str, Any]) -> None:
    dealer = doc["dealer"]
    state = new_hand(HandConfig(n_seats=4, ruleset=build_ruleset(RULESET)), shuffle(SEED), dealer)
    missing = next(CODES[k] for k in range(25) if state.seats[dealer].hand[k] == 0)
    doc["events"][1]["payload"]["card"] = missing
    found = verify_export(doc)
    assert found is not None and found.seq == 1
    assert found.reason.startswith(f"discard by seat {dealer} is refused: card_not_in_hand")


def test_two_events_swapped_are_out_of_seq_order(doc: dict[str, Any]) -> None:
    events = doc["events"]
    events[3], events[4] = events[4], events[3]
    assert verify_export(doc) == Discrepancy(3, "event 4 is listed where seq 3 should be")


def test_two_moves_swapped_under_their_seqs_are_refused_at_the_first(
    doc: dict[str, Any],
) -> None:
    events = doc["events"]
    for key in ("type", "seat", "payload"):
        events[3][key], events[4][key] = events[4][key], events[3][key]
    found = verify_export(doc)
    assert found is not None and found.seq == 3
    assert found.reason.startswith(f"eat by seat {events[3]['seat']} is refused")


def test_a_gap_and_a_missing_deal_are_found(doc: dict[str, Any]) -> None:
    del doc["events"][10]
    assert verify_export(doc) == Discrepancy(10, "event 11 is listed where seq 10 should be")
    doc["events"] = doc["events"][1:]
    assert verify_export(doc) == Discrepancy(0, "event 1 is listed where seq 0 should be")


def test_a_tampered_declaration_is_judged_again(doc: dict[str, Any]) -> None:
    # the winner's declaration in the log claims a cước it does not have
    declare = doc["events"][-1]
    assert declare["type"] == "declare"
    declare["payload"] = {"type": "declare", "seat": declare["seat"], "cuoc": {"tom": 1}}
    assert verify_export(doc) == Discrepancy(
        last_seq(doc), 'the declaration\'s verdict is "sai", the document says "dung"'
    )


def test_a_tampered_verdict_in_the_result_is_found(doc: dict[str, Any]) -> None:
    doc["result"]["declaration"]["verdict"] = "sai"
    assert verify_export(doc) == Discrepancy(
        last_seq(doc), 'the declaration\'s verdict is "dung", the document says "sai"'
    )


def test_a_tampered_points_settlement_is_found(doc: dict[str, Any]) -> None:
    doc["result"]["settlement"]["transfers"][0]["points"] += 1
    found = verify_export(doc)
    assert found is not None and found.seq == last_seq(doc)
    assert found.reason.startswith("the result's settlement is not the replay's")


def test_a_tampered_amount_is_found_in_the_quan_and_in_the_ledger(
    doc: dict[str, Any], clean: dict[str, Any]
) -> None:
    winner = doc["result"]["outcome"]["seat"]
    net = doc["quan"]["seats"][winner]["net"]
    doc["quan"]["seats"][winner]["net"] = net + 1000
    found = verify_export(doc)
    assert found is not None and found.seq == last_seq(doc)
    assert found.reason.startswith("the Quan seats is")
    doc = copy.deepcopy(clean)
    entry = next(e for e in doc["ledger"]["entries"] if e["party"] == winner)
    entry["amount"] += 1000
    found = verify_export(doc)
    assert found is not None and found.seq == last_seq(doc)
    assert found.reason.startswith("the ledger entries")


def test_the_quan_are_points_times_stake_less_the_rooms_fee(doc: dict[str, Any]) -> None:
    winner = doc["result"]["outcome"]["seat"]
    won = sum(t["points"] for t in doc["result"]["settlement"]["transfers"])
    seat = doc["quan"]["seats"][winner]
    assert seat["received"] == won * STAKE and seat["fee"] == won * STAKE * 10 // 100
    doc["stake"] = STAKE * 2  # the document's stake says otherwise
    found = verify_export(doc)
    assert found is not None and "points × stake says" in found.reason


def test_an_unfinished_hand_does_not_verify(doc: dict[str, Any]) -> None:
    doc["events"] = doc["events"][:5]
    assert verify_export(doc) == Discrepancy(4, "the hand has not ended after its last event")


def test_a_malformed_document_is_a_discrepancy_not_a_crash(doc: dict[str, Any]) -> None:
    del doc["config"]
    found = verify_export(doc)
    assert found is not None and found.seq is None and "malformed" in found.reason
    assert verify_export({"format": "other"}) is not None


def test_the_command_prints_verified_or_the_first_discrepancy(
    doc: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert main([str(path)]) == 0
    assert capsys.readouterr().out == "verified\n"
    doc["result"]["declaration"]["verdict"] = "sai"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert main([str(path)]) == 1
    out = capsys.readouterr().out
    assert (
        out == f"discrepancy at seq {last_seq(doc)}: the declaration's verdict is "
        '"dung", the document says "sai"\n'
    )


def test_python_dash_m_runs_it_without_django(clean: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(clean), encoding="utf-8")
    code = "import sys, runpy; sys.modules['django'] = None; runpy.run_module('games.rules.verify', run_name='__main__')"
    run = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert (run.returncode, run.stdout) == (0, "verified\n"), run.stderr


# --------------------------------------------------------------------------- the hash chain


def derived_effects(doc: dict[str, Any]) -> list[list[Any]]:
    """Each event's effects as the server records them (the rules' ``events`` of its move)."""
    deck = shuffle(bytes.fromhex(doc["seed"]))
    config = HandConfig(
        n_seats=4, mode=Mode.BASIC, ruleset=build_ruleset(RULESET), prefs=((True, True),) * 4
    )
    replayed = replay(config, deck, doc["dealer"], doc["events"])
    return [json.loads(json.dumps(move_effects(state))) for _event, state in replayed]


def chained(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its events in the current schema (``v``, every effect the rules derive)
    and hash-chained as the server exports them (games.rules.chain)."""
    for event, effects in zip(doc["events"], derived_effects(doc), strict=True):
        event["payload"] = {**event["payload"], "v": EVENT_VERSION}
        event.update(bot=False, effects=effects)
    return rehashed(doc)


def rehashed(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with every event's ``prev_hash`` and ``hash`` (re)computed over what it holds,
    as the server chains them (and as someone covering a change would)."""
    prev = doc["seed_hash"]
    for event in doc["events"]:
        event["prev_hash"] = prev
        event["hash"] = prev = event_hash(
            hand=doc["hand_id"],
            seq=event["seq"],
            type=event["type"],
            actor_seat=event["seat"],
            system=event["system"],
            bot=event["bot"],
            payload=event["payload"],
            effects=event["effects"],
            prev=event["prev_hash"],
        )
    doc["chain"] = {"algorithm": CHAIN_ALGORITHM, "head": prev}
    return doc


def test_a_chained_export_verifies_and_names_the_first_broken_link(
    doc: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = chained(doc)
    assert verify_export(doc) is None
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(doc))
    assert main([str(path)]) == 0
    assert capsys.readouterr().out == f"verified\nchain head {doc['chain']['head']}\n"
    # an effect the replay never reads, rewritten: its event's hash no longer matches
    doc["events"][5]["effects"] = [{"type": "fault", "slug": "made_up", "seat": 1}]
    assert verify_export(doc) == Discrepancy(5, "its hash is not the SHA-256 of its content")


def test_a_removed_event_breaks_the_chain_at_its_successor(doc: dict[str, Any]) -> None:
    doc = chained(doc)
    del doc["events"][7]
    for seq, event in enumerate(doc["events"]):
        event["seq"] = seq  # renumbered, so the seq check alone sees nothing
    found = verify_export(doc)
    assert found is not None and found.seq == 7


# --------------------------------------------------------------------------- a stored log


def stored_log(doc: dict[str, Any]) -> dict[str, Any]:
    """:func:`log_break`'s arguments for ``doc``'s hand, its events as the server stores them."""
    config = HandConfig(
        n_seats=4, mode=Mode.BASIC, ruleset=build_ruleset(RULESET), prefs=((True, True),) * 4
    )
    return {
        "hand_id": doc["hand_id"],
        "seed_hash": doc["seed_hash"],
        "config": config,
        "deck": shuffle(bytes.fromhex(doc["seed"])),
        "dealer": doc["dealer"],
        "events": [{**e, "actor_seat": e["seat"]} for e in doc["events"]],
    }


def test_a_stored_log_holds_whole_or_cut_while_its_hand_is_played(doc: dict[str, Any]) -> None:
    doc = chained(doc)
    assert log_break(**stored_log(doc)) is None
    doc["events"] = doc["events"][:10]  # a hand still being played: no end to judge
    assert log_break(**stored_log(doc)) is None


def test_a_stored_log_breaks_at_its_first_bad_seq(doc: dict[str, Any]) -> None:
    doc = chained(doc)
    dealer = doc["dealer"]
    state = new_hand(HandConfig(n_seats=4, ruleset=build_ruleset(RULESET)), shuffle(SEED), dealer)
    missing = next(CODES[k] for k in range(25) if state.seats[dealer].hand[k] == 0)
    doc["events"][1]["payload"]["card"] = missing
    # a card changed: the chain breaks there,
    assert log_break(**stored_log(doc)) == Discrepancy(
        1, "its hash is not the SHA-256 of its content"
    )
    # and with the hashes recomputed over the change, the rules refuse the move;
    found = log_break(**stored_log(rehashed(doc)))
    assert found is not None and found.seq == 1
    assert found.reason.startswith(f"discard by seat {dealer} is refused: card_not_in_hand")
    # two events swapped under their seqs: the chain breaks at the first.
    doc = chained(export_of(SEED))
    events = doc["events"]
    events[3], events[4] = events[4], events[3]
    events[3]["seq"], events[4]["seq"] = 3, 4
    assert log_break(**stored_log(doc)) == Discrepancy(
        3, "its prev_hash is not the previous event's hash"
    )


def test_a_seed_is_held_to_its_hash(doc: dict[str, Any]) -> None:
    assert seed_break(doc["seed"], doc["seed_hash"]) is None
    assert seed_break("ab" * 32, doc["seed_hash"]) == Discrepancy(
        0, "seed_hash is not the SHA-256 of the seed's bytes"
    )
    assert seed_break("not hex", doc["seed_hash"]) == Discrepancy(0, "the seed is not hexadecimal")


# --------------------------------------------------------------------------- the record key

RECORD_KEY = record_key_text("k1", hashlib.sha256(b"the record key").digest())


def keyed(doc: dict[str, Any], text: str = RECORD_KEY) -> dict[str, Any]:
    """``doc`` chained, its events and its ledger transaction MAC'd as the server writes them."""
    keys = record_keys_from(text)
    doc = chained(doc)
    for event in doc["events"]:
        event["mac"], event["mac_key"] = record_mac(keys, domain=HAND, digest=event["hash"])
    ledger = doc["ledger"]
    ledger.update(prev_hash="0" * 64, memo="", user=None, hand=doc["hand_id"], table=3)
    ledger["hash"] = ledger_tx_hash(
        prev=ledger["prev_hash"],
        kind=ledger["kind"],
        key=ledger["key"],
        memo="",
        user=None,
        hand=doc["hand_id"],
        table=3,
        entries=[(e["account"], e["amount"]) for e in ledger["entries"]],
    )
    ledger["mac"], ledger["mac_key"] = record_mac(keys, domain=LEDGER, digest=ledger["hash"])
    return doc


def test_given_the_record_key_the_verifier_checks_every_mac(
    doc: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = keyed(doc)
    path, key_file = tmp_path / "hand.json", tmp_path / "record-key"
    key_file.write_text(RECORD_KEY + "\n")
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert main([str(path), "--record-key", RECORD_KEY]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "verified, with every record's MAC"
    # an event appended without the key (its hash chained as anyone can) is found,
    forged = copy.deepcopy(doc)
    forged["events"][5].update(mac="", mac_key="")
    path.write_text(json.dumps(forged), encoding="utf-8")
    assert main([str(path), "--record-key", f"@{key_file}"]) == 1
    assert capsys.readouterr().out == (
        "discrepancy at seq 5: it carries no MAC, after a row that does\n"
    )
    # without the key the export verifies as before (its MACs are not checked),
    assert main([str(path)]) == 0
    capsys.readouterr()
    # and under another key nothing is vouched for, the ledger transaction included.
    other = record_key_text("k2", b"x" * 32)
    found = mac_discrepancies(record_keys_from(other), doc["events"], ledger=doc["ledger"])
    assert len(found) == len(doc["events"]) + 1
    assert found[-1] == Discrepancy(
        last_seq(doc),
        "the ledger transaction 1: its MAC is under key 'k1', which is not a record key",
    )


def test_a_rotated_key_list_still_verifies_what_the_retired_key_vouched_for(
    doc: dict[str, Any],
) -> None:
    doc = keyed(doc)
    rotated = record_keys_from(f"{record_key_text('k2', b'x' * 32)},{RECORD_KEY}")
    assert verify_export(doc, keys=rotated) is None
    found = verify_export(doc, keys=record_keys_from(record_key_text("k2", b"x" * 32)))
    assert found == Discrepancy(0, "its MAC is under key 'k1', which is not a record key")


def test_an_unreadable_record_key_is_said_not_raised(
    doc: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(keyed(doc)), encoding="utf-8")
    assert main([str(path), "--record-key", "k1:short"]) == 1
    assert capsys.readouterr().out.startswith("cannot read the record keys: CHAN_RECORD_KEY")
    assert main([str(path), "--record-key", f"@{tmp_path / 'missing'}"]) == 1
    assert capsys.readouterr().out.startswith("cannot read the record keys:")
