"""What the API deprecates, and the headers that say so (docs/api.md § Deprecation policy).

An operation is deprecated by an entry in :data:`DEPRECATIONS` (its URL name), never by
changing what it answers: from ``deprecated_on`` on, every answer of it carries
``Deprecation: @<unix time>`` (RFC 9745), ``Sunset: <HTTP date>`` (RFC 8594) and ``Link``
headers to its successor and to the changelog; the schema marks it ``deprecated: true``. From
``sunset_on`` on it answers ``410 gone`` (problem+json naming the successor), and a later
release removes it. The policy: at least 180 days between the two dates.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.http import http_date
from django.utils.translation import gettext_lazy as _

from core import errors

CHANGELOG_URL = "/api/redoc/#section/Changelog"  # docs/api.md's, in the schema (below)
MINIMUM_NOTICE = dt.timedelta(days=180)


@dataclass(frozen=True, slots=True)
class Deprecation:
    """One deprecated URL: its name and operations, when it was deprecated and sunsets, and the
    path that succeeds it."""

    url_name: str
    operation_ids: tuple[str, ...]  # the schema's operations at that URL
    deprecated_on: dt.date
    sunset_on: dt.date
    successor: str  # the path that replaces it, as the docs write it

    def __post_init__(self) -> None:
        if self.sunset_on - self.deprecated_on < MINIMUM_NOTICE:
            raise ValueError(f"{self.url_name}: less than 180 days between deprecation and sunset")

    def headers(self) -> dict[str, str]:
        since = dt.datetime.combine(self.deprecated_on, dt.time(), tzinfo=dt.UTC)
        sunset = dt.datetime.combine(self.sunset_on, dt.time(), tzinfo=dt.UTC)
        return {
            "Deprecation": f"@{int(since.timestamp())}",
            "Sunset": http_date(sunset.timestamp()),
            "Link": f'<{self.successor}>; rel="successor-version", '
            f'<{CHANGELOG_URL}>; rel="deprecation"',
        }


class Gone(errors.DomainError):
    code = "gone"
    message = _("This operation was retired on %(sunset)s; use %(successor)s.")


# The deprecated operations, oldest first (the changelog in docs/api.md lists each one).
DEPRECATIONS: tuple[Deprecation, ...] = (
    # 2026-12-01: tokens with scopes are managed under /me/tokens
    Deprecation(
        url_name="auth-tokens",
        operation_ids=("auth_tokens_list",),
        deprecated_on=dt.date(2026, 12, 1),
        sunset_on=dt.date(2027, 6, 1),
        successor="/api/v1/me/tokens",
    ),
    Deprecation(
        url_name="auth-token-revoke",
        operation_ids=("auth_tokens_revoke",),
        deprecated_on=dt.date(2026, 12, 1),
        sunset_on=dt.date(2027, 6, 1),
        successor="/api/v1/me/tokens/{token_id}",
    ),
)


def deprecation_for(url_name: str | None) -> Deprecation | None:
    return next((d for d in DEPRECATIONS if d.url_name == url_name), None)


class DeprecationHeadersMiddleware:
    """Adds the headers to a deprecated operation's answers; a retired one answers 410."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        match = request.resolver_match
        found = deprecation_for(match.view_name if match else None)
        if found is not None and timezone.now().date() >= found.deprecated_on:
            for name, value in found.headers().items():
                response[name] = value
        return response

    def process_view(
        self, request: HttpRequest, view: Any, args: Any, kwargs: Any
    ) -> HttpResponse | None:
        match = request.resolver_match
        found = deprecation_for(match.view_name if match else None)
        if found is None or timezone.now().date() < found.sunset_on:
            return None
        from chan_api.problems import plain_problem

        sunset = found.sunset_on.isoformat()
        return plain_problem(
            Gone(sunset=sunset, successor=found.successor, extra={"successor": found.successor})
        )


def mark_deprecated_operations(result: dict[str, Any], generator: Any, **kwargs: Any) -> dict:
    """drf-spectacular postprocessing hook: ``deprecated: true`` on every deprecated operation."""
    deprecated = {op for d in DEPRECATIONS for op in d.operation_ids}
    schema = result  # drf-spectacular passes the document as `result`
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict) and operation.get("operationId") in deprecated:
                operation["deprecated"] = True
    return result


GUIDE = Path(__file__).resolve().parent.parent / "docs" / "api.md"


def guide_sections(*titles: str) -> str:
    """These ``## `` sections of docs/api.md, as written there (empty when it is absent)."""
    try:
        text = GUIDE.read_text()
    except OSError:
        return ""
    parts = ("\n" + text).split("\n## ")
    wanted = [p for p in parts if p.split("\n", 1)[0].strip() in titles]
    return "\n\n".join("# " + p.strip() for p in wanted)


def add_changelog(result: dict[str, Any], generator: Any, **kwargs: Any) -> dict:
    """drf-spectacular postprocessing hook: the changelog and the deprecation policy of
    docs/api.md in the schema's description, so ReDoc shows them (``#section/Changelog``, where
    the ``Link: rel="deprecation"`` header points)."""
    extra = guide_sections("Changelog", "Deprecation policy")
    if extra:
        info = result.setdefault("info", {})
        info["description"] = (info.get("description", "") + "\n\n" + extra).strip()
    return result
