"""What accounts announce to the apps that stand on it (accounts imports none of them)."""

from __future__ import annotations

from django.dispatch import Signal

# Sent with ``user_id`` once a ban has committed (``accounts.services.user_ban``): the games
# stand the player up at its tables (games/apps.py connects ``games.services.tables``).
player_banned = Signal()

# Sent with ``user_id`` once a cool-off or self-exclusion has committed (``accounts.limits``):
# the games free the player's seats after the hand in play (games/apps.py connects
# ``games.services.table_limits``).
player_excluded = Signal()
