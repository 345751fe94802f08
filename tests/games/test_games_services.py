"""Services and selectors played directly: random hands checked for hidden information, the
cached state checked against the replay of the log, dealing and ending."""

from __future__ import annotations

import hashlib
import json
import random
import time
from typing import Any

import pytest
from django.core.cache import cache
from django.db import IntegrityError, connection
from django.test.utils import CaptureQueriesContext

from core import errors as domain
from core.errors import DomainError
from games.hand_store import (
    hand_published_seq,
    hand_replay,
    hand_state,
    hand_store_problems,
    hand_version_key,
    hand_wait_for_seq,
    state_lru,
)
from games.models import Hand, HandEvent, IdempotencyRecord
from games.rules import shuffle
from games.rules.cards import CODES
from games.rules.errors import InvalidInput, RuleError
from games.rules.fair_deal import fair_deck
from games.rules.moves import MOVE_TYPES
from games.selectors.hands import hand_events_for_user, hand_view_for_user
from games.services.hands import move_submit
from games.services.tables import seat_join, seat_ready, table_create
from tests.games.conftest import hand_guard_off

pytestmark = pytest.mark.django_db

PUBLIC_EFFECTS = {"deal", "drawn", "chiu", "win", "hoa", "fault", "bao", "claim", *MOVE_TYPES}
PROBLEM_KEYS = {"type", "title", "status", "code", "detail", "errors", "seq"}


def deal(users: list[Any], *, seed: int | None = None, mode: str = "basic") -> Hand:
    """A table of ``users`` (the first creates it) and its first hand, dealt by the services."""
    deck = [CODES[k] for k in shuffle(f"services-{seed}".encode())] if seed is not None else None
    table = table_create(
        owner=users[0],
        name="t",
        stake=1,
        max_seats=len(users),
        mode=mode,
        deck=deck,
        dealer=0 if deck else None,
    )
    for user in users[1:]:
        seat_join(table_id=table.pk, user=user)
    hand = None
    for user in users:
        hand = seat_ready(table_id=table.pk, user=user) or hand
    assert hand is not None
    return hand


def request_hash(body: Any) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def submit(hand: Hand, user: Any, move: dict[str, Any], **kw: Any) -> Any:
    return move_submit(
        hand_id=hand.pk,
        user=user,
        move_json=move,
        request_hash=request_hash(move),
        render=lambda hand, state: hand_view_for_user(hand=hand, user=user, state=state),
        **kw,
    )


def assert_view_hides(view: dict[str, Any], seat: int, true_hand: list[str]) -> None:
    assert view["my_seat"] == seat and view["hand"] == true_hand
    assert "stock" not in view and view["seed"] is None and view["result"] is None
    for public in view["seats"]:
        assert set(public) == {"seat", "mat", "hand_count", "bao", "auto_u", "auto_chiu", "faults"}
        assert all(f["visible"] for f in public["faults"])
    offered = view["offer"]["card"] if view["offer"] else None
    for move in view["legal_moves"]:
        for key in ("card", "with"):
            if key in move:
                assert move[key] in true_hand or move[key] == offered


def assert_events_hide(
    page: dict[str, Any], true_dealt: list[str], seat: int | None = None
) -> None:
    for event in page["events"]:
        for effect in event["effects"]:
            assert effect["type"] in PUBLIC_EFFECTS or effect.get("seat") == seat
            if effect.get("hidden"):  # a hidden fault or claim: its own seat's only
                assert seat is not None and effect["seat"] == seat
            assert "hands" not in effect and "deck" not in effect and "stock" not in effect
            if effect["type"] == "deal":
                assert effect["hand"] == true_dealt


