"""The one DRF permission that holds a token to its scopes (accounts/scopes.py)."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission

from accounts.scopes import ANY, PUBLIC, SCOPES, missing_scope, satisfies, token_scopes


def view_scope(view: Any, method: str) -> str | None:
    """The scope a view declares for ``method``: its ``required_scope``, a scope name or a
    mapping of HTTP method to one (HEAD reads as GET; OPTIONS needs any token). None: the view
    declares nothing (refused)."""
    declared = getattr(view, "required_scope", None)
    if declared is None:
        return None
    if method == "OPTIONS":
        return ANY
    if isinstance(declared, dict):
        return declared.get("GET" if method == "HEAD" else method)
    return declared


class ScopePermission(BasePermission):
    """A token may use a view only if it holds the scope the view declares; else ``403
    missing_scope`` naming it. A view that declares no scope is refused to every token (a test
    walks the URLs so none ships so). A request without a token (an admin session) is not
    this permission's business: IsAuthenticated and the view's own checks decide."""

    def has_permission(self, request: Any, view: Any) -> bool:
        scope = view_scope(view, request.method)
        if scope is None or (scope not in SCOPES and scope not in (PUBLIC, ANY)):
            return False
        granted = token_scopes(getattr(request, "auth", None))
        if granted is None or satisfies(granted, scope):
            return True
        raise missing_scope(scope)
