"""A move answered without the middleware and DRF (games/api/move_direct.py): the same answer,
header for header and body for body, the same log line and metrics, the same throttle
accounting as Django's; and Django answers whenever something it checks may have changed or
the move is refused."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
import pytest
from django.db import OperationalError

from accounts.token_cache import token_cache_clear, token_cache_forget
from games.api import move_direct
from tests.games.conftest import Player, answers_spied, start_table
from tests.games.decks import HOA_DECK, scripted_move
from tests.games.test_games_long_poll import _http
from tests.games.test_games_long_poll_rearm import VARIANTS, _counted, _unstamped

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("production_memories"),
]

# Made per request: the date, the request's id (a new one unless the client sent one) and the
# throttle's count.
_PER_REQUEST = {"date", "x-request-id", "ratelimit-remaining", "ratelimit-reset"}
# What differs between two twin hands (same deck, same players, same moves): their ids, their
# seeds and what is chained to them, and the times of their events.
_TWIN_KEYS = {
    "hand_id",
    "table_id",
    "id",
    "hash",
    "prev_hash",
    "seed_hash",
    "next_seed_hash",
    "created_at",
    "deadline",
    "turn_deadline",
    "now",
    "server_time",
}
_TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each move that had a template was answered here (True) or by Django (False)."""
    return answers_spied(monkeypatch, move_direct.MoveDirectApp, "_answer")


def _heads(r: httpx.Response) -> dict[str, str]:
    """The headers but for those of the request; the body's length as the body's own (twin
    hands' bodies differ in their ids and times, whose digits may differ in number)."""
    assert int(r.headers["content-length"]) == len(r.content)
    return {k: v for k, v in r.headers.items() if k not in _PER_REQUEST | {"content-length"}}


def _twin_part(value: Any) -> Any:
    """``value`` without what differs between twin hands."""
    if isinstance(value, dict):
        return {k: _twin_part(v) for k, v in value.items() if k not in _TWIN_KEYS}
    if isinstance(value, list):
        return [_twin_part(v) for v in value]
    if isinstance(value, str) and _TIME_RE.match(value):
        return re.sub(r"[0-9]", "0", value)  # a time: its shape (its zone) kept
    return value


def _mover(clients: dict[int, httpx.Client], hand_id: int) -> tuple[int, dict[str, Any]]:
    """The id of the player who may move, and its view."""
    for player, client in clients.items():
        view = client.get(f"/api/v1/hands/{hand_id}").json()
        if view["legal_moves"]:
            return player, view
    raise AssertionError("nobody may move")


def _play(
    clients: dict[int, httpx.Client], hand_id: int, **headers: str
) -> tuple[int, dict[str, Any], httpx.Response]:
    """The scripted move of whoever may move, with ``expected_seq`` and a fresh key."""
    player, view = _mover(clients, hand_id)
    move = {**scripted_move(view["legal_moves"]), "expected_seq": view["seq"]}
    answer = clients[player].post(
        f"/api/v1/hands/{hand_id}/moves",
        json=move,
        headers={"Idempotency-Key": uuid.uuid4().hex, **headers},
    )
    return player, move, answer


def _templates_made(clients: dict[int, httpx.Client], players: list[Player], **headers: str):
    """Every player's first move, on a hand of its own, through Django: the templates."""
    hand_id = start_table(players, HOA_DECK)["hand"]
    movers: set[int] = set()
    while len(movers) < len(players):
        player, _, answer = _play(clients, hand_id, **headers)
        assert answer.status_code == 201, answer.content
        movers.add(player)


def _primed(
    server: Any, players: list[Player], answered: list[bool]
) -> tuple[dict[int, httpx.Client], int]:
    """The players' clients, every player's template made, and a new hand of the HOA deck."""
    clients = {p.id: _http(server, p) for p in players}
    _templates_made(clients, players)
    hand_id = start_table(players, HOA_DECK)["hand"]
    answered.clear()
    return clients, hand_id


@pytest.mark.parametrize("headers", VARIANTS.values(), ids=VARIANTS.keys())
def test_a_move_answered_here_is_djangos_answer_on_a_twin_hand(
    asgi_live_server: Any,
    players: list[Player],
    settings: Any,
    answered: list[bool],
    headers: dict[str, str],
) -> None:
    # Given each player's first move answered by Django (the templates),
    clients = {p.id: _http(asgi_live_server, p) for p in players}
    _templates_made(clients, players, **headers)
    # and twin hands: the same deck, the same dealer, the same players
    django_hand = start_table(players, HOA_DECK)["hand"]
    here_hand = start_table(players, HOA_DECK)["hand"]
    answered.clear()
    # when the same moves are made on both, by Django on one and here on the other,
    for _ in range(8):
        settings.MOVE_DIRECT = False
        by_django = _play(clients, django_hand, **headers)
        settings.MOVE_DIRECT = True
        here = _play(clients, here_hand, **headers)
        # then the answers are the same, header for header and body for body, but for what
        # each request or each hand makes anew.
        assert here[0] == by_django[0] and here[1] == by_django[1]
        assert here[2].status_code == by_django[2].status_code == 201
        assert _heads(here[2]) == _heads(by_django[2])
        assert _twin_part(here[2].json()) == _twin_part(by_django[2].json())
        if "X-Request-ID" in headers:
            assert here[2].headers["x-request-id"] == headers["X-Request-ID"]
    assert answered == [True] * 8
    # And the hand made here is the replay of its log, as every hand of the suite must be
    # (tests/games/conftest.py checks it at the end).


