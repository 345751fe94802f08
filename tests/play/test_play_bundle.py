"""The web client's bundle (play/static/play/play.js) is committed: it must be what its source
(clients/web/src and the TypeScript client it bundles) builds today, and the source type-checks."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.play.conftest import WEB

BUNDLE = WEB.parents[1] / "play" / "static" / "play" / "play.js"


def run(node: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node, *args], cwd=WEB, capture_output=True, text=True, timeout=180, check=False
    )


def test_the_committed_bundle_is_the_build_of_its_source(web_node, tmp_path: Path) -> None:
    built = tmp_path / "play.js"
    done = run(web_node, "build.mjs", str(built))
    assert done.returncode == 0, done.stdout + done.stderr
    stale = "play/static/play/play.js is stale: run `npm run build` in clients/web and commit it"
    assert built.read_text() == BUNDLE.read_text(), stale


def test_the_web_client_type_checks(web_node) -> None:
    done = run(web_node, "node_modules/typescript/bin/tsc", "--noEmit", "-p", ".")
    assert done.returncode == 0, done.stdout + done.stderr
