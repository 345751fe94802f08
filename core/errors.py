"""The domain errors that services and selectors raise: a stable ``code``, a message translated
by Django's gettext (``locale/vi``) and its parameters. No HTTP here: ``chan_api.problems`` maps
each code to a status in one table and renders problem+json, so a service behaves the same when
called from a view, a Celery task, a management command or an admin action.

Raise a family member with the specific code and a lazily translated message::

    raise Conflict(_("You play seat %(seat)s, not %(claimed)s."), code="not_your_seat",
                   seat=1, claimed=2)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

Message = str | Promise


class DomainError(Exception):
    """Base of the family. ``errors`` maps a field to its messages (lazy strings allowed);
    ``extra`` adds public fields to the problem body (``seq`` on move refusals)."""

    code: ClassVar[str] = "error"
    message: ClassVar[Message] = _("The request cannot be carried out.")

    def __init__(
        self,
        message: Message | None = None,
        *,
        code: str | None = None,
        errors: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
        **params: Any,
    ) -> None:
        self.template: Message = message if message is not None else type(self).message
        self.code = code or type(self).code  # type: ignore[misc]
        self.params = params
        self.errors = dict(errors) if errors else None
        self.extra = dict(extra) if extra else {}
        super().__init__(self.code)

    def detail(self) -> str:
        """The message in the active language, its parameters filled in."""
        text = str(self.template)
        return text % self.params if self.params else text

    def __str__(self) -> str:
        return f"{self.code}: {self.detail()}"


class InvalidInput(DomainError):
    """The input is malformed or out of range (a field, a query parameter, a ruleset)."""

    code = "invalid"
    message = _("The request has invalid fields.")


class NotFound(DomainError):
    """The object does not exist, or the caller may not know that it does."""

    code = "not_found"
    message = _("Not found.")


class PermissionDenied(DomainError):
    """The caller is known but may not do this."""

    code = "permission_denied"
    message = _("You may not do this.")


class NotAuthenticated(DomainError):
    """The caller's credentials are wrong."""

    code = "invalid_credentials"
    message = _("The username or password is wrong.")


class Conflict(DomainError):
    """The current state refuses the request (taken, already done, not now)."""

    code = "conflict"
    message = _("The request conflicts with the current state.")


class RuleRefused(DomainError):
    """The rules of Chắn refuse a move (RULES.md): ``code`` is the rules core's own code."""

    code = "illegal_move"
    message = _("The rules do not allow this move.")


class RateLimited(DomainError):
    """Too many requests of one kind; ``retry_after`` seconds until the next one is taken."""

    code = "throttled"
    message = _("Too many requests; slow down.")

    def __init__(self, message: Message | None = None, *, retry_after: int = 60, **kw: Any):
        super().__init__(message, **kw)
        self.retry_after = retry_after
