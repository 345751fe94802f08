"""Writes on blocks: a player blocks another, or lifts it (``PUT/DELETE /me/blocks/{username}``),
and the checks the table and challenge services make against blocks under their locks."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext_lazy as _

from core.errors import InvalidInput, PermissionDenied
from games.models import Block
from games.selectors.blocks import blocked_pair_exists
from games.selectors.players import player_by_username


@transaction.atomic
def block_put(*, user: Any, username: str) -> tuple[Block, bool]:
    """Block the player ``username`` (idempotent): returns the block and whether it is new.
    404 for an unknown player, 400 ``cannot_block_self``."""
    other = player_by_username(username)
    if other.pk == user.pk:
        raise InvalidInput(_("You cannot block yourself."), code="cannot_block_self")
    block, created = Block.objects.get_or_create(blocker=user, blocked=other)
    return block, created


@transaction.atomic
def block_delete(*, user: Any, username: str) -> bool:
    """Lift a block (idempotent): whether there was one. 404 for an unknown player."""
    other = player_by_username(username)
    deleted, _rows = Block.objects.filter(blocker=user, blocked=other).delete()
    return deleted > 0


def _player_blocked() -> PermissionDenied:
    return PermissionDenied(
        _("You cannot sit at this table: a player there and you have blocked one another."),
        code="player_blocked",
    )


def seat_blocks_check(*, user: Any, others: set[int]) -> None:
    """Under the table's lock, before ``user`` sits: 403 ``player_blocked`` when ``user`` and
    one of ``others`` (the seated players, a private table's owner) have blocked one another,
    either way."""
    others = others - {user.pk}
    if others and blocked_pair_exists(user_id=user.pk, others=others):
        raise _player_blocked()
