"""Reading blocks: my list, and whether two players (or a player and a set) have blocked one
another."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Q, QuerySet

from games.models import Block

BLOCK_LIST_MAX = 500


def block_list(*, user: Any) -> list[Block]:
    """The players ``user`` blocks, newest first (at most 500)."""
    rows = Block.objects.filter(blocker=user).select_related("blocked")
    return list(rows.order_by("-created_at", "-id")[:BLOCK_LIST_MAX])


def blocked_pair_exists(*, user_id: int, others: Iterable[int]) -> bool:
    """Whether ``user_id`` and any of ``others`` have blocked one another (either way)."""
    others = list(others)
    return Block.objects.filter(
        Q(blocker_id=user_id, blocked_id__in=others) | Q(blocked_id=user_id, blocker_id__in=others)
    ).exists()


def blocked_with(user_id: int) -> QuerySet[Block]:
    """Ids of the players ``user_id`` blocks or is blocked by (a subquery-ready values list)."""
    return Block.objects.filter(Q(blocker_id=user_id) | Q(blocked_id=user_id))


def blocked_ids_with(user_id: int) -> set[int]:
    """The players ``user_id`` blocks or is blocked by."""
    rows = blocked_with(user_id).values_list("blocker_id", "blocked_id")
    return {b if a == user_id else a for a, b in rows}


def blocked_pairs_among(user_ids: Iterable[int]) -> set[frozenset[int]]:
    """The pairs of ``user_ids`` where one blocked the other (either way), as frozensets."""
    ids = list(user_ids)
    rows = Block.objects.filter(blocker_id__in=ids, blocked_id__in=ids)
    return {frozenset(pair) for pair in rows.values_list("blocker_id", "blocked_id")}
