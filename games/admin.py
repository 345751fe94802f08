"""Admin for tables, seats and hands. Hand logs are read-only.

Staff must not be able to peek at cards: a hand's seed stays hidden while the hand is being
played, a table's fixed deck is shown to auditors (``accounts.audit_hands``) only, a stored move
response (the mover's view, with its private hand) only to auditors once the hand has ended, and
no state is kept beside the log. None of these fields can be used in a changelist filter
(``?seed__startswith=…`` would otherwise answer yes/no questions about a secret). The log itself
holds only what every seat sees (moves, drawn cards, the deal without its hands).

A hand's page names its players (not seat numbers), gives times to the second, shows its booked
Quan and ledger transaction, and links its export (``games.export``) once the hand has ended, or
at any time for auditors, and (for auditors only) its replay viewer: every event of the hand
stepped through with every seat's hand face up (``full_view``), the mover's legal moves and its
choice, its faults (hidden ones too), verdict, declared and true cước, winning card, Quan and
ledger entries (``games.selectors.replay``; docs/audit.md "The replay viewer"). Staff with ``games.change_hand`` may void an ended, settled hand (``hand_void``).

Every change made here is recorded with its old and new values (django-pghistory, under
"Events"), and in Django's own admin log.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone, translation
from django.utils.html import format_html, format_html_join
from django.utils.translation import pgettext

from accounts.admin import HistoryContextAdmin, reason_action
from accounts.models import LedgerTransaction
from accounts.selectors import user_is_auditor
from core.errors import DomainError
from games.export import hand_export
from games.hand_store import hand_seats_load
from games.ledger_keys import settlement_key, void_key
from games.models import (
    Block,
    Challenge,
    Hand,
    HandEvent,
    HandSeat,
    IdempotencyRecord,
    IntegrityAction,
    IntegrityFlag,
    Room,
    Seat,
    Table,
    Tournament,
    TournamentEntry,
)
from games.replay_labels import replay_labels
from games.rule_errors import rule_error
from games.rules.quan import FeeSchedule, FeesError
from games.selectors.replay import hand_replay_steps
from games.services.integrity import (
    BAN,
    CLEAR,
    FREEZE,
    integrity_flag_review,
    integrity_scan_request,
)
from games.services.tournaments import EDITABLE as TOURNAMENT_EDITABLE
from games.services.tournaments import (
    tournament_cancel,
    tournament_create,
    tournament_edit,
    tournament_terms_check,
)
from games.services.void import hand_void

HIDDEN_TO_AUDITORS_ONLY = "(hidden: shown to auditors only)"
HIDDEN_UNTIL_ENDED = "(hidden until the hand ends)"
HIDDEN_RESPONSE = "(hidden: shown to auditors once the hand has ended)"


class SecretFieldsAdmin(HistoryContextAdmin):
    """Refuses changelist filters on ``secret_fields`` (a 400), whoever asks."""

    secret_fields: tuple[str, ...] = ()

    def lookup_allowed(self, lookup: str, value: Any, request: HttpRequest | None = None) -> bool:
        if lookup.split("__", 1)[0] in self.secret_fields:
            return False
        return super().lookup_allowed(lookup, value, request)


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ("number", "player", "ready", "auto_u", "auto_chiu")
    raw_id_fields = ("player",)


class RoomAdminForm(forms.ModelForm):
    """A room's terms: its fee schedule is validated as the typed ``FeeSchedule`` here, so a bad
    edit is a field error on the form, never a settlement task failing later."""

    class Meta:
        model = Room
        fields = (
            "slug",
            "name",
            "position",
            "min_balance",
            "min_level",
            "min_vip_points",
            "needs_badge",
            "vip",
            "fees",
            "xuong_sai_settled",
        )

    def clean_fees(self) -> dict[str, Any]:
        try:
            return FeeSchedule.from_dict(self.cleaned_data.get("fees")).to_dict()
        except FeesError as exc:
            raise forms.ValidationError(rule_error(exc).detail(), code=exc.code) from None


@admin.register(Room)
class RoomAdmin(HistoryContextAdmin):
    form = RoomAdminForm
    list_display = ("slug", "name", "position", "min_balance", "min_level", "vip")
    readonly_fields = ("created_at", "updated_at")


@admin.register(Table)
class TableAdmin(SecretFieldsAdmin):
    """Tables are editable between hands; while a hand is being played its money and rule terms
    (stake, room, mode, ruleset, timeouts) are read-only. The status changes only through the
    services (deal, end of hand, last player leaving), never by hand. The fixed deck (every card
    of every hand dealt at the table) is not part of the form and is shown to auditors only."""

    terms_fields = (
        "room",
        "stake",
        "max_seats",
        "mode",
        "ruleset",
        "turn_timeout",
        "tra_cua_timeout",
        "declare_timeout",
        "ready_timeout",
    )

    list_display = ("id", "name", "room", "stake", "max_seats", "mode", "status", "owner")
    list_filter = ("status", "mode", "room")
    search_fields = ("name", "room", "owner__username")
    raw_id_fields = ("owner",)
    exclude = ("fixed_deck", "next_seed")
    secret_fields = ("fixed_deck", "next_seed")
    inlines = (SeatInline,)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        deck = "fixed_deck" if user_is_auditor(request.user) else "fixed_deck_hidden"
        fields: tuple[str, ...] = (deck, "fixed_dealer", "status", "created_at", "updated_at")
        if obj is not None and obj.status != Table.Status.OPEN:
            fields += self.terms_fields
        return fields

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a table with hands is history; close it by standing everyone up

    @admin.display(description="fixed deck")
    def fixed_deck_hidden(self, obj: Table) -> str:
        return "-" if obj.fixed_deck is None else HIDDEN_TO_AUDITORS_ONLY


@admin.register(Seat)
class SeatAdmin(HistoryContextAdmin):
    list_display = ("id", "table", "number", "player", "ready")
    list_filter = ("ready",)
    search_fields = ("player__username",)
    raw_id_fields = ("table", "player")
    exclude = ("client_seed",)  # secret until the hand ends (the fair deal)


class ReadOnlyAdmin(SecretFieldsAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def to_the_second(moment: dt.datetime | None) -> str:
    """A time in the admin's time zone, to the second (Django's admin format stops at minutes)."""
    return "-" if moment is None else timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S")


def seconds_of(field: str, label: str) -> Any:
    """A read-only admin column showing the datetime ``field`` to the second."""

    @admin.display(description=label)
    def show(model_admin: admin.ModelAdmin, obj: Any) -> str:
        return to_the_second(getattr(obj, field))

    return show


def seat_player(hand: Hand, seat: int | None) -> str:
    """``username (seat n)`` of a hand seat; the hand's seats are loaded once per hand."""
    if seat is None:
        return "-"
    if "hand_seats" not in getattr(hand, "_prefetched_objects_cache", {}):
        hand_seats_load(hand)
    seats = hand.seat_list()
    name = seats[seat].user.username if seat < len(seats) else "?"
    return f"{name} (seat {seat})"


