"""The fault tests reuse the games tests' players and their fresh caches."""

from tests.games.conftest import _fresh_caches, make_player  # noqa: F401 (fixtures)
