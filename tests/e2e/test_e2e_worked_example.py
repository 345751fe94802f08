"""The worked example of docs/api.md runs: docs/examples/first_hand.sh (curl and jq) signs up two
players and plays a hand to its settlement against the real app, and the docs show that script."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "examples" / "first_hand.sh"

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def settler() -> Iterator[None]:
    """What the Celery worker does after a hand ends, in a thread: book its settlement."""
    from games.services.quan_booking import hand_settle, hands_unsettled

    stop = threading.Event()

    def run() -> None:
        try:
            while not stop.wait(0.1):
                for hand_id in hands_unsettled():
                    hand_settle(hand_id=hand_id)
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(10)


def test_the_docs_show_the_script_they_test() -> None:
    api_md = (ROOT / "docs" / "api.md").read_text()
    assert "docs/examples/first_hand.sh" in api_md
    # the docs quote the script's steps as it is (not a copy that can drift)
    for line in SCRIPT.read_text().splitlines():
        if line.startswith("# ") and line[2:3].isdigit():
            assert line in api_md, line


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="needs curl and jq")
def test_the_curl_example_plays_a_hand_to_its_settlement(live_server, settler) -> None:
    run = subprocess.run(
        ["bash", str(SCRIPT)],
        env={**os.environ, "CHAN_URL": live_server.url, "SUFFIX": "doc"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.strip().splitlines()
    assert lines[0].startswith("table ") and ", hand " in lines[0]
    assert '"status":"ended"' in lines[1]
    assert lines[2] == '{"settled":true}', lines
    # The deal is the fair shuffle's (random): about one such hand in twelve ends in hòa, a
    # draw whose settlement moves no Quan, so the newest ledger line is still the welcome grant.
    draw = '"result":"hoa"' in lines[1]
    assert f'"kind":"{"welcome_grant" if draw else "hand_settlement"}"' in lines[3], lines


def test_the_python_example_plays_a_hand_to_its_settlement(live_server, settler) -> None:
    api_md = (ROOT / "docs" / "api.md").read_text()
    section = api_md.split("## A worked example", 1)[1].split("### Python", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'os.environ.get("CHAN_URL", "http://127.0.0.1:8000")' in code
    printed: list[tuple] = []
    namespace = {"print": lambda *args: printed.append(args)}
    exec(code.replace("http://127.0.0.1:8000", live_server.url), namespace)  # noqa: S102
    result, seats = printed[0]
    assert result in ("u", "u_lao", "hoa") and seats
    (kind,) = printed[1]
    draw = result == "hoa"  # a draw moves no Quan (the deal is random)
    assert kind == ("welcome_grant" if draw else "hand_settlement")