def test_a_refused_move_is_djangos_problem_and_appends_nothing(
    asgi_live_server: Any, players: list[Player], answered: list[bool]
) -> None:
    clients, hand_id = _primed(asgi_live_server, players, answered)
    player, view = _mover(clients, hand_id)
    move = scripted_move(view["legal_moves"])
    # When a move comes with a stale expected_seq, or is not one the rules allow,
    stale = clients[player].post(
        f"/api/v1/hands/{hand_id}/moves", json={**move, "expected_seq": view["seq"] + 1}
    )
    illegal = clients[player].post(
        f"/api/v1/hands/{hand_id}/moves", json={"type": "discard", "card": "ZZ"}
    )
    # then Django answers both with its problem, and the hand has not moved.
    assert answered == [False, False]
    assert stale.status_code == 409 and stale.json()["code"] == "stale_seq"
    assert illegal.status_code in (400, 422)
    assert illegal.headers["content-type"] == "application/problem+json"
    assert clients[player].get(f"/api/v1/hands/{hand_id}").json()["seq"] == view["seq"]


def test_a_retry_with_the_same_key_is_replayed_here(
    asgi_live_server: Any, players: list[Player], answered: list[bool]
) -> None:
    clients, hand_id = _primed(asgi_live_server, players, answered)
    player, view = _mover(clients, hand_id)
    move = {**scripted_move(view["legal_moves"]), "expected_seq": view["seq"]}
    key = {"Idempotency-Key": "retry-0001"}
    url = f"/api/v1/hands/{hand_id}/moves"
    first = clients[player].post(url, json=move, headers=key)
    again = clients[player].post(url, json=move, headers=key)
    assert answered == [True, True]
    assert first.status_code == again.status_code == 201
    assert "idempotent-replayed" not in first.headers
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()
    assert clients[player].get(url.removesuffix("/moves")).json()["seq"] == view["seq"] + 1


