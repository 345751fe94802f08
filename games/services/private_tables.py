"""Writes on private tables: the invite code made at creation, and the check a join
makes under the table's lock (the code, then the blocks)."""

from __future__ import annotations

import secrets
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext_lazy as _

from core.errors import PermissionDenied
from games.models import INVITE_CODE_CHARS, INVITE_CODE_LENGTH, PrivateTable, Table
from games.services.blocks import seat_blocks_check


def invite_code_new() -> str:
    """8 characters of a 32-letter alphabet (40 bits): not guessable at the rate joins allow."""
    return "".join(secrets.choice(INVITE_CODE_CHARS) for _ in range(INVITE_CODE_LENGTH))


def private_table_make(*, table: Table) -> PrivateTable:
    """Make ``table`` private with a fresh invite code (a new code on the rare collision)."""
    for _attempt in range(5):
        try:
            with transaction.atomic():
                return PrivateTable.objects.create(table=table, invite_code=invite_code_new())
        except IntegrityError:
            continue
    raise RuntimeError("no free invite code after 5 tries")


def _code_matches(given: str | None, code: str) -> bool:
    return given is not None and secrets.compare_digest(given.strip().upper(), code)


def private_join_check(
    *, table: Table, user: Any, code: str | None, seated_ids: list[int], avoid_blocked: bool
) -> None:
    """Under the table's lock, before ``user`` sits. At a private table: 403
    ``invite_code_required`` without a code, ``invite_code_invalid`` with a wrong one (its owner
    needs none), then 403 ``player_blocked`` when ``user`` and its owner or a seated player have
    blocked one another. ``avoid_blocked`` (quick-join): that last check at any table."""
    row = PrivateTable.objects.filter(table=table).first()
    if row is not None and user.pk != table.owner_id:
        if code is None or not code.strip():
            raise PermissionDenied(
                _("This table is private: join it with its invite code."),
                code="invite_code_required",
            )
        if not _code_matches(code, row.invite_code):
            raise PermissionDenied(
                _("That invite code is not this table's."), code="invite_code_invalid"
            )
    if row is not None:
        seat_blocks_check(user=user, others={*seated_ids, table.owner_id})
    elif avoid_blocked:
        seat_blocks_check(user=user, others=set(seated_ids))
