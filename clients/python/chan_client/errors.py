"""The errors the client raises for an answer it was not given: :class:`ApiError`, and
:class:`RetryLater` when the server asks for a wait longer than the client makes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx


class ApiError(Exception):
    """A 4xx or 5xx answer: its status and, for problem+json, its stable ``code`` and ``detail``."""

    def __init__(self, response: httpx.Response) -> None:
        self.status = response.status_code
        self.headers = response.headers
        try:
            body = response.json()
        except ValueError:
            body = None
        self.body: dict[str, Any] = body if isinstance(body, dict) else {}
        self.code: str | None = self.body.get("code")
        self.detail: str = self.body.get("detail") or response.text[:200]
        super().__init__(f"{self.status} {self.code or ''}: {self.detail}".strip())


class RetryLater(ApiError):
    """A 429 or 503 whose ``Retry-After`` is longer than the client waits
    (:attr:`RetryPolicy.max_delay <chan_client.RetryPolicy.max_delay>`): raised at once, not
    retried. ``retry_after`` is the server's figure in seconds, ``retry_at`` the UTC time it names."""

    def __init__(self, response: httpx.Response, retry_after: float) -> None:
        super().__init__(response)
        self.retry_after = retry_after
        self.retry_at = datetime.now(UTC) + timedelta(seconds=retry_after)
        self.args = (
            f"{self.args[0]} (retry after {retry_after:g} s, at {self.retry_at.isoformat()})",
        )
