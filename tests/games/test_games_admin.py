"""The admin: tables and seats editable, hands and their logs read-only, secrets hidden.

``staff`` is a superuser (and so an auditor); ``clerk`` is staff with view rights on every games
model and change rights on tables, but not ``accounts.audit_hands``.
"""

from __future__ import annotations

import html
import json

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from games.models import Hand, HandEvent, IdempotencyRecord, Table
from tests.games.conftest import hand_guard_off
from tests.games.decks import WIN_DECK

pytestmark = pytest.mark.django_db

GAMES_MODELS = ("table", "seat", "hand", "handevent", "idempotencyrecord")


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def staff(make_user) -> Client:
    user, _ = make_user(username="admin", is_staff=True, is_superuser=True)
    return logged_in(user)


@pytest.fixture
def clerk(make_user) -> Client:
    user, _ = make_user(username="clerk", is_staff=True)
    codenames = [f"view_{m}" for m in GAMES_MODELS] + ["change_table"]
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="games", codename__in=codenames)
    )
    assert not user.has_perm("accounts.audit_hands")
    return logged_in(user)


@pytest.fixture
def auditor(make_user) -> Client:
    user, _ = make_user(username="auditor", is_staff=True)
    codenames = [f"view_{m}" for m in GAMES_MODELS]
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="games", codename__in=codenames)
    )
    user.user_permissions.add(Permission.objects.get(codename="audit_hands"))
    return logged_in(user)


def shown(value) -> str:
    """How the admin renders a JSON field's value on a read-only page."""
    return html.escape(json.dumps(value))


def end(hand_id: int) -> None:
    """The hand faked ended (no ending event), past the hand row's guards."""
    hand = Hand.objects.get(pk=hand_id)
    with hand_guard_off():
        Hand.objects.filter(pk=hand_id).update(
            status="ended",
            result={"outcome": {"result": "hoa"}},
            ended_at=hand.created_at,
            deadline_at=None,
        )


