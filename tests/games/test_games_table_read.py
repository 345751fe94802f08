"""One table's read (``games.selectors.tables.table_summary``): one fixed statement that answers
what the lobby's ORM path answers, in every state a table can be in; the viewer's rules of a
private table; and the kept output serializers (``chan_api.represent``) equal to ``.data``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.ledger import balance_adjust
from chan_api.represent import represented
from core.errors import NotFound
from games.api.serializers import SeatReadyOutputSerializer, TableOutputSerializer
from games.selectors.reality_check import reality_check_for
from games.selectors.tables import table_get, table_summaries, table_summary
from games.services.quan_booking import hand_settle
from tests.games.conftest import start_table
from tests.games.decks import HOA_DECK
from tests.games.test_games_hands_api import play_to_end

pytestmark = pytest.mark.django_db


def create(player: Any, **body: Any) -> dict[str, Any]:
    r = player.client.post("/api/v1/tables", {"stake": 10, **body}, format="json")
    assert r.status_code == 201, r.content
    return r.json()


def join(player: Any, table_id: int, **body: Any) -> None:
    r = player.client.post(f"/api/v1/tables/{table_id}/join", body, format="json")
    assert r.status_code == 200, r.content


def the_lobbys(table_id: int) -> dict[str, Any]:
    return table_summaries([table_get(table_id=table_id)])[0]


@pytest.fixture
def tables_in_every_state(players, make_player) -> dict[str, int]:
    """Tables in the states a read shows differently, by name."""
    for p in players:  # gà góp buy-ins
        balance_adjust(user=p.user, amount=200_000, reason="test", key=f"test:rich:{p.id}")
    out = {}
    out["empty-but-the-owner"] = create(players[0])["id"]
    # two seated, one ready: a ready deadline
    t = create(players[0])["id"]
    join(players[1], t)
    players[1].client.post(f"/api/v1/tables/{t}/ready", {}, format="json")
    out["one-ready"] = t
    # a gà góp table with a pot, its second hand playing, a player who stood up mid-hand
    ids = start_table(
        players, HOA_DECK, ruleset={"preset": "chan_van_van", "overrides": {"ga_gop": True}}
    )
    play_to_end(players, ids)
    hand_settle(hand_id=ids["hand"])
    for p in players:
        r = p.client.post(f"/api/v1/tables/{ids['table']}/ready", {}, format="json")
        assert r.status_code == 200, r.content
    r = players[2].client.post(f"/api/v1/tables/{ids['table']}/leave", {}, format="json")
    assert r.status_code == 200, r.content
    out["pot-playing-leaving"] = ids["table"]
    # private, with a guest seated
    private = create(players[3], private=True)
    join(make_player(), private["id"], code=private["invite_code"])
    out["private"] = private["id"]
    # practice, with server bots
    out["practice"] = create(players[1], practice=True, bots=3)["id"]
    return out


def test_one_tables_read_answers_what_the_lobby_answers_in_every_state(
    tables_in_every_state,
) -> None:
    seen = {}
    for name, table_id in tables_in_every_state.items():
        one = table_summary(table_id=table_id)
        assert one == the_lobbys(table_id), name
        seen[name] = one
    # and the states are the ones their names say (the comparison covered each field's case)
    assert seen["one-ready"]["ready_deadline"] is not None
    playing = seen["pot-playing-leaving"]
    assert playing["pot"] > 0 and playing["current_hand_id"] is not None
    assert [s["leaving"] for s in playing["seats"]].count(True) == 1
    assert seen["private"]["private"] is True and seen["private"]["invite_code"] is None
    assert all(s["bot"] for s in seen["practice"]["seats"][1:])
    assert seen["empty-but-the-owner"]["open_seats"] == 3


def test_a_tables_read_is_one_statement(tables_in_every_state, django_assert_num_queries) -> None:
    for table_id in tables_in_every_state.values():
        with django_assert_num_queries(1):
            table_summary(table_id=table_id)


def test_a_table_that_is_not_there_is_not_found() -> None:
    with pytest.raises(NotFound):
        table_summary(table_id=987654321)


def test_a_private_tables_read_by_viewer(players, make_player, make_user) -> None:
    table = create(players[0], private=True)
    join(players[1], table["id"], code=table["invite_code"])
    staff, _token = make_user(is_staff=True)
    code = table["invite_code"]
    assert table_summary(table_id=table["id"], viewer=players[0].user)["invite_code"] == code
    assert table_summary(table_id=table["id"], viewer=players[1].user)["invite_code"] == code
    assert table_summary(table_id=table["id"], viewer=staff)["invite_code"] is None
    with pytest.raises(NotFound):
        table_summary(table_id=table["id"], viewer=players[2].user)


def test_standing_up_from_a_private_table_answers_the_table_without_its_code(players) -> None:
    # (the answer used to check the table's visibility for no viewer, and failed with a 500)
    table = create(players[0], private=True)
    join(players[1], table["id"], code=table["invite_code"])
    r = players[1].client.post(f"/api/v1/tables/{table['id']}/leave", {}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["invite_code"] is None
    assert [s["user_id"] for s in r.json()["seats"]] == [players[0].user.pk]


def test_the_kept_serializers_represent_as_data_does(tables_in_every_state, players) -> None:
    summaries = [table_summary(table_id=t) for t in tables_in_every_state.values()]
    with_check = dict(summaries[0], reality_check=reality_check_for(user=players[0].user))
    assert with_check["reality_check"] is not None
    later = dict(with_check["reality_check"], next_at=timezone.now() + timedelta(minutes=5))
    for summary in [*summaries, with_check, dict(with_check, reality_check=later)]:
        assert represented(TableOutputSerializer, summary) == TableOutputSerializer(summary).data
        body = {"table": summary, "hand_id": summary["current_hand_id"]}
        assert represented(SeatReadyOutputSerializer, body) == SeatReadyOutputSerializer(body).data
    # a summary without a reality check shows it null, as .data does
    assert represented(TableOutputSerializer, summaries[0])["reality_check"] is None
