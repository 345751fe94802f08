"""Moved to :mod:`games.live.long_poll`."""

from games.live.long_poll import (  # noqa: F401
    LongPollApp,
    Pending,
    long_poll_deferrable,
    long_poll_pending,
)
