"""Fixtures for the games tests: authenticated clients, seated tables and dealt hands."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from games.hand_store import hand_committed_forget, state_lru
from games.live.render import kept_views
from tests.db_owner import as_owner
from tests.games.decks import HOA_DECK, NAMED_TIE_DECK, WIN_DECK
from tests.rules.rules_builders import NAMED_TIE_MOVES


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    """Throttle counts and hand versions live in the cache (Redis in CI); states in an LRU,
    rendered views in another, the hands as this process committed them in a third."""
    cache.clear()
    state_lru.clear()
    hand_committed_forget()
    kept_views.clear()


# Modules that write hand rows by hand (constraint tests), not through the services.
_RAW_ROW_MODULES = {"test_games_models"}


@pytest.fixture(autouse=True)
def _every_hand_is_the_replay_of_its_log(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each database test: every hand's cached state equals the replay of its log."""
    yield
    if request.node.get_closest_marker("django_db") is None:
        return
    if "corrupts_cache" in request.fixturenames or request.module.__name__ in _RAW_ROW_MODULES:
        return
    from games.hand_store import hand_store_problems
    from games.models import Hand

    problems = {h.pk: hand_store_problems(h) for h in Hand.objects.all()}
    assert {pk: p for pk, p in problems.items() if p} == {}


@pytest.fixture
def no_spectators(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables refuse spectators (as if created with the option ``spectators`` off)."""
    monkeypatch.setattr("games.selectors.hands.hand_spectators_allowed", lambda table: False)


# The hand row's guards: its life (seq, status, the result written once), its deal's terms
# (games 0021, split by column in 0038) and its end with the event that ends it (games 0041).
HAND_GUARDS = ("games_hand_guard", "games_hand_terms_guard", "games_hand_end_guard")


@contextmanager
def hand_guard_off() -> Iterator[None]:
    """As the database owner, with the hand row's guards (games 0021, 0038, 0041) off for the enclosed
    statements: a test that fakes a state the services never produce."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE needs no pending checks
        for guard in HAND_GUARDS:
            as_owner(f"ALTER TABLE games_hand DISABLE TRIGGER {guard}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for guard in HAND_GUARDS:
                as_owner(f"ALTER TABLE games_hand ENABLE TRIGGER {guard}")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")


@pytest.fixture
def corrupts_cache() -> None:
    """Requested by tests that damage a cached state on purpose (exempts them from the check)."""


@dataclass
class Player:
    user: Any
    token: str
    client: APIClient

    @property
    def id(self) -> int:
        return self.user.pk


def client_with(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


@pytest.fixture
def make_player(make_user: Callable[..., tuple[Any, str]]) -> Callable[..., Player]:
    def factory(**fields: Any) -> Player:
        user, token = make_user(**fields)
        return Player(user, token, client_with(token))

    return factory


@pytest.fixture
def players(make_player: Callable[..., Player]) -> list[Player]:
    return [make_player() for _ in range(4)]


def start_table(
    players: list[Player], deck: list[str] | None = None, **options: Any
) -> dict[str, Any]:
    """A table created by players[0] with ``deck`` and dealer 0, the others joined in order,
    everyone ready. Returns ``{"table": id, "hand": id}``."""
    body: dict[str, Any] = {"name": "test", "stake": 10, **options}
    if deck is not None:
        body.update(deck=deck, dealer=0)
    r = players[0].client.post("/api/v1/tables", body, format="json")
    assert r.status_code == 201, r.content
    table_id = r.json()["id"]
    for p in players[1:]:
        r = p.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
        assert r.status_code == 200, r.content
    hand_id = None
    for p in players:
        r = p.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
        assert r.status_code == 200, r.content
        hand_id = r.json()["hand_id"] or hand_id
    assert hand_id is not None
    return {"table": table_id, "hand": hand_id}


@pytest.fixture
def start_hand(players: list[Player]) -> Callable[..., dict[str, Any]]:
    """Factory: :func:`start_table` for the four ``players``."""

    def start(deck: list[str] | None = None, **options: Any) -> dict[str, Any]:
        return start_table(players, deck, **options)

    return start


@pytest.fixture
def win_hand(start_hand: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    return start_hand(WIN_DECK)


@pytest.fixture
def hoa_hand(start_hand: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    return start_hand(HOA_DECK)


@pytest.fixture
def named_tie_hand(
    players: list[Player], start_hand: Callable[..., dict[str, Any]]
) -> Callable[[dict[str, int]], dict[str, Any]]:
    """Factory: the thapthanh hand whose winner (seat 1, chì bạch thủ on 8V) holds two named
    hands tied in điểm and dịch, cá lội sân đình and cá nhảy đầu thuyền, played through the API
    to its ù, then declared ``cuoc`` by its winner."""

    def play(cuoc: dict[str, int]) -> dict[str, Any]:
        hand = start_hand(NAMED_TIE_DECK, ruleset={"preset": "thapthanh"})
        url = f"/api/v1/hands/{hand['hand']}/moves"
        for seat, move in [*NAMED_TIE_MOVES, (1, {"type": "declare", "cuoc": cuoc})]:
            r = players[seat].client.post(url, move, format="json")
            assert r.status_code == 201, (move, r.content)
        return hand

    return play


@pytest.fixture
def production_memories(settings: Any) -> Iterator[None]:
    """As in production: tokens remembered for a few seconds, throttles counted in each process
    and exchanged with the cache every few seconds (the suite's defaults turn both off), the
    paths that answer without Django on (games.live.rearm, games.api.move_direct), and a CORS
    origin to answer."""
    from accounts.token_cache import token_cache_clear
    from chan_api import throttles

    settings.CHAN_TOKEN_CACHE_SECONDS = 60
    settings.THROTTLE_FLUSH_SECONDS = 60
    settings.LONG_POLL_REARM = True
    settings.MOVE_DIRECT = True
    settings.CORS_ALLOWED_ORIGINS = ["https://app.example"]
    token_cache_clear()
    throttles._budgets.clear()
    yield
    token_cache_clear()
    throttles._budgets.clear()


def answers_spied(monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> list[bool]:
    """Whether each call of the coroutine method ``owner.name`` answered (True: not None) or
    left the request to Django (False), in order: what a path that answers without Django did."""
    seen: list[bool] = []
    original = getattr(owner, name)

    async def spy(self: Any, *args: Any) -> Any:
        found = await original(self, *args)
        seen.append(found is not None)
        return found

    monkeypatch.setattr(owner, name, spy)
    return seen
