"""Reading private tables: who may see one (a table's own read shows its invite code:
``games.selectors.tables.table_summary``)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from core.errors import NotFound
from games.models import Seat, Table


def table_visible_check(*, table_id: int, user: Any) -> None:
    """A private table is 404 (``No such table``) to anyone but its owner, its seated players
    and staff: strangers learn nothing of it, not even that it exists. Its invitees join with
    the id and code they were given (``POST /tables/{id}/join``)."""
    private = Table.objects.filter(pk=table_id, private__isnull=False)
    if not private.exists():
        return
    if getattr(user, "is_staff", False):
        return
    if private.filter(owner_id=user.pk).exists():
        return
    if Seat.objects.filter(table_id=table_id, player_id=user.pk).exists():
        return
    raise NotFound(_("No such table."))
