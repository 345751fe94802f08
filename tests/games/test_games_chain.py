"""The hand's record is tamper-evident: each event is hash-chained to the one before
(games.rules.chain, games/services/hand_log.py), the database refuses a link off the chain and
guards the hand row (games 0021), and what it cannot refuse ``check_hands``, ``ledger_check`` and
the offline verifier report. Each tampering runs as the database owner, in raw SQL."""

from __future__ import annotations

import copy
import json
from importlib import import_module
from io import StringIO
from typing import Any

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from accounts.ledger_selectors import ledger_problems
from games.hand_store import CHAIN_FIELDS, hand_store_problems
from games.models import Hand, HandEvent
from games.rules.chain import chain_break, event_hash
from games.rules.verify import verify_export
from games.services.quan_booking import hand_settle
from tests.db_owner import as_owner, connected_as_owner, owner_connect_params
from tests.games.conftest import hand_guard_off
from tests.games.test_games_hands_api import play_to_end

pytestmark = pytest.mark.django_db


def refused(sql: str, params: list[Any] | None = None, match: str = "") -> None:
    """``sql`` fails in PostgreSQL (inside a savepoint, so the test goes on)."""
    with (
        pytest.raises(DatabaseError, match=match),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, params)


def events_of(hand_id: int) -> list[dict[str, Any]]:
    return list(HandEvent.objects.filter(hand_id=hand_id).order_by("seq").values(*CHAIN_FIELDS))


@pytest.fixture
def ended(players, win_hand) -> Hand:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    return Hand.objects.get(pk=win_hand["hand"])


# --------------------------------------------------------------------------- the chain


def test_every_event_is_chained_from_the_seed_commitment(ended) -> None:
    events = events_of(ended.pk)
    assert len(events) == ended.seq + 1 > 2
    assert events[0]["prev_hash"] == ended.seed_hash
    for before, after in zip(events, events[1:], strict=False):
        assert after["prev_hash"] == before["hash"]
    assert chain_break(hand=ended.pk, seed_hash=ended.seed_hash, events=events) is None
    first = events[0]
    assert first["hash"] == event_hash(
        hand=ended.pk,
        seq=0,
        type="deal",
        actor_seat=None,
        system=True,
        bot=False,
        payload=first["payload"],
        effects=first["effects"],
        prev=ended.seed_hash,
    )


def test_the_head_hash_is_in_the_view_after_the_end_and_in_the_export(
    players, win_hand, capsys
) -> None:
    client = players[0].client
    assert client.get(f"/api/v1/hands/{win_hand['hand']}").json()["head_hash"] is None
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    head = HandEvent.objects.filter(hand_id=win_hand["hand"]).order_by("-seq").first().hash
    assert client.get(f"/api/v1/hands/{win_hand['hand']}").json()["head_hash"] == head
    doc = client.get(f"/api/v1/hands/{win_hand['hand']}/export").json()
    assert doc["chain"] == {"algorithm": "sha256-canonical-json-v1", "head": head}
    assert verify_export(doc) is None
    # an effect rewritten in the export (the replay does not read effects): the chain breaks
    doc["events"][2]["effects"] = [{"type": "made_up"}]
    found = verify_export(doc)
    assert found is not None and found.seq == 2 and "hash is not the SHA-256" in found.reason
    # a whole event recomputed to match: the next one's link breaks
    doc = client.get(f"/api/v1/hands/{win_hand['hand']}/export").json()
    event = doc["events"][3]
    event["effects"] = [{"type": "made_up"}]
    event["hash"] = event_hash(
        hand=doc["hand_id"],
        seq=3,
        type=event["type"],
        actor_seat=event["seat"],
        system=event["system"],
        bot=event["bot"],
        payload=event["payload"],
        effects=event["effects"],
        prev=event["prev_hash"],
    )
    found = verify_export(doc)
    assert found is not None and found.seq == 4 and "prev_hash" in found.reason
    doc = client.get(f"/api/v1/hands/{win_hand['hand']}/export").json()
    doc["chain"]["head"] = "0" * 64
    found = verify_export(doc)
    assert found is not None and "head" in found.reason


def test_an_insert_that_bypasses_the_chain_is_refused(players, win_hand) -> None:
    hand = Hand.objects.get(pk=win_hand["hand"])
    last = HandEvent.objects.get(hand=hand, seq=hand.seq)
    move = {"type": "draw", "seat": 1}
    insert = (
        "INSERT INTO games_handevent (hand_id, seq, type, actor_seat, system, bot, payload,"
        " effects, prev_hash, hash, created_at)"
        " VALUES (%s, %s, 'draw', 1, false, false, %s::jsonb, '[]'::jsonb, %s, %s, now())"
    )
    refused(insert, [hand.pk, hand.seq + 1, json.dumps(move), "0" * 64, "a" * 64], "prev_hash")
    refused(insert, [hand.pk, hand.seq + 1, json.dumps(move), last.hash, ""], "has no hash")
    refused(insert, [hand.pk, hand.seq + 2, json.dumps(move), last.hash, "a" * 64], "prev_hash")


def test_an_event_edited_behind_the_triggers_is_reported_by_check_hands(
    ended, corrupts_cache
) -> None:
    # given the owner rewriting an effect with the append-only trigger off
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        as_owner("ALTER TABLE games_handevent DISABLE TRIGGER games_handevent_append_only")
        cursor.execute(
            "UPDATE games_handevent SET effects = '[]'::jsonb WHERE hand_id = %s AND seq = 0",
            [ended.pk],
        )
        as_owner("ALTER TABLE games_handevent ENABLE TRIGGER games_handevent_append_only")
    assert hand_store_problems(ended) == [
        "discrepancy at seq 0: its hash is not the SHA-256 of its content"
    ]
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("check_hands", hand=[ended.pk], stderr=err)
    assert f"hand {ended.pk}: discrepancy at seq 0: its hash is not" in err.getvalue()