@pytest.fixture
def moved(players, win_hand) -> dict:
    """The dealer discarded with an Idempotency-Key: its stored response holds its hand."""
    r = players[0].client.post(
        f"/api/v1/hands/{win_hand['hand']}/moves",
        {"type": "discard", "card": "2N"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="discard-1",
    )
    assert r.status_code == 201, r.content
    record = IdempotencyRecord.objects.get(key="discard-1")
    private_hand = record.response_body["state"]["hand"]
    assert private_hand == r.json()["state"]["hand"] and len(private_hand) > 1
    return {**win_hand, "record": record.pk, "private_hand": private_hand}


def test_the_admin_lists_tables_seats_hands_and_events(staff, clerk, moved) -> None:
    for client in (staff, clerk):
        for model in GAMES_MODELS:
            r = client.get(f"/admin/games/{model}/")
            assert r.status_code == 200, model
        assert client.get(f"/admin/games/table/{moved['table']}/change/").status_code == 200


def test_a_hands_seed_is_hidden_until_it_ends(staff, win_hand, corrupts_cache) -> None:
    hand = Hand.objects.get(pk=win_hand["hand"])
    r = staff.get(f"/admin/games/hand/{hand.pk}/change/")
    assert r.status_code == 200
    assert (
        hand.seed not in r.content.decode() and "hidden until the hand ends" in r.content.decode()
    )
    end(hand.pk)
    r = staff.get(f"/admin/games/hand/{hand.pk}/change/")
    assert hand.seed in r.content.decode()


def test_hands_and_events_cannot_be_changed_or_deleted_in_the_admin(staff, win_hand) -> None:
    event = HandEvent.objects.get(hand_id=win_hand["hand"], seq=0)
    r = staff.post(f"/admin/games/handevent/{event.pk}/change/", {"type": "x"})
    assert r.status_code == 403
    r = staff.post(f"/admin/games/handevent/{event.pk}/delete/", {"post": "yes"})
    assert r.status_code == 403
    r = staff.post(f"/admin/games/hand/{win_hand['hand']}/delete/", {"post": "yes"})
    assert r.status_code == 403
    assert HandEvent.objects.filter(pk=event.pk, type="deal").exists()


def test_a_stored_move_response_is_hidden_from_staff_who_are_not_auditors(
    clerk, auditor, moved, corrupts_cache
) -> None:
    # given a hand in play whose dealer's stored response holds its private hand
    url = f"/admin/games/idempotencyrecord/{moved['record']}/change/"
    secret = shown(moved["private_hand"])
    # then nobody sees it while the hand is being played, not even an auditor
    for client in (clerk, auditor):
        page = client.get(url).content.decode()
        assert secret not in page and "hidden: shown to auditors once the hand has ended" in page
    # when the hand ends, then an auditor sees the stored response and the clerk still does not
    end(moved["hand"])
    assert secret in auditor.get(url).content.decode()
    assert secret not in clerk.get(url).content.decode()


def test_no_admin_page_shows_a_private_hand_or_the_deck_in_play(clerk, moved) -> None:
    hand = Hand.objects.get(pk=moved["hand"])
    pages = [f"/admin/games/{model}/" for model in GAMES_MODELS] + [
        f"/admin/games/hand/{hand.pk}/change/",
        f"/admin/games/table/{moved['table']}/change/",
        f"/admin/games/idempotencyrecord/{moved['record']}/change/",
    ]
    pages += [f"/admin/games/handevent/{e.pk}/change/" for e in HandEvent.objects.filter(hand=hand)]
    for url in pages:
        r = clerk.get(url)
        assert r.status_code == 200, url
        page = r.content.decode()
        for secret in (shown(moved["private_hand"]), shown(WIN_DECK), hand.seed):
            assert secret not in page, url


def test_a_fixed_deck_is_shown_to_auditors_only_and_survives_a_clerks_edit(
    clerk, auditor, win_hand
) -> None:
    table = Table.objects.get(pk=win_hand["table"])
    assert table.fixed_deck == WIN_DECK
    url = f"/admin/games/table/{table.pk}/change/"
    assert shown(WIN_DECK) in auditor.get(url).content.decode()
    page = clerk.get(url).content.decode()
    assert shown(WIN_DECK) not in page and "hidden: shown to auditors only" in page

    # when the clerk renames the table through the admin form
    form = {
        "name": "renamed",
        "room": table.room,
        "stake": table.stake,
        "max_seats": table.max_seats,
        "mode": table.mode,
        "ruleset": json.dumps(table.ruleset),
        "turn_timeout": table.turn_timeout,
        "tra_cua_timeout": table.tra_cua_timeout,
        "declare_timeout": table.declare_timeout,
        "ready_timeout": table.ready_timeout,
        "bot_delay": table.bot_delay,
        "owner": table.owner_id,
        "status": table.status,
        "seats-TOTAL_FORMS": 0,
        "seats-INITIAL_FORMS": 0,
    }
    r = clerk.post(url, form)
    assert r.status_code == 302, r.content.decode()[:2000]
    # then the fixed deck is untouched
    table.refresh_from_db()
    assert (table.name, table.fixed_deck) == ("renamed", WIN_DECK)


@pytest.mark.parametrize(
    "url",
    [
        "/admin/games/hand/?seed__startswith=a",
        "/admin/games/hand/?seed=0",
        "/admin/games/hand/?deck__contains=2N",
        "/admin/games/table/?fixed_deck__0=2N",
        "/admin/games/idempotencyrecord/?response_body__state__hand__contains=2N",
    ],
)
def test_secrets_cannot_be_probed_with_changelist_filters(staff, clerk, moved, url) -> None:
    for client in (staff, clerk):
        assert client.get(url).status_code == 400, url


def test_public_fields_still_filter(clerk, moved) -> None:
    assert clerk.get("/admin/games/hand/?status__exact=playing").status_code == 200
    assert clerk.get("/admin/games/handevent/?type__exact=discard").status_code == 200


def test_a_playing_tables_terms_and_every_status_are_read_only(staff, win_hand) -> None:
    # Given a table whose hand is being played,
    table = Table.objects.get(pk=win_hand["table"])
    url = f"/admin/games/table/{table.pk}/change/"
    page = staff.get(url).content.decode()
    # its stake, mode, ruleset, timeouts and status are shown, not editable,
    for field in ("stake", "mode", "ruleset", "turn_timeout", "status", "room"):
        assert f'name="{field}"' not in page, field
    assert 'name="name"' in page
    # and a forged POST changes none of them.
    staff.post(
        url,
        {"name": "renamed", "stake": 999, "status": "closed", "mode": "advanced", "owner": 1},
    )
    table.refresh_from_db()
    assert (table.stake, table.status, table.mode) == (10, "playing", "basic")


def test_between_hands_the_terms_are_editable_but_never_the_status(staff, make_user) -> None:
    owner, _ = make_user()
    table = Table.objects.create(owner=owner, name="t", stake=5)
    page = staff.get(f"/admin/games/table/{table.pk}/change/").content.decode()
    assert 'name="stake"' in page and 'name="status"' not in page
    assert staff.get(f"/admin/games/table/{table.pk}/delete/").status_code == 403


# --------------------------------------------------------------------------- change history


def test_an_admin_change_is_recorded_with_old_and_new_values(staff, make_user) -> None:
    import pghistory.models
    from django.contrib.admin.models import LogEntry

    from games.models import Room

    # Given a room, when staff change its minimum balance in the admin,
    room = Room.objects.get(slug="nen-dat")
    r = staff.get(f"/admin/games/room/{room.pk}/change/")
    assert r.status_code == 200
    form = r.context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None}
    data.update(min_balance=room.min_balance + 1000)
    data = {k: (json.dumps(v) if isinstance(v, dict | list) else v) for k, v in data.items()}
    r = staff.post(f"/admin/games/room/{room.pk}/change/", data)
    assert r.status_code == 302, r.context["adminform"].form.errors if r.context else r
    # the history keeps the old and the new value, who made the change and where,
    change = pghistory.models.Events.objects.tracks(room).get(pgh_label="update")
    assert change.pgh_diff["min_balance"] == [room.min_balance, room.min_balance + 1000]
    admin_user = r.wsgi_request.user
    assert change.pgh_context["user"] == admin_user.pk
    assert change.pgh_context["url"] == f"/admin/games/room/{room.pk}/change/"
    # Django's own log has it too, and both are browsable.
    assert LogEntry.objects.filter(object_id=str(room.pk), content_type__model="room").exists()
    assert staff.get("/admin/pghistory/events/").status_code == 200
    assert staff.get("/admin/admin/logentry/").status_code == 200


