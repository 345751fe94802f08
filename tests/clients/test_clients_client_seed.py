"""The Python client's ready sends a fresh seed of its own for the fair deal by default."""

from __future__ import annotations

import json
from typing import Any

import httpx
from chan_client import ChanClient


def client_seeing(sent: list[Any]) -> ChanClient:
    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json={"table": {"id": 7}, "hand_id": None})

    return ChanClient("http://test", token="t", transport=httpx.MockTransport(answer))


def test_ready_sends_a_random_seed_by_default_and_keeps_it() -> None:
    sent: list[Any] = []
    client = client_seeing(sent)
    client.ready(7)
    client.ready(7)
    first, second = sent[0]["client_seed"], sent[1]["client_seed"]
    assert len(first) == 64 and int(first, 16) >= 0 and first != second
    assert sent[1]["ready"] is True and client.client_seeds[7] == second


def test_ready_sends_the_seed_given_or_none_when_not_ready() -> None:
    sent: list[Any] = []
    client = client_seeing(sent)
    client.ready(7, client_seed="mine")
    client.ready(7, client_seed="")
    client.ready(7, ready=False)
    assert sent == [
        {"ready": True, "client_seed": "mine"},
        {"ready": True, "client_seed": ""},
        {"ready": False},
    ]
    assert client.client_seeds[7] == ""
