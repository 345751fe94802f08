"""chan-bot at many tables from one process, driven by the player's feed: two players share
three tables and each plays them all at once, from one long poll of its feed at a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from chan_client import ChanClient
from chan_client.bot import FeedBot

from games.hand_store import hand_store_problems
from games.models import Hand

pytestmark = pytest.mark.django_db(transaction=True)
PASSWORD = "a-long-enough-Passw0rd!"
ROOT = Path(__file__).resolve().parents[2]


def player(base: str, name: str) -> ChanClient:
    client = ChanClient(base)
    client.login_or_register(name, PASSWORD)
    return client


def test_two_feed_bots_play_three_tables_each_at_once(live_server) -> None:
    a, b = player(live_server.url, "feed_a"), player(live_server.url, "feed_b")
    tables = [a.create_table(name=f"feed {n}", stake=10, max_seats=2)["id"] for n in range(3)]
    for table_id in tables:
        b.join(table_id)
    bots = [FeedBot(c, name, wait=5, timeout=240) for c, name in ((a, "feed_a"), (b, "feed_b"))]
    errors: list[BaseException] = []

    def run(bot: FeedBot) -> None:
        try:
            bot.play(tables, hands=2)
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(bot,)) for bot in bots]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert errors == [] and not any(t.is_alive() for t in threads)
    # Then both played two hands at each of the three tables, the same hands, to their end
    for bot in bots:
        assert sorted(bot.hands_by_table) == sorted(tables)
        assert all(len(hands) == 2 for hands in bot.hands_by_table.values())
    assert sorted(bots[0].result.hands) == sorted(bots[1].result.hands)
    hands = Hand.objects.filter(pk__in=bots[0].result.hands)
    assert hands.count() == 6 and {h.status for h in hands} == {"ended"}
    assert all(hand_store_problems(h) == [] for h in hands)
    assert bots[0].result.moves > 0 and bots[1].result.moves > 0
    # and its requests were feed long polls, one view per turn and the moves: no table polled
    assert a.stats.requests <= 3 * bots[0].result.moves + 30, a.stats


def test_chan_bot_plays_several_tables_from_one_process(live_server) -> None:
    env = {**os.environ, "CHAN_URL": live_server.url, "CHAN_BOT_PASSWORD": PASSWORD}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    opener = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "chan_client",
            "--username",
            "cli_a",
            "--create",
            "--tables",
            "2",
            "--max-seats",
            "2",
            "--stake",
            "10",
            "--wait",
            "5",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert opener.stdout is not None
    tables = [int(opener.stdout.readline().split()[1]) for _ in range(2)]
    joiner = subprocess.run(
        [
            sys.executable,
            "-m",
            "chan_client",
            "--username",
            "cli_b",
            "--wait",
            "5",
            *[arg for t in tables for arg in ("--table", str(t))],
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out, err = opener.communicate(timeout=300)
    assert opener.returncode == 0 and joiner.returncode == 0, (err, joiner.stderr)
    summaries = [
        json.loads(out.strip().splitlines()[-1]),
        json.loads(joiner.stdout.splitlines()[-1]),
    ]
    assert all(s["ok"] and len(s["hands"]) == 2 for s in summaries)
    assert sorted(summaries[0]["hands"]) == sorted(summaries[1]["hands"])
    assert {h.table_id for h in Hand.objects.filter(pk__in=summaries[0]["hands"])} == set(tables)
    # Each summary lists every table, its hands and their outcomes.
    for summary in summaries:
        assert [t["table_id"] for t in summary["tables"]] == tables
        for table in summary["tables"]:
            ended = Hand.objects.filter(table_id=table["table_id"]).values_list("pk", flat=True)
            assert table["hands"] == list(ended) and len(table["hands"]) == 1
            assert len(table["outcomes"]) == 1 and all(table["outcomes"])
        assert len(summary["outcomes"]) == 2 and all(summary["outcomes"])
