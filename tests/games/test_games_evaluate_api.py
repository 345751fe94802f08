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


def test_evaluate_no_win_on_a_discard_says_why(api_client, make_user) -> None:
    body = {"mat": MAT, "hand": HAND, "card": "2V", "source": "discard"}
    data = post(api_client, make_user, body).json()
    assert data["win"] is False and data["cuoc"] == {} and data["reason"]["code"]


@pytest.mark.parametrize(
    "body",
    [
        {"mat": MAT, "hand": HAND[:-1], "card": "2V", "source": "own_draw"},
        {"mat": MAT, "hand": HAND, "card": "ZZ", "source": "own_draw"},
        {"mat": MAT, "hand": HAND, "card": "2V", "source": "teleport"},
        {"mat": [["4V", "5V"]], "hand": HAND, "card": "2V", "source": "own_draw"},
        {"mat": MAT, "hand": ["CC"] * 5 + HAND[5:], "card": "2V", "source": "own_draw"},
    ],
)
def test_evaluate_malformed_input_is_a_400_naming_the_problem(api_client, make_user, body) -> None:
    r = post(api_client, make_user, body)
    assert r.status_code == 400
    assert r["Content-Type"].startswith("application/problem+json")
    assert r.json()["code"] and r.json()["detail"]
