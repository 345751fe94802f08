"""The auditor's walk-through of docs/audit.md ("Verifying a hand and the ledger head, step by
step"), on its core path: export the hand over the API, run ``python -m games.rules.verify`` on
the file in a subprocess, hold its chain head to the view's ``head_hash`` and the settlement's
transaction to ``GET /api/v1/ledger/head``, then ``ledger_check`` and ``check_hands``."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from tests.games.test_games_export import capped_hand, export_url
from tests.games.test_games_hands_api import make_auditor

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def verify_file(path: Path) -> subprocess.CompletedProcess[str]:
    """``python -m games.rules.verify FILE`` as the guide runs it, from the repository's root."""
    return subprocess.run(
        [sys.executable, "-m", "games.rules.verify", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=60,
    )


def test_the_documented_audit_of_an_exported_hand_and_the_ledger_head(
    players, win_hand, make_player, tmp_path: Path
) -> None:
    auditor = make_auditor(make_player)
    # Given a settled hand whose settlement capped a payer (the last posting of the ledger),
    hand, seat, _ = capped_hand(players, win_hand)
    # 1. the auditor exports it (GET /api/v1/hands/{id}/export) to a file,
    r = auditor.client.get(export_url(hand.pk))
    assert r.status_code == 200
    doc: dict[str, Any] = r.json()
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    # 2. runs the verifier on it: exit 0, "verified" and the chain's head,
    run = verify_file(path)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "verified"
    head = lines[1].removeprefix("chain head ")
    # 3. which is the hand view's head_hash (the settled record is the last event),
    view = auditor.client.get(f"/api/v1/hands/{hand.pk}").json()
    assert head == view["head_hash"] == doc["chain"]["head"]
    assert doc["events"][-1]["type"] == "settled"
    # 4. the settlement's transaction is the ledger's head (nothing was booked after it),
    ledger_head = auditor.client.get("/api/v1/ledger/head").json()
    assert (ledger_head["tx_id"], ledger_head["hash"]) == (
        doc["ledger"]["id"],
        doc["ledger"]["hash"],
    )
    # and the capped payer's previous entry is in the chain before it,
    assert [c["seat"] for c in doc["caps"]] == [seat]
    assert doc["caps"][0]["entry"]["transaction"]["id"] < ledger_head["tx_id"]
    # 5. and on the server both checks pass.
    out = StringIO()
    call_command("ledger_check", stdout=out)
    assert out.getvalue().startswith("ledger ok")
    out = StringIO()
    call_command("check_hands", stdout=out)
    assert "every one is the replay of its log" in out.getvalue()
    # An edited export (the balance the cap used) fails the same command: exit 1, the reason.
    doc["caps"][0]["entry"]["balance_after"] += 1
    path.write_text(json.dumps(doc), encoding="utf-8")
    run = verify_file(path)
    assert run.returncode == 1
    assert run.stdout.startswith("discrepancy at seq ") and "cap used a balance" in run.stdout