# --------------------------------------------------------------------------- the hand row


def test_the_database_guards_the_hand_row(ended) -> None:
    pk = ended.pk
    update = "UPDATE games_hand SET {} WHERE id = %s"
    for change in (
        "seed = repeat('c', 64)",
        "seed_hash = repeat('c', 64)",
        "dealer = (dealer + 1) %% n_seats",
        "stake = stake + 1",
        "ruleset = '{}'::jsonb",
        "deck = NULL",
        "fees = '{\"declared\": 99}'::jsonb",
        "xuong_sai_settled = NOT xuong_sai_settled",
        "mode = 'advanced'",
        "number = number + 1",
        "n_seats = n_seats - 1",
        "table_id = table_id + 1",
        "room_id = 'elsewhere'",
        "previous_winner = 3",
        "id = id + 1000",
    ):
        refused(update.format(change), [pk], "the terms of its deal never change")
    refused(update.format("seq = seq - 1"), [pk], "only with a new event")
    refused(update.format("seq = seq + 1"), [pk], "only with a new event")
    refused(
        update.format("status = 'playing', result = NULL, ended_at = NULL"),
        [pk],
        "an ended hand stays ended",
    )
    result = copy.deepcopy(ended.result)
    result["settlement"]["transfers"][0]["points"] += 1
    refused(update.format("result = %s::jsonb"), [json.dumps(result), pk], "written once")
    refused(update.format("quan = '{}'::jsonb"), [pk], "written once")
    refused(update.format("settled_at = now()"), [pk], "written once")
    assert Hand.objects.get(pk=pk).result == ended.result
    # what the services do passes: the same values written again, the void written once
    with connection.cursor() as cursor:
        cursor.execute(update.format("result = result, seq = seq, updated_at = now()"), [pk])


def test_seq_rises_only_with_a_new_event(players, win_hand) -> None:
    hand = Hand.objects.get(pk=win_hand["hand"])
    refused("UPDATE games_hand SET seq = seq + 1 WHERE id = %s", [hand.pk], "new event")
    players[0].client.post(
        f"/api/v1/hands/{hand.pk}/moves", {"type": "discard", "card": "2N"}, format="json"
    )
    hand.refresh_from_db()
    assert hand.seq == 1  # the move's event came first, then the row's seq


def test_a_result_changed_behind_the_guard_is_reported_by_check_hands_and_ledger_check(
    ended, corrupts_cache
) -> None:
    # given the owner rewriting the stored result past the row's guard (a point moved)
    result = ended.result
    result["outcome"] = {**result["outcome"], "made_up": True}
    with hand_guard_off():
        Hand.objects.filter(pk=ended.pk).update(result=result)
    ended.refresh_from_db()
    # then check_hands and ledger_check both say so
    assert "the stored result is not the replay's" in hand_store_problems(ended)
    assert [p.detail for p in ledger_problems() if p.check == "hand_settlement"] == [
        f"hand {ended.pk}: the stored result is not the replay's"
    ]
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("ledger_check", stdout=out)
    assert "the stored result is not the replay's" in out.getvalue()


# --------------------------------------------------------------------------- TRUNCATE


def test_the_truncate_allowance_is_refused_outside_a_test_database() -> None:
    """The migration's own SQL in a scratch database not named ``test_…``: the session setting
    alone does not let TRUNCATE through."""
    module = import_module("games.migrations.0021_handevent_hash_chain")
    params = owner_connect_params()
    scratch = f"chan_truncate_probe_{connection.settings_dict['NAME'].removeprefix('test_')}"
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{scratch}"')
        admin.execute(f'CREATE DATABASE "{scratch}"')
    try:
        with psycopg.connect(dbname=scratch, autocommit=True, **params) as probe:
            probe.execute("CREATE TABLE games_handevent (id int)")
            probe.execute("INSERT INTO games_handevent VALUES (1)")
            probe.execute(module.TRUNCATE_ALLOWED)
            probe.execute(
                "CREATE TRIGGER games_handevent_no_truncate BEFORE TRUNCATE ON games_handevent"
                " FOR EACH STATEMENT EXECUTE FUNCTION games_handevent_append_only()"
            )
            probe.execute("SET chan.allow_log_truncate = 'on'")
            with pytest.raises(psycopg.errors.IntegrityConstraintViolation):
                probe.execute("TRUNCATE games_handevent")
            assert probe.execute("SELECT count(*) FROM games_handevent").fetchone() == (1,)
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{scratch}"')


# --------------------------------------------------------------------------- the backfill


@pytest.mark.django_db(transaction=True)  # the migration runs as the owner, on committed rows
def test_the_migration_chains_the_events_of_hands_logged_before_it(ended) -> None:
    # given a hand whose events carry no hashes (as before games 0021)
    from django.apps import apps

    chained = events_of(ended.pk)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        as_owner("ALTER TABLE games_handevent DISABLE TRIGGER games_handevent_append_only")
        cursor.execute("UPDATE games_handevent SET prev_hash = '', hash = ''")
        as_owner("ALTER TABLE games_handevent ENABLE TRIGGER games_handevent_append_only")
    assert hand_store_problems(ended) != []
    # when the migration's backfill runs, then they are chained exactly as appended
    module = import_module("games.migrations.0021_handevent_hash_chain")
    with connected_as_owner(), transaction.atomic():
        module.backfill_chain(apps, connection.schema_editor())
    assert events_of(ended.pk) == chained
    assert hand_store_problems(ended) == []
    refused("UPDATE games_handevent SET hash = ''", match="append-only")  # the trigger is back
