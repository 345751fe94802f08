"""The client tests reuse the games tests' fresh caches (throttle counts, hand versions)."""

from tests.games.conftest import _fresh_caches  # noqa: F401 (fixture)
