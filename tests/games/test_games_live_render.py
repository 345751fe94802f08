"""games.live.render: a hand's views rendered once per (hand, seq, seats' version, seat) and
shared by the reads of GET /hands/{id} and the long polls; hand_get's fixed statement; the
state carried on from an earlier one (games.hand_store.hand_state)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.db.utils import DJANGO_VERSION_PICKLE_KEY
from rest_framework.renderers import JSONRenderer

from accounts.models import User
from games import hand_store
from games.hand_store import hand_replay, hand_state, state_lru
from games.live.render import Rendered, hand_view_rendered, hand_views_rendered, kept_views
from games.models import Hand, HandEvent, HandSeat
from games.selectors.hands import hand_get, hand_view_for_seat
from tests.games.conftest import start_table
from tests.games.decks import scripted_move

pytestmark = pytest.mark.django_db


def hand_url(hand: dict[str, Any]) -> str:
    return f"/api/v1/hands/{hand['hand']}"


def play(players: list[Any], hand: dict[str, Any], n: int) -> None:
    for _ in range(n):
        turn = players[0].client.get(hand_url(hand)).json()["turn_seat"]
        mine = players[turn].client.get(hand_url(hand)).json()
        r = players[turn].client.post(
            f"{hand_url(hand)}/moves", scripted_move(mine["legal_moves"]), format="json"
        )
        assert r.status_code == 201, r.content


def fresh_body(hand_id: int, seat: int | None) -> bytes:
    """The view as rendered from the database now, with nothing kept."""
    return JSONRenderer().render(hand_view_for_seat(hand=hand_get(hand_id=hand_id), seat=seat))


# --------------------------------------------------------------------------- kept renders


def test_a_second_read_is_served_from_the_kept_render_byte_for_byte(players, win_hand) -> None:
    # given: a read that renders and keeps the view of seat 1
    first = players[1].client.get(hand_url(win_hand))
    assert first.status_code == 200
    assert len(kept_views._data) == 1
    # when: the same seat reads again
    second = players[1].client.get(hand_url(win_hand))
    # then: the same bytes and headers, and they are the view rendered afresh
    assert second.content == first.content == fresh_body(win_hand["hand"], 1)
    for header in ("ETag", "Content-Type", "Cache-Control", "Vary"):
        assert second[header] == first[header]
    assert second["Content-Type"] == "application/json"


def test_each_seat_gets_its_own_render_never_another_seats(players, win_hand) -> None:
    bodies = [p.client.get(hand_url(win_hand)).json() for p in players]
    bodies += [p.client.get(hand_url(win_hand)).json() for p in players]  # the kept ones
    for i, body in enumerate(bodies):
        assert body["my_seat"] == i % 4
        assert body == json.loads(fresh_body(win_hand["hand"], i % 4))


def test_a_move_makes_the_next_read_render_anew(players, win_hand) -> None:
    before = players[2].client.get(hand_url(win_hand))
    play(players, win_hand, 1)
    after = players[2].client.get(hand_url(win_hand))
    assert after["ETag"] != before["ETag"]
    assert after.json()["seq"] == before.json()["seq"] + 1
    assert after.content == fresh_body(win_hand["hand"], 2)


def test_a_player_leaving_mid_hand_is_not_hidden_by_a_kept_render(players, win_hand) -> None:
    # given: seat 1's view kept while seat 3 is still in the hand
    before = players[1].client.get(hand_url(win_hand)).json()
    assert before["players"][3]["left"] is False
    # when: seat 3 stands up mid-hand (no event: the seats' version moves)
    r = players[3].client.post(f"/api/v1/tables/{win_hand['table']}/leave", {}, format="json")
    assert r.status_code == 200, r.content
    # then: seat 1's next read shows it gone
    after = players[1].client.get(hand_url(win_hand))
    assert after.json()["players"][3]["left"] is True
    assert after.content == fresh_body(win_hand["hand"], 1)


def test_an_indented_read_is_rendered_as_asked_not_from_the_kept_bytes(players, win_hand) -> None:
    players[0].client.get(hand_url(win_hand))  # kept, compact
    r = players[0].client.get(hand_url(win_hand), HTTP_ACCEPT="application/json; indent=2")
    assert r.status_code == 200
    assert b"\n  " in r.content
    assert r.json() == json.loads(fresh_body(win_hand["hand"], 0))


def test_the_long_polls_render_is_kept_for_the_reads(players, win_hand) -> None:
    etag, body, seq, _playing = hand_view_rendered(hand_id=win_hand["hand"], seat=0)  # a wake-up
    r = players[0].client.get(hand_url(win_hand))
    assert (r["ETag"], r.content, r.json()["seq"]) == (etag, body, seq)


def test_seats_rendered_together_read_the_hand_once_and_each_gets_its_own_view(
    players, win_hand, django_assert_num_queries
) -> None:
    play(players, win_hand, 1)
    kept_views.clear()
    state_lru.clear()
    # one read of the hand, one of its seats, one of its log: whatever the number of seats
    with django_assert_num_queries(3):
        views = hand_views_rendered(hand_id=win_hand["hand"], seats=[0, 1, 3])
    for seat in (0, 1, 3):
        assert views[seat].body == fresh_body(win_hand["hand"], seat)
        assert json.loads(views[seat].body)["my_seat"] == seat
        # kept, as a single seat's render keeps it: served to the seat's read byte for byte
        r = players[seat].client.get(hand_url(win_hand))
        assert (r["ETag"], r.content) == (views[seat].etag, views[seat].body)


def test_a_wake_up_at_the_seq_this_process_committed_renders_without_reading(
    players, win_hand, django_assert_num_queries, django_capture_on_commit_callbacks
) -> None:
    # given: a move committed here (its hooks run: the hand is kept as committed)
    with django_capture_on_commit_callbacks(execute=True):
        play(players, win_hand, 1)
    seq = Hand.objects.get(pk=win_hand["hand"]).seq
    kept_views.clear()
    # when: its announcement's waiters are rendered at that seq
    with django_assert_num_queries(0):
        views = hand_views_rendered(hand_id=win_hand["hand"], seats=[0, 1, 2, 3], seq=seq)
    # then: no read of the row, and every seat's view is the one rendered from the database
    for seat in range(4):
        assert views[seat].seq == seq
        assert views[seat].body == fresh_body(win_hand["hand"], seat)
    # and so is a read whose version (seq, seats' version) is the one committed here
    kept_views.clear()
    version = Hand.objects.get(pk=win_hand["hand"]).seats_version
    with django_assert_num_queries(0):
        one = hand_view_rendered(hand_id=win_hand["hand"], seat=2, seq=seq, seats_version=version)
    assert one.body == fresh_body(win_hand["hand"], 2)
    # but an older seq (a move since), another seats' version or a spectator reads the row
    for seq_asked, version_asked, seat in ((seq - 1, None, 0), (seq, version + 1, 0)):
        kept_views.clear()
        with django_assert_num_queries(1):
            hand_views_rendered(
                hand_id=win_hand["hand"], seats=[seat], seq=seq_asked, seats_version=version_asked
            )
    kept_views.clear()
    with django_assert_num_queries(1):
        hand_views_rendered(hand_id=win_hand["hand"], seats=[0, None], seq=seq)


def test_a_hand_whose_seats_changed_or_that_ended_is_read_again(
    players, win_hand, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        play(players, win_hand, 1)
    seq = Hand.objects.get(pk=win_hand["hand"]).seq
    assert hand_store.hand_committed_at(win_hand["hand"], seq) is not None
    # a player leaving mid-hand changes the row without a move: forgotten
    with django_capture_on_commit_callbacks(execute=True):
        r = players[3].client.post(f"/api/v1/tables/{win_hand['table']}/leave", {}, format="json")
    assert r.status_code == 200, r.content
    assert hand_store.hand_committed_at(win_hand["hand"], seq) is None
    kept_views.clear()
    views = hand_views_rendered(hand_id=win_hand["hand"], seats=[1], seq=seq)
    assert json.loads(views[1].body)["players"][3]["left"] is True
    # an ended hand is not kept (its JSON columns read back in their own key order)
    hand = Hand.objects.get(pk=win_hand["hand"])
    hand.status = Hand.Status.ENDED
    hand_store.hand_committed_keep(hand)
    assert hand_store.hand_committed_at(hand.pk, hand.seq) is None


def test_kept_renders_are_bounded() -> None:
    kept_views.clear()
    for i in range(kept_views.size + 10):
        kept_views.put((i, 0, 0, 0), Rendered("", b"", 0))
    assert len(kept_views._data) == kept_views.size
    assert kept_views.get((0, 0, 0, 0)) is None
    assert kept_views.get((kept_views.size + 9, 0, 0, 0)) is not None


# --------------------------------------------------------------------------- hand_get


def test_hand_get_reads_the_row_as_the_orm_does(players, win_hand) -> None:
    play(players, win_hand, 3)
    fast = hand_get(hand_id=win_hand["hand"])
    orm = Hand.objects.select_related("table").get(pk=win_hand["hand"])
    for f in Hand._meta.concrete_fields:
        assert getattr(fast, f.attname) == getattr(orm, f.attname), f.name
    for f in type(orm.table)._meta.concrete_fields:
        assert getattr(fast.table, f.attname) == getattr(orm.table, f.attname), f.name
    assert fast._state.adding is False and fast._state.db == orm._state.db
    assert isinstance(fast.ruleset, dict) and isinstance(fast.fees, dict)


def test_seats_loaded_are_the_instances_the_models_make_and_each_load_its_own(
    players, win_hand
) -> None:
    # Given a hand whose seats this process has loaded once (the query's rows kept)
    hand_store._seat_rows.clear()
    first = hand_store.hand_seats_load(hand_get(hand_id=win_hand["hand"]))
    # when another read of the hand loads them again (from what was kept),
    hand = hand_get(hand_id=win_hand["hand"])
    seats = hand_store.hand_seats_load(hand)
    # then each is what HandSeat(hand=…, …) and seat.user = User(…) make, field for field,
    # every default included,
    rows = HandSeat.objects.filter(hand_id=hand.pk).select_related("user").order_by("position")
    assert len(seats) == len(rows) == 4
    for seat, row in zip(seats, rows, strict=True):
        made = HandSeat(
            pk=row.pk,
            hand=hand,
            position=row.position,
            user_id=row.user_id,
            table_seat=row.table_seat,
            auto_u=row.auto_u,
            auto_chiu=row.auto_chiu,
            left_at=row.left_at,
        )
        made.user = User(pk=row.user_id, username=row.user.username)
        assert _fields(seat) == _fields(made)
        assert _fields(seat.user) == _fields(made.user)
        assert vars(seat.user).keys() == vars(made.user).keys()
        assert seat.hand is hand and seat.user.username == row.user.username
        assert set(seat._state.fields_cache) == {"hand", "user"}
        assert (seat._state.adding, seat._state.db) == (made._state.adding, made._state.db)
        assert (seat.user._state.adding, seat.user._state.db) == (
            made.user._state.adding,
            made.user._state.db,
        )
    assert hand.seat_list() == seats
    # and each load has instances of its own: a change to one is not another's.
    for mine, other in zip(seats, first, strict=True):
        assert mine is not other and mine.user is not other.user
        assert mine._state is not other._state
    seats[0].user.username = "changed"
    assert hand_store.hand_seats_load(hand)[0].user.username == rows[0].user.username


def _fields(instance: Any) -> dict[str, Any]:
    """The instance's attributes but its state, and those of fields whose default is a call
    (``User.date_joined``: the time it was made, a value nobody reads from a seat's player)."""
    called = {f.attname for f in type(instance)._meta.concrete_fields if callable(f.default)}
    return {k: v for k, v in vars(instance).items() if k != "_state" and k not in called}


# --------------------------------------------------------------------------- hand_state


def test_a_state_carried_on_from_an_earlier_one_is_the_replay(players, win_hand) -> None:
    # given: the state at seq 1 kept, and the hand played on to seq 6 (nothing else kept)
    play(players, win_hand, 1)
    hand = hand_get(hand_id=win_hand["hand"])
    early = hand_state(hand)
    play(players, win_hand, 5)
    state_lru.clear()
    state_lru.put((hand.pk, hand.seq, hand.seed_hash), early)
    # when: the state at seq 6 is asked for
    later = hand_get(hand_id=win_hand["hand"])
    carried = hand_state(later)
    # then: it is the replay of the whole log
    assert later.seq == 6
    assert carried == hand_replay(later)


def test_the_events_carried_on_are_read_as_the_orm_reads_them(
    players, win_hand, django_assert_num_queries, monkeypatch
) -> None:
    play(players, win_hand, 4)
    hand = hand_get(hand_id=win_hand["hand"])
    from_seq = 1
    orm = list(
        HandEvent.objects.of_hand(hand)
        .filter(seq__gt=from_seq, seq__lte=hand.seq)
        .order_by("seq")
        .values("seq", "type", "payload")
    )
    state_lru.clear()
    state_lru.put((hand.pk, from_seq, hand.seed_hash), hand_replay(hand, upto=from_seq))
    seen: list[Any] = []
    real = hand_store.replay_from
    monkeypatch.setattr(
        hand_store,
        "replay_from",
        lambda state, events: (seen.extend(events), real(state, events))[1],
    )
    with django_assert_num_queries(1):  # the events after seq 1, and nothing else
        state = hand_state(hand)
    assert seen == orm and all(isinstance(e["payload"], dict) for e in seen)
    assert state == hand_replay(hand)


def test_a_kept_state_of_another_seed_is_not_carried_on(players, win_hand) -> None:
    # given: the hand at seq 2, and only a state kept under another seed's hash
    play(players, win_hand, 2)
    hand = hand_get(hand_id=win_hand["hand"])
    state_lru.clear()
    state_lru.put((hand.pk, 0, "another seed's hash"), hand_replay(hand, upto=0))
    # then: nothing to carry on from; the state is the replay
    assert state_lru.latest_before((hand.pk, hand.seq, hand.seed_hash)) is None
    assert hand_state(hand) == hand_replay(hand)


def test_a_kept_render_carries_every_header_the_rendered_response_carries(
    players, win_hand
) -> None:
    # The plain read is sent as kept bytes; a read with Accept parameters goes through DRF's
    # Response as before: the two carry the same headers (but the body's length).
    kept = players[0].client.get(hand_url(win_hand), HTTP_X_REQUEST_ID="kept-0123456789")
    drf = players[0].client.get(
        hand_url(win_hand), HTTP_ACCEPT="application/json", HTTP_X_REQUEST_ID="drf-0123456789"
    )
    indented = players[0].client.get(
        hand_url(win_hand),
        HTTP_ACCEPT="application/json; indent=2",
        HTTP_X_REQUEST_ID="drf-0123456789",
    )
    skip = {"content-length", "x-request-id"}
    names = {k.lower() for k in kept.headers} - skip
    assert names == {k.lower() for k in indented.headers} - skip
    assert names == {k.lower() for k in drf.headers} - skip
    for name in names - {"content-type"}:
        if not name.startswith("ratelimit-"):  # each read counts against the budget
            assert kept.headers[name] == indented.headers[name], name
    assert kept.content == drf.content


def test_a_kept_hand_is_a_copy_as_copy_copy_makes_it(players, win_hand) -> None:
    # Given a playing hand read with its table and seats (both cached on the instance)
    hand = hand_get(hand_id=win_hand["hand"])
    assert hand.status == Hand.Status.PLAYING
    # when it is kept and read back
    hand_store.hand_committed_keep(hand)
    kept = hand_store.hand_committed_at(hand.pk, hand.seq)
    # then it holds what copy.copy holds: the same values, the same cached relations (but for
    # the pickle protocol's mark of Django's version)
    assert kept is not None and kept is not hand
    copied = copy.copy(hand)
    apart = ("_state", DJANGO_VERSION_PICKLE_KEY)
    assert {k: v for k, v in kept.__dict__.items() if k not in apart} == {
        k: v for k, v in copied.__dict__.items() if k not in apart
    }
    assert kept._state.__dict__.keys() == copied._state.__dict__.keys()
    assert (kept._state.db, kept._state.adding) == (hand._state.db, hand._state.adding)
    assert kept.table is hand.table  # (one level deep, as copy.copy)
    # and changing the copy's state or cache leaves the original alone, both ways
    kept._state.fields_cache.clear()
    kept._state.adding = True
    kept.seq += 1
    assert hand._state.fields_cache and not hand._state.adding
    assert hand_store.hand_committed_at(hand.pk, hand.seq) is not None  # the kept one unchanged


def test_the_first_views_of_a_new_hand_read_nothing_where_it_was_dealt(
    players, django_capture_on_commit_callbacks, django_assert_num_queries
) -> None:
    # Given a hand this process dealt (its commit's hooks run: the hand is kept as dealt)
    with django_capture_on_commit_callbacks(execute=True):
        hand = start_table(players)
    kept_views.clear()
    # when its players' first views are rendered at the deal's seq
    with django_assert_num_queries(0):
        views = hand_views_rendered(hand_id=hand["hand"], seats=[0, 1, 2, 3], seq=0)
    # then from the kept hand, its seats' players' names with it (no query for each name)
    for seat, rendered in views.items():
        body = json.loads(rendered.body)
        assert [p["username"] for p in body["players"]] == [p.user.username for p in players]
        assert rendered.body == fresh_body(hand["hand"], seat)
