"""The one error the client raises for an answer it was not given: :class:`ApiError`."""

from __future__ import annotations

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
