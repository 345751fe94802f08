"""``chan-bot --help`` names the server it talks to by default and ``CHAN_URL``, which the README's
example sets from ``PORT`` so that it works with ``make run`` on any port."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bot_help(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("CHAN_URL", "PORT")}
    out = subprocess.run(
        [sys.executable, "-m", "chan_client", "--help"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return " ".join(out.stdout.split())  # argparse wraps its lines at the terminal's width


def test_help_names_the_default_url_and_chan_url() -> None:
    text = bot_help()
    assert "--url URL" in text
    assert "$CHAN_URL" in text
    assert "http://127.0.0.1:8000" in text


def test_chan_url_is_the_default_and_help_shows_it() -> None:
    text = bot_help(CHAN_URL="http://127.0.0.1:8123")
    assert "now http://127.0.0.1:8123" in text


def test_the_readme_examples_set_chan_url_from_port() -> None:
    # Both READMEs document CHAN_URL; the main one's `make run` example follows PORT.
    readme = (ROOT / "README.md").read_text()
    example = readme[readme.index("## A Python client and a bot") :]
    assert re.search(r"export CHAN_URL=http://127\.0\.0\.1:\$\{PORT:-8000\}", example)
    assert "CHAN_URL" in (ROOT / "clients/python/README.md").read_text()