def test_a_table_history_never_holds_its_fixed_deck(staff, win_hand) -> None:
    from games.models import TableEvent

    fields = {f.name for f in TableEvent._meta.fields}
    assert "fixed_deck" not in fields and "stake" in fields
    assert TableEvent.objects.filter(pgh_obj_id=win_hand["table"], pgh_label="insert").exists()


def _room_form_data(staff: Client, room) -> dict:
    r = staff.get(f"/admin/games/room/{room.pk}/change/")
    assert r.status_code == 200
    data = {k: v for k, v in r.context["adminform"].form.initial.items() if v is not None}
    return {k: (json.dumps(v) if isinstance(v, dict | list) else v) for k, v in data.items()}


@pytest.mark.parametrize(
    ("fees", "field"),
    [
        ({"declared": "5"}, "declared"),
        ({"declared": 101}, "declared"),
        ({"by_players": {"2": 4, "3": 3}}, "by_players"),
        ({"xuong_sai": {"2": 30, "3": 10, "4": -1}}, "xuong_sai.4"),
        ({"declard": 5}, "declard"),
        ([5, 10], "fees"),
    ],
)
def test_a_bad_fee_schedule_is_a_field_error_in_the_room_form(staff, fees, field) -> None:
    from games.models import Room

    # Given a room, when staff post a fee schedule the settlement could not read,
    room = Room.objects.get(slug="chieu-coi")
    before = room.fees
    data = _room_form_data(staff, room)
    data["fees"] = json.dumps(fees)
    r = staff.post(f"/admin/games/room/{room.pk}/change/", data)
    # then the form answers with an error on its fees field, and the room is unchanged.
    assert r.status_code == 200
    errors = r.context["adminform"].form.errors
    assert list(errors) == ["fees"], errors
    assert Room.objects.get(pk=room.pk).fees == before


def test_a_good_fee_schedule_is_saved_in_its_typed_form(staff) -> None:
    from games.models import Room

    room = Room.objects.get(slug="chieu-coi")
    data = _room_form_data(staff, room)
    data["fees"] = json.dumps({"declared": 4, "xuong_sai": {"4": 5, "3": 10, "2": 30}})
    r = staff.post(f"/admin/games/room/{room.pk}/change/", data)
    assert r.status_code == 302
    assert Room.objects.get(pk=room.pk).fees == {
        "declared": 4,
        "xuong_sai": {"2": 30, "3": 10, "4": 5},
    }
