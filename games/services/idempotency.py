"""Idempotent move requests: a repeated ``(user, Idempotency-Key)`` gets the first response."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext_lazy as _

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
    record = IdempotencyRecord.objects.filter(user=user, key=key).first()
    if record is None:
        return None
    if record.request_hash != request_hash:
        raise _key_reused()
    return StoredResponse(record.response_status, record.response_body, replayed=True)


def idempotency_record(
    *, user: Any, key: str | None, hand: Hand, request_hash: str, response: StoredResponse
) -> None:
    """Keep the response under its key, in a savepoint so the transaction stays usable. The same
    key sent at the same time to another hand (whose lock we do not hold) may have been stored
    first: then it is refused and the caller's transaction rolls back with the exception."""
    if key is None:
        return
    try:
        with transaction.atomic():
            IdempotencyRecord.objects.create(
                user=user,
                key=key,
                hand=hand,
                request_hash=request_hash,
                response_status=response.status,
                response_body=response.body,
            )
    except IntegrityError as exc:
        # Any other integrity error is a bug and stays one.
        if not IdempotencyRecord.objects.filter(user=user, key=key).exists():
            raise
        raise _key_reused() from exc
