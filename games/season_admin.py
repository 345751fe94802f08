"""The seasons in the admin: prize schedules (rank → Quan, per board, season kind
and room), the closed seasons and their boards, and the prize account's fundings (adding one
books issuance → prize account). Imported by ``games.admin``."""

from __future__ import annotations

import secrets
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from games.admin import ReadOnlyAdmin
from games.models import (
    PrizeFunding,
    PrizeLine,
    PrizeSchedule,
    Season,
    SeasonBoard,
    SeasonPrize,
)
from games.rating_terms import RATING_PREFIX
from games.rules.ruleset import PRESETS
from games.services.seasons import prize_account, prize_account_fund, season_board_close


def board_choices() -> list[tuple[str, str]]:
    return [("quan", "quan"), ("xp", "xp")] + [
        (RATING_PREFIX + p, RATING_PREFIX + p) for p in sorted(PRESETS)
    ]


class PrizeScheduleForm(forms.ModelForm):
    board = forms.ChoiceField(choices=board_choices)

    class Meta:
        model = PrizeSchedule
        fields = ("board", "kind", "room", "min_hands", "active")


class PrizeLineInline(admin.TabularInline):
    model = PrizeLine
    extra = 3


@admin.register(PrizeSchedule)
class PrizeScheduleAdmin(admin.ModelAdmin):
    form = PrizeScheduleForm
    inlines = [PrizeLineInline]
    list_display = ("board", "kind", "room", "min_hands", "active", "total")
    list_filter = ("kind", "active")

    @admin.display(description="Total Quan a season")
    def total(self, obj: PrizeSchedule) -> int:
        return sum(obj.amounts())


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class SeasonBoardInline(ReadOnlyInline):
    model = SeasonBoard
    fields = ("board", "room", "players", "status", "total", "needed", "transaction")


@admin.register(Season)
class SeasonAdmin(ReadOnlyAdmin):
    list_display = ("period", "kind", "starts_at", "ends_at", "closed_at")
    list_filter = ("kind",)
    inlines = [SeasonBoardInline]


class SeasonPrizeInline(ReadOnlyInline):
    model = SeasonPrize
    fields = ("rank", "user", "score", "amount")


@admin.register(SeasonBoard)
class SeasonBoardAdmin(ReadOnlyAdmin):
    list_display = ("season", "board", "room", "players", "status", "total", "needed")
    list_filter = ("status", "board")
    inlines = [SeasonPrizeInline]
    actions = ["pay_now"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)  # for the action; every field stays read-only

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in SeasonBoard._meta.fields]

    @admin.action(description="Pay the unfunded boards now (the prize account funded)")
    def pay_now(self, request: HttpRequest, queryset: QuerySet[SeasonBoard]) -> None:
        for row in queryset.filter(status=SeasonBoard.Status.UNFUNDED).select_related("season"):
            done = season_board_close(season=row.season, board=row.board, room=row.room)
            self.message_user(request, f"{done}: {done.get_status_display()}")


class PrizeFundingForm(forms.ModelForm):
    nonce = forms.CharField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = PrizeFunding
        fields = ("amount", "memo")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["nonce"].initial = secrets.token_hex(16)

    def clean_amount(self) -> int:
        amount = self.cleaned_data["amount"]
        if not amount or amount <= 0:
            raise forms.ValidationError("A funding moves a positive whole amount.")
        return int(amount)


@admin.register(PrizeFunding)
class PrizeFundingAdmin(admin.ModelAdmin):
    """Adding a funding books it (issuance → prize account); a funding is never edited."""

    form = PrizeFundingForm
    list_display = ("created_at", "amount", "memo", "staff", "transaction")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        balance = prize_account().balance
        messages.info(request, f"The prize account holds {balance:,} Quan.")
        return super().changelist_view(request, extra_context)

    def save_model(self, request: HttpRequest, obj: PrizeFunding, form: Any, change: bool) -> None:
        key = form.cleaned_data.get("nonce") or secrets.token_hex(16)
        funding = prize_account_fund(amount=obj.amount, memo=obj.memo, staff=request.user, key=key)
        obj.pk, obj.transaction_id, obj.created_at = (
            funding.pk,
            funding.transaction_id,
            funding.created_at,
        )
        obj.staff = funding.staff
        obj._state.adding = False