def pick(rng: random.Random, legal: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    wins = [m for m in legal if m["type"] == "u"]
    if wins and mode == "basic":
        return wins[0]
    others = [m for m in legal if m["type"] != "u"] or legal
    return rng.choice(others)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n_seats", "mode", "seed"),
    [(4, "basic", 1), (4, "basic", 2), (3, "basic", 3), (2, "basic", 4), (4, "advanced", 5)],
)
def test_random_hands_never_show_a_seat_another_seats_hand(make_user, n_seats, mode, seed) -> None:
    users = [make_user()[0] for _ in range(n_seats)]
    hand = deal(users, seed=seed, mode=mode)
    rng = random.Random(seed)
    for step in range(400):
        hand.refresh_from_db()
        state = hand_state(hand)
        if hand.status == "ended":
            break
        for seat, user in enumerate(users):
            true_hand = [CODES[k] for k in range(25) for _ in range(state.seats[seat].hand[k])]
            view = hand_view_for_user(hand=hand, user=user)
            assert_view_hides(view, seat, true_hand)
            if step % 10 == 0:
                page = hand_events_for_user(hand=hand, user=user)
                dealt = state.seats[seat].dealt
                true_dealt = [CODES[k] for k in range(25) for _ in range(dealt[k])]
                assert_events_hide(page, true_dealt, seat)
        turn = state.turn
        # A refused move's error body says nothing about anyone's cards.
        other = users[(turn + 1) % n_seats]
        with pytest.raises(DomainError) as refused:
            submit(hand, other, {"type": "discard", "card": "CC"})
        assert isinstance(refused.value, domain.Conflict | domain.RuleRefused) and set(
            refused.value.extra
        ) <= {"seq"}
        legal = hand_view_for_user(hand=hand, user=users[turn])["legal_moves"]
        result = submit(hand, users[turn], pick(rng, legal, mode))
        assert result.status == 201 and result.body["seq"] == hand.seq + 1
    else:
        raise AssertionError("the hand did not end")
    # After the end the seat views show every hand and the seed.
    view = hand_view_for_user(hand=hand, user=users[0])
    assert view["seed"] == hand.seed and all("hand" in s for s in view["seats"])
    assert hand_store_problems(hand) == []


def test_every_hand_in_the_database_is_the_replay_of_its_log(make_user) -> None:
    # Given a few hands played partway and to the end,
    for seed in range(3):
        users = [make_user()[0] for _ in range(4)]
        hand = deal(users, seed=100 + seed)
        rng = random.Random(seed)
        for _ in range(15 + 20 * seed):
            hand.refresh_from_db()
            if hand.status == "ended":
                break
            turn = hand_state(hand).turn
            legal = hand_view_for_user(hand=hand, user=users[turn])["legal_moves"]
            submit(hand, users[turn], pick(rng, legal, "basic"))
    # then every hand's cached state equals the replay of its log from the deal.
    hands = list(Hand.objects.all())
    assert len(hands) == 3
    for hand in hands:
        assert hand_store_problems(hand) == [], hand
        assert hand.seq == HandEvent.objects.filter(hand=hand).count() - 1


def test_a_remembered_state_that_is_not_the_replay_is_reported(make_user, corrupts_cache) -> None:
    # Given a hand whose state this process remembers wrongly (a bug, or memory corruption),
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=7)
    legal = hand_view_for_user(hand=hand, user=users[0])["legal_moves"]
    submit(hand, users[0], legal[-1])
    hand.refresh_from_db()
    expected = hand_replay(hand)
    state_lru.put((hand.pk, hand.seq, hand.seed_hash), hand_replay(hand, upto=0))
    # the check reports it; once forgotten, the state is the replay again.
    assert hand_store_problems(hand) == ["the remembered state at seq 1 differs from the replay"]
    state_lru.clear()
    assert hand_state(hand) == expected
    assert hand_store_problems(hand) == []


def test_a_row_seq_ahead_of_its_log_is_reported(make_user, corrupts_cache) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=8)
    with hand_guard_off():  # as the owner, past the hand row's guard
        Hand.objects.filter(pk=hand.pk).update(seq=3)
    hand.refresh_from_db()
    assert hand_store_problems(hand) == ["hand.seq is 3 but the log ends at 0"]


def test_no_state_is_stored_beside_the_log() -> None:
    # A hand's state is never read back from the database: no blob column, no pickle.
    assert not [f.name for f in Hand._meta.get_fields() if "blob" in f.name or "state" in f.name]


def test_a_seed_dealt_hand_is_the_shuffle_of_its_seeds(make_user) -> None:
    # The fair deal: the shuffle of the key of the server's seed, the seats' (none given here:
    # empty) and the hand's id — no longer the server seed's own shuffle.
    users = [make_user()[0] for _ in range(3)]
    hand = deal(users)
    assert hand.deck is None and hand.client_seeds == ["", "", ""]
    deck = fair_deck(server_seed=bytes.fromhex(hand.seed), hand_id=hand.pk, client_seeds=[""] * 3)
    assert deck != shuffle(bytes.fromhex(hand.seed))
    state = hand_state(hand)
    assert sum(state.seats[hand.dealer].hand) == 20
    assert [CODES[k] for k in state.stock] == [CODES[k] for k in deck[58:]]


def test_idempotent_submit_appends_once(make_user) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=8)
    move = hand_view_for_user(hand=hand, user=users[0])["legal_moves"][0]
    first = submit(hand, users[0], move, idempotency_key="abc")
    again = submit(hand, users[0], move, idempotency_key="abc")
    assert again.replayed and not first.replayed and first.body == again.body
    assert HandEvent.objects.filter(hand=hand).count() == 2