class HandEventInline(admin.TabularInline):
    model = HandEvent
    extra = 0
    fields = ("seq", "type", "player", "system", "payload", "effects", "at")
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).select_related("hand")

    @admin.display(description="player")
    def player(self, obj: HandEvent) -> str:
        return seat_player(obj.hand, obj.actor_seat)

    at = seconds_of("created_at", "at")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class HandSeatInline(admin.TabularInline):
    model = HandSeat
    extra = 0
    fields = ("position", "user", "table_seat", "auto_u", "auto_chiu", "left_at")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Hand)
class HandAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "table",
        "number",
        "room",
        "stake",
        "n_seats",
        "status",
        "seq",
        "voided_at",
        "created_at",
    )
    actions = ("void",)
    list_filter = ("status", "mode", "room")
    search_fields = ("table__name", "seed_hash")
    secret_fields = ("seed", "deck", "client_seeds")
    inlines = (HandSeatInline, HandEventInline)
    fields = (
        "table",
        "number",
        "status",
        "room",
        "fees",
        "xuong_sai_settled",
        "stake",
        "n_seats",
        "dealer_player",
        "mode",
        "ruleset",
        "previous_winner_player",
        "seed_hash",
        "revealed_seed",
        "seq",
        "result",
        "quan",
        "ledger_transaction",
        "export_link",
        "replay_link",
        "voided",
        "last_event",
        "ended",
        "settled",
        "created",
    )
    readonly_fields = fields

    def get_urls(self) -> list[URLPattern]:
        export = self.admin_site.admin_view(self.export_view)
        replay = self.admin_site.admin_view(self.replay_view)
        return [
            path("<int:hand_id>/export/", export, name="games_hand_export"),
            path("<int:hand_id>/replay/", replay, name="games_hand_replay"),
            *super().get_urls(),
        ]

    def replay_view(self, request: HttpRequest, hand_id: int) -> HttpResponse:
        """The replay viewer (auditors only: it shows every hand face up): every event of the
        hand, its state after it, and the verdict, cước and Quan at the end. ``?seq=N`` opens
        it at event N; ``?lang=vi`` or ``en`` picks the page's language."""
        hand = get_object_or_404(Hand.objects.select_related("table", "room"), pk=hand_id)
        if not self.has_view_permission(request, hand) or not user_is_auditor(request.user):
            raise PermissionDenied
        lang = request.GET.get("lang") or getattr(request, "LANGUAGE_CODE", "en")
        lang = "vi" if str(lang).startswith("vi") else "en"
        with translation.override(lang):
            labels = replay_labels()
            title = pgettext("replay", "Replay of hand %(hand)s") % {"hand": hand.pk}
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "hand": hand,
            "opts": self.model._meta,
            "replay": hand_replay_steps(hand),
            "labels": labels,
            "lang": lang,
        }
        return TemplateResponse(request, "admin/games/hand/replay.html", context)

    def has_void_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("games.change_hand")

    @admin.action(description="Void hands (reverse their settlement)", permissions=("void",))
    def void(self, request: HttpRequest, queryset: QuerySet[Hand]) -> HttpResponse | None:
        """Asks for a reason, then books each hand's reversal through ``hand_void``."""

        def void_one(hand: Hand, reason: str) -> None:
            hand_void(hand_id=hand.pk, staff=request.user, reason=reason)

        return reason_action(
            self,
            request,
            list(queryset.order_by("pk")),
            title="Void hands",
            explanation=(
                "Each hand's settlement is reversed by one ledger transaction (hand:<id>:void) "
                "and the hand is marked void; its log is kept. A wallet that no longer holds "
                "what the hand paid it refuses the reversal."
            ),
            verb="Void",
            do=void_one,
        )

    def export_view(self, request: HttpRequest, hand_id: int) -> HttpResponse:
        """The hand's export (docs/audit.md) as a download: once the hand has ended for staff
        who may view hands, any time for auditors (as the API serves it)."""
        hand = get_object_or_404(Hand.objects.select_related("table", "room"), pk=hand_id)
        if not self.has_view_permission(request, hand) or not self._may_export(request, hand):
            raise PermissionDenied
        response = JsonResponse(hand_export(hand), json_dumps_params={"indent": 1})
        response["Content-Disposition"] = f'attachment; filename="hand-{hand.pk}.json"'
        return response

    @staticmethod
    def _may_export(request: HttpRequest, hand: Hand) -> bool:
        return hand.status == Hand.Status.ENDED or user_is_auditor(request.user)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        fields: tuple[str, ...] = self.fields
        if not user_is_auditor(request.user):
            fields = tuple(f for f in fields if f != "replay_link")
        if obj is not None and self._may_export(request, obj):
            return fields
        return tuple("export_hidden" if f == "export_link" else f for f in fields)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.get_fields(request, obj)

    @admin.display(description="dealer")
    def dealer_player(self, obj: Hand) -> str:
        return seat_player(obj, obj.dealer)

    @admin.display(description="previous winner")
    def previous_winner_player(self, obj: Hand) -> str:
        return seat_player(obj, obj.previous_winner)

    @admin.display(description="ledger transaction")
    def ledger_transaction(self, obj: Hand) -> str:
        """The hand's settlement in the ledger: a link to it and its entries, by player."""
        tx = LedgerTransaction.objects.filter(idempotency_key=settlement_key(obj.pk)).first()
        if tx is None:
            return "-"
        url = reverse("admin:accounts_ledgertransaction_change", args=[tx.pk])
        entries = tx.entries.select_related("account__user", "account__table").order_by("id")
        return format_html(
            '<a href="{}">#{} {}</a><ul>{}</ul>',
            url,
            tx.pk,
            tx.idempotency_key,
            format_html_join("", "<li>{}: {}</li>", ((e.account, e.amount) for e in entries)),
        )

    @admin.display(description="export")
    def export_hidden(self, obj: Hand) -> str:
        return HIDDEN_UNTIL_ENDED

    @admin.display(description="export")
    def export_link(self, obj: Hand) -> str:
        """A link to the hand's export (for ``python -m games.rules.verify``)."""
        url = reverse("admin:games_hand_export", args=[obj.pk])
        api = f"/api/v1/hands/{obj.pk}/export"
        return format_html('<a href="{}">hand-{}.json</a> (API: {})', url, obj.pk, api)

    @admin.display(description="replay")
    def replay_link(self, obj: Hand) -> str:
        url = reverse("admin:games_hand_replay", args=[obj.pk])
        return format_html('<a href="{}">Replay every event (auditors)</a>', url)

    @admin.display(description="voided")
    def voided(self, obj: Hand) -> str:
        if obj.voided_at is None:
            return "-"
        tx = LedgerTransaction.objects.filter(idempotency_key=void_key(obj.pk)).first()
        reversal = f" (reversal #{tx.pk})" if tx else ""
        return f"{to_the_second(obj.voided_at)}: {obj.void_reason}{reversal}"

    last_event = seconds_of("last_event_at", "last event at")
    ended = seconds_of("ended_at", "ended at")
    settled = seconds_of("settled_at", "settled at")
    created = seconds_of("created_at", "created at")

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


