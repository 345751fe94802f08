"""Moved to :mod:`games.live.subscription` (and the publishing to :mod:`games.live.announce`)."""

from games.live.announce import feed_channel, hand_feed_publish  # noqa: F401
from games.live.subscription import HandFeed, Subscription, hand_feed  # noqa: F401
