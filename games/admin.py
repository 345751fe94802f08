"""Admin for tables, seats and hands. Hand logs are read-only.

Staff must not be able to peek at cards: a hand's seed stays hidden while the hand is being
played, a table's fixed deck is shown to auditors (``accounts.audit_hands``) only, a stored move
response (the mover's view, with its private hand) only to auditors once the hand has ended, and
the cached state is never shown. None of these fields can be used in a changelist filter
(``?seed__startswith=…`` would otherwise answer yes/no questions about a secret). The log itself
holds only what every seat sees (moves, drawn cards, the deal without its hands).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from accounts.selectors import user_is_auditor
from games.models import Hand, HandEvent, IdempotencyRecord, Seat, Table

HIDDEN_TO_AUDITORS_ONLY = "(hidden: shown to auditors only)"
HIDDEN_UNTIL_ENDED = "(hidden until the hand ends)"
HIDDEN_RESPONSE = "(hidden: shown to auditors once the hand has ended)"


class SecretFieldsAdmin(admin.ModelAdmin):
    """Refuses changelist filters on ``secret_fields`` (a 400), whoever asks."""

    secret_fields: tuple[str, ...] = ()

    def lookup_allowed(self, lookup: str, value: Any, request: HttpRequest | None = None) -> bool:
        if lookup.split("__", 1)[0] in self.secret_fields:
            return False
        return super().lookup_allowed(lookup, value, request)


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("number", "player", "ready", "leaving", "auto_u", "auto_chiu")
    raw_id_fields = ("player",)


@admin.register(Table)
class TableAdmin(SecretFieldsAdmin):
    """Tables are editable; the fixed deck (every card of every hand dealt at the table) is not
    part of the form and is shown to auditors only."""

    list_display = ("id", "name", "room", "stake", "max_seats", "mode", "status", "owner")
    list_filter = ("status", "mode", "room")
    search_fields = ("name", "room", "owner__username")
    raw_id_fields = ("owner",)
    exclude = ("fixed_deck",)
    secret_fields = ("fixed_deck",)
    inlines = (SeatInline,)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        deck = "fixed_deck" if user_is_auditor(request.user) else "fixed_deck_hidden"
        return (deck, "fixed_dealer", "created_at", "updated_at")

    @admin.display(description="fixed deck")
    def fixed_deck_hidden(self, obj: Table) -> str:
        return "-" if obj.fixed_deck is None else HIDDEN_TO_AUDITORS_ONLY


@admin.register(Seat)
class SeatAdmin(admin.ModelAdmin):
    list_display = ("id", "table", "number", "player", "ready", "leaving")
    list_filter = ("ready", "leaving")
    search_fields = ("player__username",)
    raw_id_fields = ("table", "player")


class ReadOnlyAdmin(SecretFieldsAdmin):
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
    secret_fields = ("seed", "deck", "state_blob")
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
        return HIDDEN_UNTIL_ENDED


@admin.register(HandEvent)
class HandEventAdmin(ReadOnlyAdmin):
    list_display = ("id", "hand", "seq", "type", "actor_seat", "system", "created_at")
    list_filter = ("type", "system")
    fields = ("hand", "seq", "type", "actor_seat", "system", "payload", "effects", "created_at")
    readonly_fields = fields


@admin.register(IdempotencyRecord)
class IdempotencyRecordAdmin(ReadOnlyAdmin):
    """The stored response is the mover's view of the hand, its private hand included: shown
    only to auditors, and only once the hand has ended."""

    list_display = ("id", "user", "key", "hand", "response_status", "created_at")
    search_fields = ("key", "user__username")
    list_select_related = ("user", "hand")
    secret_fields = ("response_body",)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        shown = (
            obj is not None
            and obj.hand.status == Hand.Status.ENDED
            and user_is_auditor(request.user)
        )
        body = "response_body" if shown else "response_body_hidden"
        return ("user", "key", "hand", "request_hash", "response_status", body, "created_at")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.get_fields(request, obj)

    @admin.display(description="response body")
    def response_body_hidden(self, obj: IdempotencyRecord) -> str:
        return HIDDEN_RESPONSE