def test_django_answers_other_headers_an_odd_body_and_a_revoked_token(
    asgi_live_server: Any, players: list[Player], answered: list[bool]
) -> None:
    from accounts.models import ApiToken

    clients, hand_id = _primed(asgi_live_server, players, answered)
    url = f"/api/v1/hands/{hand_id}/moves"
    # Headers Django did not see (a new template is made from Django's answer),
    _, _, r = _play(clients, hand_id, **{"Accept-Language": "vi"})
    assert r.status_code == 201 and answered == []
    # a body that is not JSON, an Accept with parameters (DRF indents),
    player, view = _mover(clients, hand_id)
    bad = clients[player].post(url, content=b"{", headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and answered == [False]
    indented = clients[player].post(
        url,
        json={**scripted_move(view["legal_moves"]), "expected_seq": view["seq"]},
        headers={"Accept": "application/json; indent=2"},
    )
    assert indented.status_code == 201 and b'\n  "' in indented.content
    assert answered == [False]  # (no template for that Accept: Django's, and none made)
    # and a token revoked in this process: refused at once, by Django.
    player, view = _mover(clients, hand_id)
    ApiToken.objects.filter(user_id=player).delete()
    token_cache_forget(user_id=player)
    gone = clients[player].post(
        url, json={**scripted_move(view["legal_moves"]), "expected_seq": view["seq"]}
    )
    assert gone.status_code == 401
    assert answered == [False, False]


def _twin_line(line: dict[str, Any]) -> dict[str, Any]:
    return {**line, "hand_id": 0, "path": re.sub(r"/hands/[0-9]+", "/hands/0", line["path"])}


def test_a_move_answered_here_logs_and_counts_as_djangos(
    asgi_live_server: Any, players: list[Player], settings: Any, answered: list[bool], caplog: Any
) -> None:
    clients, django_hand = _primed(asgi_live_server, players, answered)
    here_hand = start_table(players, HOA_DECK)["hand"]  # (its twin)
    settings.MOVE_DIRECT = False
    django_delta, django_lines, _ = _counted(caplog, lambda: _play(clients, django_hand))
    settings.MOVE_DIRECT = True
    here_delta, here_lines, _ = _counted(caplog, lambda: _play(clients, here_hand))
    assert answered == [True]
    assert here_delta == django_delta
    assert django_delta  # (it counted something)
    assert [_twin_line(line) for line in _unstamped(here_lines)] == [
        _twin_line(line) for line in _unstamped(django_lines)
    ]
    assert here_lines[-1]["hand_id"] == here_hand and here_lines[-1]["method"] == "POST"


def test_a_move_answered_here_is_counted_by_the_throttle_as_djangos(
    asgi_live_server: Any, players: list[Player], settings: Any, answered: list[bool]
) -> None:
    clients, hand_id = _primed(asgi_live_server, players, answered)
    remaining: dict[int, list[int]] = {}
    for n in range(8):
        settings.MOVE_DIRECT = n % 2 == 0
        player, _, r = _play(clients, hand_id)
        assert r.status_code == 201
        remaining.setdefault(player, []).append(int(r.headers["ratelimit-remaining"]))
    assert answered == [True, True, True, True]
    # Each player's budget falls by its requests (its reads of the view and its moves), here
    # and through Django alike: never the same remaining twice, never a rise.
    for counts in remaining.values():
        assert counts == sorted(counts, reverse=True) and len(set(counts)) == len(counts)


FAILURES = {
    "a bug": RuntimeError("boom"),
    "the database away": OperationalError("the server closed the connection"),
}


@pytest.mark.parametrize("failure", FAILURES.values(), ids=FAILURES.keys())
def test_a_move_that_fails_is_answered_as_django_answers_it_and_not_made_again(
    asgi_live_server: Any,
    players: list[Player],
    settings: Any,
    answered: list[bool],
    monkeypatch: pytest.MonkeyPatch,
    failure: Exception,
    caplog: Any,
) -> None:
    import games.services.hands as hands

    clients, django_hand = _primed(asgi_live_server, players, answered)
    here_hand = start_table(players, HOA_DECK)["hand"]  # (its twin)
    calls: list[int] = []

    def failing(**kwargs: Any) -> None:
        calls.append(kwargs["hand"].pk)
        raise failure

    # When the move's service fails otherwise than by refusing the move (a bug, a database
    # that stopped answering), through Django and here,
    monkeypatch.setattr(hands, "idempotency_record", failing)
    settings.MOVE_DIRECT = False
    django_delta, _, (_, _, by_django) = _counted(caplog, lambda: _play(clients, django_hand))
    settings.MOVE_DIRECT = True
    here_delta, here_lines, (_, _, here) = _counted(caplog, lambda: _play(clients, here_hand))
    # then the answer here is Django's (its problem, its status, its Retry-After), it is counted
    # and logged as Django counts and logs it, and the move was tried once, not again through
    # Django: it may have been committed before the failure.
    assert answered == [True]
    assert calls == [django_hand, here_hand]
    assert here.status_code == by_django.status_code in (500, 503)
    assert here.headers["content-type"] == by_django.headers["content-type"]
    assert here.headers.get("retry-after") == by_django.headers.get("retry-after")
    body = {k: v for k, v in here.json().items() if k != "request_id"}
    assert body == {k: v for k, v in by_django.json().items() if k != "request_id"}
    assert here.json()["request_id"] == here.headers["x-request-id"]
    # (the bodies' sizes summed over the window include the views read to find the mover,
    # whose ids differ in digits between the twin hands, 9 and 10 say: the answers' own sizes
    # are compared instead)
    bodies = ("django_http_responses_body_total_bytes_sum", ())
    here_delta.pop(bodies), django_delta.pop(bodies)
    assert len(here.content) == len(by_django.content)
    assert here_delta == django_delta
    assert here_lines[-1]["status"] == here.status_code
    # (the failure rolled the move back: neither hand moved)
    for hand_id in (django_hand, here_hand):
        assert next(iter(clients.values())).get(f"/api/v1/hands/{hand_id}").json()["seq"] == 0


def test_the_token_read_again_keeps_the_template_unless_its_scopes_changed(
    asgi_live_server: Any, players: list[Player], answered: list[bool]
) -> None:
    from accounts.models import ApiToken

    clients, hand_id = _primed(asgi_live_server, players, answered)
    # When the token memory forgets the tokens (its seconds ran out), the next move is still
    # answered here, the token read again from the database as DRF reads it;
    token_cache_clear()
    _, _, r = _play(clients, hand_id)
    assert r.status_code == 201 and answered == [True]
    # when a token's scopes change, Django judges that player's next move.
    player, _ = _mover(clients, hand_id)
    ApiToken.objects.filter(user_id=player).update(scopes=["read"])
    token_cache_clear()
    _, _, r = _play(clients, hand_id)
    assert answered == [True, False]
    assert r.status_code == 403 and r.json()["code"] == "missing_scope"
