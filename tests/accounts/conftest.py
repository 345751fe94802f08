import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _fresh_throttle_counts() -> None:
    """Throttle counters live in the cache (Redis in CI); each test starts from zero."""
    cache.clear()
