"""POST /api/v1/rules/evaluate: the calculator over HTTP."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

# 5 chắn + 4 cạ + a lone 2V, with two chắn on the mat.
MAT = [["4V", "4V"], ["5V", "5V"]]
HAND = ["CC", "CC", "6N", "6N", "9N", "9N", "3N", "3S", "7N", "7S", "8N", "8V", "6V", "6S", "2V"]


def post(api_client, make_user, body):
    _, token = make_user()
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api_client.post("/api/v1/rules/evaluate", body, format="json")


def test_evaluate_hoa_roi_cua_phat_replaces_chi_and_bach_thu(api_client, make_user) -> None:
    body = {
        "ruleset": {"preset": "chan_van_van", "overrides": {}},
        "mat": MAT,
        "hand": HAND,
        "card": "2V",
        "source": "own_draw",
    }
    r = post(api_client, make_user, body)
    assert r.status_code == 200, r.content
    data = r.json()
    assert data["win"] is True and data["bach_thu"] is True
    # an eaten chắn 5V + chì bạch thủ on 2V is Hoa rơi cửa phật, which replaces chì and bạch thủ
    assert data["cuoc"]["hoa_roi_cua_phat"] == 1
    assert "chi" not in data["cuoc"] and "bach_thu" not in data["cuoc"]
    assert data["waiting"] == ["2V"]
    assert data["total"] == data["base"] + data["ga"] > 0


def test_evaluate_tied_named_hands_lists_the_equally_right_reading(api_client, make_user) -> None:
    # thapthanh: eaten chắn 5V and 5S + chì bạch thủ on 8V is cá lội sân đình and, as right,
    # cá nhảy đầu thuyền (24/21 each)
    body = {
        "ruleset": {"preset": "thapthanh"},
        "mat": [["5V", "5V"], ["5S", "5S"]],
        "hand": [
            "4V",
            "4V",
            "4S",
            "4S",
            "9S",
            "9S",
            "7V",
            "7S",
            "3N",
            "3S",
            "2N",
            "2S",
            "6V",
            "6S",
            "8V",
        ],
        "card": "8V",
        "source": "own_draw",
    }
    r = post(api_client, make_user, body)
    assert r.status_code == 200, r.content
    data = r.json()
    assert data["cuoc"] == {"ca_loi_san_dinh": 1}
    assert data["equally_right"] == [{"ca_nhay_dau_thuyen": 1}]
    assert data["total"] == 29


def test_evaluate_no_win_on_a_discard_says_why(api_client, make_user) -> None:
    body = {"mat": MAT, "hand": HAND, "card": "2V", "source": "discard"}
    data = post(api_client, make_user, body).json()
    assert data["win"] is False and data["cuoc"] == {} and data["reason"]["code"]


@pytest.mark.parametrize(
    ("body", "code", "fields"),
    [
        (
            {"mat": MAT, "hand": HAND[:-1], "card": "2V", "source": "own_draw"},
            "wrong_card_count",
            {"hand", "mat"},
        ),
        ({"mat": MAT, "hand": HAND, "card": "ZZ", "source": "own_draw"}, "unknown_card", {"card"}),
        (
            {"mat": MAT, "hand": HAND[:-1] + ["1V"], "card": "2V", "source": "own_draw"},
            "unknown_card",
            {"hand"},
        ),
        ({"mat": MAT, "hand": "2V", "card": "2V", "source": "own_draw"}, "invalid_cards", {"hand"}),
        (
            {"mat": MAT, "hand": HAND, "card": "2V", "source": "teleport"},
            "unknown_source",
            {"source"},
        ),
        ({"mat": MAT, "hand": HAND, "card": "2V", "source": 7}, "unknown_source", {"source"}),
        (
            {"mat": [["4V", "5V"]], "hand": HAND, "card": "2V", "source": "own_draw"},
            "invalid_mat_group",
            {"mat"},
        ),
        ({"mat": "4V", "hand": HAND, "card": "2V", "source": "own_draw"}, "invalid_mat", {"mat"}),
        (
            {"mat": MAT, "hand": ["CC"] * 5 + HAND[5:], "card": "2V", "source": "own_draw"},
            "too_many_copies",
            {"hand", "mat", "card"},
        ),
        ({"mat": MAT, "hand": HAND, "card": None, "source": "own_draw"}, "missing_card", {"card"}),
        ({"mat": [], "hand": HAND, "card": "2V", "source": "dealt"}, "unexpected_card", {"card"}),
        (
            {"mat": MAT, "hand": HAND, "card": "2V", "source": "chiu"},
            "chiu_needs_three",
            {"source"},
        ),
        (
            {
                "mat": MAT,
                "hand": HAND,
                "card": "2V",
                "source": "own_draw",
                "context": {"dealt_hand": ["2V"]},
            },
            "invalid_context",
            {"context.dealt_hand"},
        ),
        (
            {"mat": MAT, "hand": HAND, "card": "2V", "source": "own_draw", "context": {"x": 1}},
            "invalid_context",
            {"context.x"},
        ),
        (
            {"mat": MAT, "hand": HAND, "card": "2V", "source": "own_draw", "context": {"nhai": -2}},
            "invalid_context",
            {"context.nhai"},
        ),
        (
            {"ruleset": {"preset": "zz"}, "hand": HAND, "card": "2V", "source": "own_draw"},
            "invalid_ruleset",
            {"ruleset.preset"},
        ),
        ({"hand": HAND, "source": "own_draw"}, "invalid", {"card"}),
        ({"mat": MAT, "hand": HAND, "card": "2V", "source": "own_draw", "x": 1}, "invalid", {"x"}),
    ],
)
def test_evaluate_malformed_input_is_a_400_naming_the_field(
    api_client, make_user, body, code, fields
) -> None:
    r = post(api_client, make_user, body)
    assert r.status_code == 400, r.content
    assert r["Content-Type"].startswith("application/problem+json")
    problem = r.json()
    assert problem["code"] == code and problem["detail"]
    assert set(problem["errors"]) == fields
    assert all(isinstance(m, str) for messages in problem["errors"].values() for m in messages)


@pytest.mark.parametrize("nhai", [0, 2, True])
def test_evaluate_accepts_nhai_and_it_changes_nothing(api_client, make_user, nhai) -> None:
    body = {"mat": MAT, "hand": HAND, "card": "2V", "source": "own_draw"}
    plain = post(api_client, make_user, body).json()
    r = post(api_client, make_user, {**body, "context": {"nhai": nhai}})
    assert r.status_code == 200, r.content
    assert r.json() == plain and plain["win"] is True


def test_evaluate_thien_u_takes_a_null_card(api_client, make_user) -> None:
    # the dealer's 20: 10 chắn, a Thiên ù
    hand = ["2V", "2V", "3V", "3V", "4V", "4V", "5V", "5V", "6V", "6V"]
    hand += ["7V", "7V", "8V", "8V", "9V", "9V", "2N", "2N", "3N", "3N"]
    r = post(api_client, make_user, {"hand": hand, "card": None, "source": "dealt"})
    assert r.status_code == 200, r.content
    assert r.json()["win"] is True and r.json()["waiting"] == []
