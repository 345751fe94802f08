"""The review queue of integrity flags (docs/audit.md "The review queue"): the open flags by
default, each with its numbers, its evidence hands linked to the replay viewer, and its history;
staff clear a flag, freeze its players or ban them (a reason asked each time), or queue a scan.
Registered from ``games/admin.py``."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from accounts.admin import reason_action
from games.models import IntegrityAction, IntegrityFlag
from games.services.integrity import (
    BAN,
    CLEAR,
    FREEZE,
    integrity_flag_review,
    integrity_scan_request,
)


class IntegrityActionInline(admin.TabularInline):
    model = IntegrityAction
    extra = 0
    can_delete = False
    fields = ("created_at", "action", "status", "staff", "notes")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(IntegrityFlag)
class IntegrityFlagAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "signal",
        "player",
        "partner",
        "statistic",
        "threshold",
        "window_end",
        "status",
        "evidence",
    )
    list_filter = ("status", "signal")
    search_fields = ("player__username", "partner__username")
    list_select_related = ("player", "partner")
    fields = (
        "signal",
        "player",
        "partner",
        "statistic",
        "threshold",
        "detail",
        "window_start",
        "window_end",
        "evidence",
        "status",
        "reviewer",
        "notes",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields
    inlines = (IntegrityActionInline,)
    actions = ("clear", "freeze", "ban")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        """The queue: the open flags unless a status filter is chosen."""
        if request.method == "GET" and not any(k.startswith("status") for k in request.GET):
            query = request.GET.copy()
            query["status__exact"] = IntegrityFlag.Status.OPEN
            return HttpResponseRedirect(f"{request.path}?{query.urlencode()}")
        return super().changelist_view(request, extra_context)

    def get_urls(self) -> list[URLPattern]:
        scan = self.admin_site.admin_view(self.scan_view)
        return [
            path("scan/", scan, name="games_integrityflag_scan"),
            *super().get_urls(),
        ]

    def scan_view(self, request: HttpRequest) -> HttpResponse:
        """POST: queue the scan of the last week now (the nightly task, on demand)."""
        if request.method != "POST" or not self.has_change_permission(request):
            raise PermissionDenied
        integrity_scan_request()
        self.message_user(request, "Integrity scan queued.")
        return HttpResponseRedirect(reverse("admin:games_integrityflag_changelist"))

    @admin.display(description="evidence hands")
    def evidence(self, obj: IntegrityFlag) -> str:
        ids = obj.hand_ids or []
        return format_html_join(
            " ",
            '<a href="{}">{}</a>',
            ((reverse("admin:games_hand_replay", args=[i]), i) for i in ids),
        ) or format_html("{}", "—")

    def _review(
        self, request: HttpRequest, queryset: QuerySet[IntegrityFlag], action: str, verb: str
    ) -> HttpResponse | None:
        def do(flag: IntegrityFlag, reason: str) -> None:
            integrity_flag_review(flag_id=flag.pk, action=action, staff=request.user, notes=reason)

        explanation = {
            CLEAR: "The flag is closed as a false alarm; its players play on.",
            FREEZE: "Its players cannot sit at any table until the flag is cleared; their "
            "holds and balances are kept.",
            BAN: "Its players are banned (accounts.services.user_ban): signed out, unseated.",
        }[action]
        return reason_action(
            self,
            request,
            list(queryset.order_by("pk")),
            title=f"{verb} integrity flags",
            explanation=explanation,
            verb=verb,
            do=do,
        )

    @admin.action(description="Clear (no cheating found)", permissions=("change",))
    def clear(self, request: HttpRequest, queryset: QuerySet[IntegrityFlag]) -> Any:
        return self._review(request, queryset, CLEAR, "Clear")

    @admin.action(description="Freeze the accounts (cannot sit)", permissions=("change",))
    def freeze(self, request: HttpRequest, queryset: QuerySet[IntegrityFlag]) -> Any:
        return self._review(request, queryset, FREEZE, "Freeze")

    @admin.action(description="Ban the accounts", permissions=("change",))
    def ban(self, request: HttpRequest, queryset: QuerySet[IntegrityFlag]) -> Any:
        return self._review(request, queryset, BAN, "Ban")
