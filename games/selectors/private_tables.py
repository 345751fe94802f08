"""Reading private tables: who may see one, and its invite code."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from core.errors import NotFound
from games.models import PrivateTable, Seat, Table


def private_code_for(*, table_id: int, user: Any) -> str | None:
    """The table's invite code for its owner and its seated players; None for anyone else or
    at a table that is not private."""
    row = PrivateTable.objects.filter(table_id=table_id).select_related("table").first()
    if row is None or user is None or not getattr(user, "is_authenticated", False):
        return None
    if (
        row.table.owner_id == user.pk
        or Seat.objects.filter(table_id=table_id, player=user).exists()
    ):
        return row.invite_code
    return None


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
