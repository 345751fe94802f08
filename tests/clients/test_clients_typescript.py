"""The TypeScript client (clients/typescript): its committed types are those of the schema as
served, it type-checks, and its bot plays a hand to its end against a live server, each player
from its own view. Without node these tests skip, except in CI (``CI=1``, set by .ci/run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

from games.models import Hand

TS = Path(__file__).resolve().parents[2] / "clients" / "typescript"
NODE = shutil.which("node")


@pytest.fixture(scope="module")
def node() -> str:
    """node, with the client's locked dependencies installed (``npm ci`` once if missing)."""
    if NODE is None:
        if os.environ.get("CI") == "1":
            pytest.fail("node is missing in CI: .ci/run installs it (apt-get install nodejs npm)")
        pytest.skip("node is not installed")
    if not (TS / "node_modules" / ".bin" / "tsc").exists():
        npm = shutil.which("npm")
        done = npm and subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=TS, capture_output=True, timeout=300
        )
        if not done or done.returncode:
            pytest.fail(
                "clients/typescript: `npm ci` failed (is the npm registry reachable?): "
                + (done.stderr.decode()[-500:] if done else "npm is missing")
            )
    return NODE


def run(node: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node, *args], cwd=TS, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_the_committed_types_are_those_of_the_schema(node, tmp_path) -> None:
    # Given the schema as the server serves it now,
    schema = tmp_path / "openapi.json"
    call_command("spectacular", format="openapi-json", file=str(schema))
    # then the committed copy is the same, and so are the types generated from it.
    stale = "stale: run `make ts-client` and commit clients/typescript"
    assert schema.read_text() == (TS / "openapi.json").read_text(), stale
    types = tmp_path / "schema.d.ts"
    generator = "node_modules/openapi-typescript/bin/cli.js"
    done = run(node, generator, str(schema), "--default-non-nullable", "false", "-o", str(types))
    assert done.returncode == 0, done.stderr
    assert types.read_text() == (TS / "src" / "schema.d.ts").read_text(), stale


def test_the_client_type_checks(node) -> None:
    done = run(node, "node_modules/typescript/bin/tsc", "--noEmit")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_hand_written_layer_passes_its_own_tests(node) -> None:
    # the SSE reader (chunks, heartbeats, resuming with Last-Event-ID), the retries, the bot's pick
    built = run(node, "node_modules/typescript/bin/tsc", "-p", "tsconfig.json")
    assert built.returncode == 0, built.stdout + built.stderr
    done = run(node, "--test", "dist/layer.test.js")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout


@pytest.mark.django_db(transaction=True)
def test_a_typescript_bot_plays_a_hand_to_its_end(node, live_server) -> None:
    # Given the client built,
    built = run(node, "node_modules/typescript/bin/tsc", "-p", "tsconfig.json")
    assert built.returncode == 0, built.stdout + built.stderr
    # when its bot signs up two players who sit, ready up and play from their own views,
    done = run(node, "dist/bot.js", "--base", live_server.url, "--prefix", "ts", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    # then the hand ended, as the server says too, after moves of both seats.
    assert summary["status"] == "ended"
    hand = Hand.objects.get(pk=summary["hand_id"])
    assert hand.status == Hand.Status.ENDED
    assert summary["outcome"] and summary["outcome"]["result"] in ("u", "u_lao", "hoa")
    assert summary["moves"] > 2
    assert set(hand.events.exclude(actor_seat=None).values_list("actor_seat", flat=True)) == {0, 1}
