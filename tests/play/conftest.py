"""The page tests: the web client's locked dependencies (clients/web: esbuild, TypeScript,
axe-core) installed once, and the games tests' fresh caches (throttle counts, hand versions).
Without node these tests skip, except in CI (``CI=1``, set by .ci/run)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.games.conftest import _fresh_caches  # noqa: F401 (fixture)

WEB = Path(__file__).resolve().parents[2] / "clients" / "web"


@pytest.fixture(scope="session")
def web_node() -> str:
    """node, with clients/web's locked dependencies installed (``npm ci`` once if missing)."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI") == "1":
            pytest.fail("node is missing in CI: .ci/run installs it (apt-get install nodejs npm)")
        pytest.skip("node is not installed")
    if not (WEB / "node_modules" / ".bin" / "esbuild").exists():
        npm = shutil.which("npm")
        done = npm and subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=WEB, capture_output=True, timeout=300
        )
        if not done or done.returncode:
            pytest.fail(
                "clients/web: `npm ci` failed (is the npm registry reachable?): "
                + (done.stderr.decode()[-500:] if done else "npm is missing")
            )
    return node
