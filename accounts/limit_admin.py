"""The admin of the limits players set for themselves: staff see every player's
limits, its cooling-off periods and self-exclusions and the history of their changes, read-only.
Nobody shortens a self-exclusion here or anywhere: its row is append-only in PostgreSQL
(accounts 0015). Imported by accounts/admin.py (its user page shows the same as inlines)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from accounts.models import PlayerExclusion, PlayerLimit, PlayerLimitChange


class _ReadOnly:
    """Listed and shown, never added, changed or deleted in the admin."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


_LIMIT_FIELDS = ("user", "kind", "value", "pending_value", "pending_at", "updated_at")
_EXCLUSION_FIELDS = ("user", "kind", "days", "starts_at", "ends_at", "created_at")
_CHANGE_FIELDS = (
    "user",
    "kind",
    "old_value",
    "new_value",
    "effective_at",
    "changed_by",
    "created_at",
)


@admin.register(PlayerLimit)
class PlayerLimitAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = _LIMIT_FIELDS
    list_filter = ("kind",)
    search_fields = ("user__username",)
    list_select_related = ("user",)
    fields = readonly_fields = _LIMIT_FIELDS


@admin.register(PlayerExclusion)
class PlayerExclusionAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = _EXCLUSION_FIELDS
    list_filter = ("kind",)
    search_fields = ("user__username",)
    list_select_related = ("user",)
    fields = readonly_fields = _EXCLUSION_FIELDS


@admin.register(PlayerLimitChange)
class PlayerLimitChangeAdmin(_ReadOnly, admin.ModelAdmin):
    list_display = _CHANGE_FIELDS
    list_filter = ("kind",)
    search_fields = ("user__username",)
    list_select_related = ("user", "changed_by")
    fields = readonly_fields = _CHANGE_FIELDS


class PlayerLimitInline(_ReadOnly, admin.TabularInline):
    model = PlayerLimit
    fields = readonly_fields = _LIMIT_FIELDS[1:]
    extra = 0


class PlayerExclusionInline(_ReadOnly, admin.TabularInline):
    model = PlayerExclusion
    fields = readonly_fields = _EXCLUSION_FIELDS[1:]
    extra = 0


class PlayerLimitChangeInline(_ReadOnly, admin.TabularInline):
    model = PlayerLimitChange
    fk_name = "user"
    fields = readonly_fields = _CHANGE_FIELDS[1:]
    extra = 0


LIMIT_INLINES = (PlayerLimitInline, PlayerExclusionInline, PlayerLimitChangeInline)