def test_a_body_encoded_by_the_caller_is_encoded_once_and_stored_as_it_was(make_user) -> None:
    # Given a caller that encodes the body itself (games.api.move_direct),
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=8)
    move = hand_view_for_user(hand=hand, user=users[0])["legal_moves"][0]
    calls: list[dict[str, Any]] = []

    def encode(body: dict[str, Any]) -> bytes:
        calls.append(body)
        return json.dumps(body, separators=(",", ":")).encode()

    # when a move is submitted with a key,
    first = submit(hand, users[0], move, idempotency_key="enc", encode=encode)
    # then the body was encoded once, the response carries those bytes, the key's record holds
    # the same JSON, and a repeat is answered from it.
    assert calls == [first.body] and json.loads(first.encoded) == first.body
    record = IdempotencyRecord.objects.get(hand=hand, key="enc")
    assert record.response_body == first.body
    again = submit(hand, users[0], move, idempotency_key="enc", encode=encode)
    assert again.replayed and again.body == first.body and len(calls) == 1


def _rule_error_classes(cls: type = RuleError) -> list[type]:
    return [cls] + [c for sub in cls.__subclasses__() for c in _rule_error_classes(sub)]


@pytest.mark.parametrize("error", _rule_error_classes(), ids=lambda c: c.__name__)
def test_every_rule_error_from_apply_is_a_4xx_problem_with_the_seq(
    make_user, monkeypatch, error
) -> None:
    # Given the rules core refusing a move with any of its error types,
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=9)
    move = hand_view_for_user(hand=hand, user=users[0])["legal_moves"][0]

    def refuse(state: Any, move: Any) -> Any:
        exc = error.__new__(error)
        RuleError.__init__(exc, "some_code", "Refused.")
        raise exc

    monkeypatch.setattr("games.services.hands.apply", refuse)
    # the service answers a problem with the code and the seq, and appends nothing.
    with pytest.raises(DomainError) as refused:
        submit(hand, users[0], move)
    assert refused.value.code == "some_code" and refused.value.extra == {"seq": 0}
    assert isinstance(
        refused.value,
        domain.InvalidInput if issubclass(error, InvalidInput) else domain.RuleRefused,
    )
    assert HandEvent.objects.filter(hand=hand).count() == 1


def test_a_late_publish_never_lowers_the_seq_the_long_polls_watch(
    make_user, django_capture_on_commit_callbacks
) -> None:
    # Given the cache already holding a later seq of the hand (a newer move published first),
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=10)
    cache.set(hand_version_key(hand.pk), 5)
    move = hand_view_for_user(hand=hand, user=users[0])["legal_moves"][0]
    # when the move at seq 1 publishes after it,
    with django_capture_on_commit_callbacks(execute=True):
        submit(hand, users[0], move)
    # the cache keeps the later seq; on an empty cache the move publishes its own.
    assert hand_published_seq(hand.pk) == 5
    cache.clear()
    move = hand_view_for_user(hand=Hand.objects.get(pk=hand.pk), user=users[1])["legal_moves"][0]
    with django_capture_on_commit_callbacks(execute=True):
        submit(hand, users[1], move)
    assert hand_published_seq(hand.pk) == 2


def test_the_same_idempotency_key_raced_on_two_hands_is_422_and_rolls_back(
    make_user, monkeypatch
) -> None:
    # Given one user about to move in a hand with key "k",
    users = [make_user()[0] for _ in range(2)]
    hand, other = deal(users, seed=11), deal(users, seed=12)
    move = hand_view_for_user(hand=hand, user=users[0])["legal_moves"][0]

    def racing_view(hand: Hand, state: Any) -> Any:
        # its other hand's request with the same key commits between the lookup and the insert.
        IdempotencyRecord.objects.create(
            user=users[0],
            key="k",
            hand=other,
            request_hash=request_hash("another request"),
            response_status=201,
            response_body={},
        )
        return hand_view_for_user(hand=hand, user=users[0], state=state)

    # then the move is refused as a reused key, and nothing of it is kept.
    with pytest.raises(DomainError) as refused:
        move_submit(
            hand_id=hand.pk,
            user=users[0],
            move_json=move,
            request_hash=request_hash(move),
            render=racing_view,
            idempotency_key="k",
        )
    assert refused.value.code == "idempotency_key_reused"
    hand.refresh_from_db()
    assert hand.seq == 0 and HandEvent.objects.filter(hand=hand).count() == 1
    assert not IdempotencyRecord.objects.filter(hand=hand).exists()


class _DownCache:
    """A cache server that is gone: every call fails."""

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("the cache is down")

        return fail


