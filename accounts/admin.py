"""Admin for users and tokens. Token hashes are never shown, and neither they nor password hashes
can be used in a changelist filter (Django's UserAdmin already refuses ``?password…`` lookups)."""

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.http import HttpRequest

from accounts.models import ApiToken, User
from accounts.services import token_revoke


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    fieldsets = (
        *DjangoUserAdmin.fieldsets,
        ("Game profile", {"fields": ("display_name", "xp", "level")}),
        ("Record", {"fields": ("created_at", "updated_at")}),
    )
    add_fieldsets = (
        *DjangoUserAdmin.add_fieldsets,
        ("Game profile", {"fields": ("display_name",)}),
    )
    readonly_fields = ("created_at", "updated_at")
    list_display = ("username", "display_name", "level", "xp", "is_staff", "is_active")
    search_fields = ("username", "display_name", "email")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Read-only: tokens are issued through the API; staff may only revoke them."""

    list_display = ("id", "user", "name", "key_prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    search_fields = ("user__username", "key_prefix", "name")
    fields = ("user", "name", "key_prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    list_select_related = ("user",)
    actions = ("revoke",)

    def lookup_allowed(self, lookup: str, value: Any, request: HttpRequest | None = None) -> bool:
        # ?key_hash__startswith=… would read the hash out one character at a time.
        if lookup.split("__", 1)[0] == "key_hash":
            return False
        return super().lookup_allowed(lookup, value, request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return False

    @admin.action(description="Revoke selected tokens", permissions=("delete",))
    def revoke(self, request: HttpRequest, queryset) -> None:  # type: ignore[no-untyped-def]
        for token in queryset.select_related("user"):
            token_revoke(user=token.user, token_id=token.pk)
        self.message_user(request, f"Revoked {queryset.count()} token(s).")
