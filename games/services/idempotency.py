"""Idempotent move requests: a repeated ``(user, Idempotency-Key)`` gets the first response."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from psycopg.types.json import Jsonb

from core.errors import Conflict, InvalidInput
from games.models import Hand, IdempotencyRecord


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """A response as first given (``replayed`` when it is served again from its key)."""

    status: int
    body: dict[str, Any]
    replayed: bool = False


_KEY_RE = re.compile(r"[\x21-\x7e]{1,128}")


def idempotency_key_check(key: str | None) -> None:
    """A key is 1 to 128 visible ASCII characters (``invalid_idempotency_key`` otherwise)."""
    if key is not None and not _KEY_RE.fullmatch(key):
        raise InvalidInput(
            _("Idempotency-Key must be 1 to 128 visible ASCII characters."),
            code="invalid_idempotency_key",
        )


def _key_reused() -> Conflict:
    return Conflict(
        _("This Idempotency-Key was already used for a different request."),
        code="idempotency_key_reused",
    )


def idempotency_replay(*, user: Any, key: str | None, request_hash: str) -> StoredResponse | None:
    """The stored response of an earlier request with this key, or None; a different request
    under the same key is refused (``idempotency_key_reused``). Call it holding the lock that
    serialises the requests it guards (the hand row), so a retry racing its original waits
    for it and then finds its record."""
    if key is None:
        return None
    # A fixed statement on the unique (user, key): the ORM compiled the same query on every
    # move (4 % of a web worker's time under bench/load_bench.py; docs/decisions.md).
    with connection.cursor() as cursor:
        cursor.execute(_REPLAY_SQL, [user.pk, key])
        row = cursor.fetchone()
    if row is None:
        return None
    stored_hash, status, body = row
    if stored_hash != request_hash:
        raise _key_reused()
    body = _BODY_FIELD.from_db_value(body, None, connection)
    return StoredResponse(status, body, replayed=True)


_REPLAY_SQL = (
    f"SELECT request_hash, response_status, response_body FROM {IdempotencyRecord._meta.db_table} "
    "WHERE user_id = %s AND key = %s"
)
_BODY_FIELD = IdempotencyRecord._meta.get_field("response_body")


def idempotency_record(
    *, user: Any, key: str | None, hand: Hand, request_hash: str, response: StoredResponse
) -> None:
    """Keep the response under its key (one ``INSERT … ON CONFLICT DO NOTHING``: the transaction
    stays usable without a savepoint's two round trips). The same
    key sent at the same time to another hand (whose lock we do not hold) may have been stored
    first: then it is refused and the caller's transaction rolls back with the exception."""
    if key is None:
        return
    table = IdempotencyRecord._meta.db_table
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (user_id, key, hand_id, request_hash, response_status, "
            "response_body, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (user_id, key) DO NOTHING RETURNING id",
            [
                user.pk,
                key,
                hand.pk,
                request_hash,
                response.status,
                Jsonb(response.body),
                now,
                now,
            ],
        )
        stored = cursor.fetchone()
    if stored is None:
        raise _key_reused()
