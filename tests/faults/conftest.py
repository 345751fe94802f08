"""The fault tests reuse the games tests' players and their fresh caches, and run their private
servers in directories of their own."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.games.conftest import _fresh_caches, make_player  # noqa: F401 (fixtures)


@pytest.fixture
def private_dir() -> Iterator[Path]:
    """A scratch directory that the embedded PostgreSQL (run as its own system user) can reach:
    pytest's own tmp directories are private to root (0700) and shared by concurrent runs."""
    path = Path(tempfile.mkdtemp(prefix="chan-fault-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
