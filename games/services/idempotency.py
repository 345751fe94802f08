"""Idempotent move requests: a repeated ``(user, Idempotency-Key)`` gets the first response."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection
from django.db.models import UniqueConstraint
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from psycopg.types.json import Jsonb

from core.errors import Conflict, InvalidInput
from core.pipeline import after_answers
from games.models import Hand, IdempotencyRecord


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """A response as first given (``replayed`` when it is served again from its key).
    ``encoded``: the body as JSON, when the caller had it encoded (it is stored as it is)."""

    status: int
    body: dict[str, Any]
    replayed: bool = False
    encoded: bytes | None = None


_KEY_RE = re.compile(r"[\x21-\x7e]{1,128}")


def idempotency_key_valid(key: str | None) -> bool:
    """Whether ``key`` is a key (1 to 128 visible ASCII characters)."""
    return key is not None and _KEY_RE.fullmatch(key) is not None


def idempotency_key_check(key: str | None) -> None:
    """A key is 1 to 128 visible ASCII characters (``invalid_idempotency_key`` otherwise)."""
    if key is not None and not idempotency_key_valid(key):
        raise InvalidInput(
            _("Idempotency-Key must be 1 to 128 visible ASCII characters."),
            code="invalid_idempotency_key",
        )


_UNIQUE_KEY = next(  # the model's unique (user, key)
    c.name
    for c in IdempotencyRecord._meta.constraints
    if isinstance(c, UniqueConstraint) and set(c.fields) == {"user", "key"}
)


def idempotency_key_taken(exc: IntegrityError) -> Conflict | None:
    """The refusal of a key stored by another request meanwhile, if ``exc`` (raised by the
    transaction that ran :func:`idempotency_record`) is the key's unique constraint's."""
    diag = getattr(exc.__cause__, "diag", None)
    if diag is not None:
        taken = diag.constraint_name == _UNIQUE_KEY
    else:  # SQLite names the columns
        table = IdempotencyRecord._meta.db_table
        taken = f"{table}.user_id, {table}.key" in str(exc)
    return _key_reused() if taken else None


def _key_reused() -> Conflict:
    return Conflict(
        _("This Idempotency-Key was already used for a different request."),
        code="idempotency_key_reused",
    )


def idempotency_lookup_send(
    *, user: Any, key: str | None
) -> Callable[[str], StoredResponse | None]:
    """Send the lookup of ``(user, key)`` now and return the function that reads its answer
    for a request's hash: the stored response of an earlier request with this key, or None; a
    different request under the same key is refused (``idempotency_key_reused``). Send it
    after the lock that serialises the requests it guards (the hand row), so a retry racing its
    original waits for it and then finds its record: in a pipeline (``core.pipeline``) it goes
    in the lock's flight, and the server runs it once the lock is held."""
    if key is None:
        return lambda request_hash: None
    # A fixed statement on the unique (user, key): the ORM compiled the same query on every
    # move (4 % of a web worker's time under bench/load_bench.py; docs/decisions/).
    cursor = connection.cursor()
    cursor.execute(_REPLAY_SQL, [user.pk, key])

    def answer(request_hash: str) -> StoredResponse | None:
        with cursor:
            row = cursor.fetchone()
        if row is None:
            return None
        stored_hash, status, body = row
        if stored_hash != request_hash:
            raise _key_reused()
        body = _BODY_FIELD.from_db_value(body, None, connection)
        return StoredResponse(status, body, replayed=True)

    return answer


_REPLAY_SQL = (
    f"SELECT request_hash, response_status, response_body FROM {IdempotencyRecord._meta.db_table} "
    "WHERE user_id = %s AND key = %s"
)
_BODY_FIELD = IdempotencyRecord._meta.get_field("response_body")


def _as_jsonb(response: StoredResponse) -> Jsonb:
    """The body for its ``jsonb`` column: the JSON it was already encoded to, if it was (a
    view is 3–8 KB: encoding it twice was 2–3 % of a web worker under load)."""
    encoded = response.encoded
    if encoded is None:
        return Jsonb(response.body)
    return Jsonb(response.body, dumps=lambda _body: encoded)


def idempotency_record(
    *, user: Any, key: str | None, hand: Hand, request_hash: str, response: StoredResponse
) -> None:
    """Keep the response under its key (one ``INSERT``). The same key sent at the same time to
    another hand (whose lock we do not hold) may have been stored first: then the server
    refuses the row (the unique key), which aborts the caller's transaction there, before its
    ``COMMIT`` if that was sent in the same flight (``core.pipeline``: a move commits with its
    writes); the caller turns the error into the refusal (:func:`idempotency_key_taken`)."""
    if key is None:
        return
    table = IdempotencyRecord._meta.db_table
    now = timezone.now()
    cursor = connection.cursor()  # open until its answer is in (core.pipeline)
    cursor.execute(
        f"INSERT INTO {table} (user_id, key, hand_id, request_hash, response_status, "
        "response_body, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        [
            user.pk,
            key,
            hand.pk,
            request_hash,
            response.status,
            _as_jsonb(response),
            now,
            now,
        ],
    )

    after_answers(cursor.close)  # (its answer is an error or one row)