# --------------------------------------------------------------------------- integrity flags
# The review queue (docs/audit.md "The review queue"): the open flags by default, each
# with its numbers, its evidence hands linked to the replay viewer, and its history; staff clear
# a flag, freeze its players or ban them (a reason asked each time), or queue a scan.


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


# Tables among friends: read-only lists for staff looking into a complaint.


@admin.register(Challenge)
class ChallengeAdmin(ReadOnlyAdmin):
    list_display = ("id", "challenger", "challenged", "room", "stake", "status", "expires_at")
    list_filter = ("status",)
    search_fields = ("challenger__username", "challenged__username")
    list_select_related = ("challenger", "challenged")


@admin.register(Block)
class BlockAdmin(ReadOnlyAdmin):
    list_display = ("id", "blocker", "blocked", "created_at")
    search_fields = ("blocker__username", "blocked__username")
    list_select_related = ("blocker", "blocked")


# ------------------------------------------------------------------ arenas

TOURNAMENT_TERMS = TOURNAMENT_EDITABLE  # the terms staff set, and change before the start


class TournamentAdminForm(forms.ModelForm):
    """The arena's terms, checked by the service's own rules (400-style messages on the form)."""

    class Meta:
        model = Tournament
        fields = TOURNAMENT_TERMS

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        terms = {f: data.get(f) for f in TOURNAMENT_TERMS}
        try:
            tournament_terms_check(terms, now=timezone.now())
        except DomainError as exc:
            raise forms.ValidationError(exc.detail()) from exc
        return data


