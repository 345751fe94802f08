"""The calculator endpoints: presets and scoring a cước map under a ruleset."""

from __future__ import annotations

import pytest

from games.rules.ruleset import build_ruleset, list_presets
from games.rules.scoring import score

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"


def test_presets_are_listed_in_full(players) -> None:
    r = players[0].client.get("/api/v1/rules/presets")
    assert r.status_code == 200
    assert r.json() == list_presets()
    assert r.json()[0]["preset"] == "chan_van_van"


def test_score_follows_the_rules_core(players) -> None:
    body = {"ruleset": {"preset": "chan_van_van", "overrides": {}}, "cuoc": {"tam_do": 1, "leo": 2}}
    r = players[0].client.post("/api/v1/rules/score", body, format="json")
    assert r.status_code == 200, r.content
    expected = score(build_ruleset(body["ruleset"]), body["cuoc"]).to_dict()
    assert r.json() == expected
    assert set(r.json()) == {"base", "ga", "total"}
    assert r.json()["total"] == r.json()["base"] + r.json()["ga"]


def test_score_uses_the_overrides(players) -> None:
    spec = {"preset": "chan_van_van", "overrides": {"ga_points": 1}}
    body = {"ruleset": spec, "cuoc": {"tam_do": 1, "leo": 1}}
    r = players[0].client.post("/api/v1/rules/score", body, format="json")
    assert r.json() == score(build_ruleset(spec), body["cuoc"]).to_dict()


def test_score_without_a_ruleset_uses_the_default_preset(players) -> None:
    r = players[0].client.post("/api/v1/rules/score", {"cuoc": {"chi": 1}}, format="json")
    assert r.json() == score(build_ruleset({}), {"chi": 1}).to_dict()


def test_score_of_no_cuoc_is_an_empty_win_worth_nothing(players) -> None:
    # an empty map is a well-formed question (a win with no cước): 200 with zeros, not a 400
    r = players[0].client.post("/api/v1/rules/score", {"cuoc": {}}, format="json")
    assert r.status_code == 200, r.content
    assert r.json() == {"base": 0, "ga": 0, "total": 0}


def test_score_of_a_cuoc_the_ruleset_turns_off_is_zero(players) -> None:
    spec = {"preset": "chan_van_van", "overrides": {"cuoc": {"tam_do": "off"}}}
    r = players[0].client.post(
        "/api/v1/rules/score", {"ruleset": spec, "cuoc": {"tam_do": 1}}, format="json"
    )
    assert r.status_code == 200, r.content
    assert r.json() == {"base": 0, "ga": 0, "total": 0}


@pytest.mark.parametrize(
    ("body", "code", "key"),
    [
        ({"ruleset": {"preset": "nope"}, "cuoc": {}}, "invalid_ruleset", "ruleset.preset"),
        (
            {"ruleset": {"preset": "thapthanh", "overrides": {"cuoc": {"zzz": "on"}}}, "cuoc": {}},
            "invalid_ruleset",
            "ruleset.overrides.cuoc.zzz",
        ),
        ({"ruleset": {"pre": 1}, "cuoc": {}}, "invalid_ruleset", "ruleset.pre"),
        ({"cuoc": {"nope": 1}}, "invalid_cuoc", "cuoc.nope"),
        ({"cuoc": {"chi": -1}}, "invalid_cuoc", "cuoc.chi"),
        ({"cuoc": {"chi": "1"}}, "invalid_cuoc", "cuoc.chi"),
        ({"cuoc": {"tom": 9}}, "invalid_cuoc", "cuoc.tom"),
        ({"cuoc": ["chi"]}, "invalid_cuoc", "cuoc"),
        ({}, "invalid", "cuoc"),
        ({"cuoc": {}, "extra": 1}, "invalid", "extra"),
    ],
)
def test_a_bad_ruleset_or_cuoc_is_400_naming_the_key(players, body, code, key) -> None:
    r = players[0].client.post("/api/v1/rules/score", body, format="json")
    assert r.status_code == 400, r.content
    assert r["Content-Type"] == PROBLEM
    assert r.json()["code"] == code
    assert key in r.json()["errors"]


def test_the_calculator_needs_a_token(api_client) -> None:
    assert api_client.get("/api/v1/rules/presets").status_code == 401