def test_a_long_poll_reads_no_row_while_the_cache_holds_the_seq(make_user) -> None:
    # Given a hand whose seq is published in the cache,
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=13)
    cache.set(hand_version_key(hand.pk), 0)
    # a long poll that finds nothing new waits out its time without touching the database.
    with CaptureQueriesContext(connection) as queries:
        hand_wait_for_seq(hand_id=hand.pk, after_seq=0, timeout=1.5)
    assert len(queries) == 0


def test_a_long_poll_on_an_unpublished_hand_reads_the_row_once_and_publishes_it(make_user) -> None:
    # Given a hand whose seq is not in the cache (never published, or evicted),
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=14)
    assert hand_published_seq(hand.pk) is None
    # a long poll reads the row once and leaves its seq in the cache for the next polls.
    with CaptureQueriesContext(connection) as queries:
        hand_wait_for_seq(hand_id=hand.pk, after_seq=0, timeout=1.5)
    assert len(queries) == 1
    assert hand_published_seq(hand.pk) == 0


def test_a_long_poll_finds_a_move_in_the_row_when_the_cache_missed_it(make_user) -> None:
    # Given a move the cache never heard of (its publish is lost),
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=15)
    submit(hand, users[0], hand_view_for_user(hand=hand, user=users[0])["legal_moves"][0])
    assert hand_published_seq(hand.pk) is None
    # a long poll behind it answers at once from the row.
    start = time.monotonic()
    hand_wait_for_seq(hand_id=hand.pk, after_seq=0, timeout=5)
    assert time.monotonic() - start < 0.5


def test_a_long_poll_backs_off_the_database_while_the_cache_is_down(make_user, monkeypatch) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=16)
    monkeypatch.setattr("games.hand_store.cache", _DownCache())
    # The poll neither fails nor reads the row at every tick: at 0, 0.5 and 1.5 seconds.
    with CaptureQueriesContext(connection) as queries:
        hand_wait_for_seq(hand_id=hand.pk, after_seq=0, timeout=2)
    assert 2 <= len(queries) <= 3


@pytest.mark.parametrize("limit", [1, 100])
def test_an_events_page_never_holds_events_beyond_its_seq(make_user, limit) -> None:
    # Given the hand row read just before a move is appended (the API reads the row first),
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=17)
    read_before = Hand.objects.get(pk=hand.pk)
    submit(hand, users[0], hand_view_for_user(hand=hand, user=users[0])["legal_moves"][0])
    # the page of events read after it says a seq at least that of its last event.
    page = hand_events_for_user(hand=read_before, user=users[1], limit=limit)
    assert page["seq"] >= max(e["seq"] for e in page["events"])
    assert page["seq"] == 1 and page["has_more"] is (limit == 1)


def test_an_integrity_error_of_another_cause_is_not_taken_for_a_reused_key(make_user) -> None:
    # Given the idempotency record's INSERT refused for a reason other than its key,
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=18)
    move = hand_view_for_user(hand=hand, user=users[0])["legal_moves"][0]
    table = IdempotencyRecord._meta.db_table

    def refuse(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql.startswith(f"INSERT INTO {table}"):
            raise IntegrityError("CHECK constraint failed")
        return execute(sql, params, many, context)

    # the error stays an error (a bug to see), not a 409 blaming the client's key.
    with connection.execute_wrapper(refuse), pytest.raises(IntegrityError, match="CHECK"):
        submit(hand, users[0], move, idempotency_key="k")


def test_a_seat_may_change_its_preferences_only_so_often_in_a_hand(make_user) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=11)
    # Given a seat toggling auto_u as fast as it can,
    for i in range(6):
        submit(hand, users[1], {"type": "set_prefs", "auto_u": i % 2 == 1})
    # the seventh change in a minute is refused (429) and appends nothing.
    with pytest.raises(DomainError) as refused:
        submit(hand, users[1], {"type": "set_prefs", "auto_u": False})
    assert (type(refused.value), refused.value.code) == (domain.RateLimited, "throttled")
    assert HandEvent.objects.filter(hand=hand).count() == 7
    # The other seat is not affected.
    submit(hand, users[0], {"type": "set_prefs", "auto_u": False})


def test_a_view_read_before_a_move_commits_never_shows_the_move(make_user) -> None:
    # Given a hand row read at seq 0 (a poll), and a move committed right after it,
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=21)
    stale = Hand.objects.get(pk=hand.pk)
    legal = hand_view_for_user(hand=hand, user=users[0])["legal_moves"]
    submit(hand, users[0], legal[0])
    state_lru.clear()
    # the state served with that row is the state at its seq, not the log's newer end.
    assert hand_state(stale) == hand_replay(stale, upto=0)
    assert hand_state(stale).n_moves == 0
