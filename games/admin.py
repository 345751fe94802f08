"""Admin for tables, seats and hands. Hand logs are read-only; a hand's seed stays hidden while
the hand is being played (staff must not be able to peek at the deck)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from games.models import Hand, HandEvent, IdempotencyRecord, Seat, Table


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("number", "player", "ready", "leaving", "auto_u", "auto_chiu")
    raw_id_fields = ("player",)


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "room", "stake", "max_seats", "mode", "status", "owner")
    list_filter = ("status", "mode", "room")
    search_fields = ("name", "room", "owner__username")
    raw_id_fields = ("owner",)
    readonly_fields = ("fixed_deck", "fixed_dealer", "created_at", "updated_at")
    inlines = (SeatInline,)


@admin.register(Seat)
class SeatAdmin(admin.ModelAdmin):
    list_display = ("id", "table", "number", "player", "ready", "leaving")
    list_filter = ("ready", "leaving")
    search_fields = ("player__username",)
    raw_id_fields = ("table", "player")


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class HandEventInline(admin.TabularInline):
    model = HandEvent
    extra = 0
    fields = ("seq", "type", "actor_seat", "system", "payload", "effects", "created_at")
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Hand)
class HandAdmin(ReadOnlyAdmin):
    list_display = ("id", "table", "number", "n_seats", "dealer", "status", "seq", "created_at")
    list_filter = ("status", "mode")
    search_fields = ("table__name", "seed_hash")
    inlines = (HandEventInline,)
    fields = (
        "table",
        "number",
        "status",
        "n_seats",
        "dealer",
        "seats",
        "mode",
        "ruleset",
        "prefs",
        "previous_winner",
        "seed_hash",
        "revealed_seed",
        "seq",
        "state_seq",
        "result",
        "last_event_at",
        "ended_at",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields

    @admin.display(description="seed")
    def revealed_seed(self, obj: Hand) -> str:
        """The seed once the hand has ended; hidden while it is being played."""
        if obj.status == Hand.Status.ENDED:
            return obj.seed
        return "(hidden until the hand ends)"


@admin.register(HandEvent)
class HandEventAdmin(ReadOnlyAdmin):
    list_display = ("id", "hand", "seq", "type", "actor_seat", "system", "created_at")
    list_filter = ("type", "system")
    fields = ("hand", "seq", "type", "actor_seat", "system", "payload", "effects", "created_at")
    readonly_fields = fields


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(ReadOnlyAdmin):
    list_display = ("id", "user", "key", "hand", "response_status", "created_at")
    search_fields = ("key", "user__username")
    fields = (
        "user",
        "key",
        "hand",
        "request_hash",
        "response_status",
        "response_body",
        "created_at",
    )
    readonly_fields = fields