class TournamentEntryInline(admin.TabularInline):
    model = TournamentEntry
    fields = ("user", "fee", "score", "hands", "wins", "active", "rank", "prize")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Tournament)
class TournamentAdmin(HistoryContextAdmin):
    """Arenas: staff schedule one, edit its terms until it starts, and cancel it (the fees'
    holds released before the start, the pool refunded after it). Everything else — the
    start, the tables, the scores, the payout — is the arena's clock's
    (games.services.tournaments)."""

    form = TournamentAdminForm
    list_display = ("id", "name", "room", "stake", "entry_fee", "starts_at", "ends_at", "status")
    list_filter = ("status", "room")
    search_fields = ("name",)
    inlines = (TournamentEntryInline,)
    actions = ("cancel",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        fields: tuple[str, ...] = ("status", "started_at", "finished_at", "cancelled_at")
        if obj is not None and (
            obj.status != Tournament.Status.SCHEDULED or timezone.now() >= obj.starts_at
        ):
            fields += TOURNAMENT_TERMS
        return fields

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Tournament, form: Any, change: bool) -> None:
        terms = {f: form.cleaned_data[f] for f in TOURNAMENT_TERMS if f in form.cleaned_data}
        if "room" in terms:
            terms["room"] = terms["room"].slug
        if change:
            saved = tournament_edit(tournament_id=obj.pk, staff=request.user, **terms)
        else:
            saved = tournament_create(staff=request.user, **terms)
        obj.pk = saved.pk
        obj._state.adding = False

    @admin.action(description="Cancel tournaments (release or refund the entry fees)")
    def cancel(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> HttpResponse | None:
        def cancel_one(tournament: Tournament, reason: str) -> None:
            tournament_cancel(tournament_id=tournament.pk, reason=reason, staff=request.user)

        return reason_action(
            self,
            request,
            list(queryset.order_by("pk")),
            title="Cancel tournaments",
            explanation=(
                "Before its start each entry fee's hold is released; after it the pool is "
                "refunded to the entrants by one ledger transaction (tournament:<id>:refund). "
                "Hands being played at its tables are played to their end as ordinary hands."
            ),
            verb="Cancel",
            do=cancel_one,
        )


from games import season_admin  # noqa: E402,F401 - the seasons' pages
