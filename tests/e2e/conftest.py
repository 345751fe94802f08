"""End-to-end tests talk HTTP only, as a third-party client would."""

import pytest
from django.core.cache import cache

from games.hand_store import state_lru


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    """Throttle counts and hand versions live in the cache (Redis in CI); states in an LRU."""
    cache.clear()
    state_lru.clear()
