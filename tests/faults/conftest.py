"""The fault tests reuse the games tests' players and their fresh caches, and run their private
servers in directories of their own (``private_dir``, tests/conftest.py)."""

from __future__ import annotations

from tests.games.conftest import _fresh_caches, make_player  # noqa: F401 (fixtures)
