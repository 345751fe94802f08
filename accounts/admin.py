"""Admin for users, tokens and the Quan ledger. Token hashes are never shown, and neither they nor
password hashes can be used in a changelist filter (Django's UserAdmin already refuses
``?password…`` lookups). Ledger rows are read-only: the one way staff move Quan is the "Adjust
Quan balance" action, which books an issuance transaction through ``balance_adjust``. Players
are banned and unbanned with a reason through ``user_ban`` / ``user_unban``.

Every change made through the admin is recorded: django-pghistory's triggers keep each tracked
row's old and new values ("Events", with the staff member and the page as context, set by
:class:`HistoryContextAdmin`), and Django's own admin log is listed read-only ("Log entries")."""

import ipaddress
import re
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pghistory
from django import forms
from django.contrib import admin, messages
from django.contrib.admin.models import LogEntry
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.db import connection
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.template.response import TemplateResponse
from oauth2_provider.admin import ApplicationAdmin
from oauth2_provider.forms import ApplicationForm
from oauth2_provider.models import get_application_model

from accounts.hold_selectors import wallet_funds, wallet_holds
from accounts.ledger import MAX_ADJUSTMENT, balance_adjust
from accounts.ledger_selectors import wallet_balance
from accounts.limit_admin import LIMIT_INLINES
from accounts.models import (
    ApiToken,
    LedgerAccount,
    LedgerEntry,
    LedgerHold,
    LedgerTransaction,
    User,
)
from accounts.redirect_uris import redirect_uri_allowed
from accounts.services import signup_address_digest, token_revoke, user_ban, user_unban
from core.errors import DomainError

# --------------------------------------------------------------------------- history


class HistoryContextAdmin(admin.ModelAdmin):
    """Admin writes run inside ``pghistory.context(user=…, url=…)``: the history rows the
    database triggers write then name the staff member and the page. (Only the admin's POSTs:
    a site-wide middleware would prefix every API statement with the context.)"""

    def _in_history_context(self, request: HttpRequest, view: Callable[..., Any], *a: Any) -> Any:
        if request.method != "POST":
            return view(request, *a)
        # pghistory's context prefixes every statement with its own: several statements in
        # one, which the server cannot bind (core.db_backend: client-side binding for them).
        with (
            connection.client_side_binding(),
            pghistory.context(user=request.user.pk, url=request.path),
        ):
            return view(request, *a)

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        view = super().changeform_view
        return self._in_history_context(request, lambda r: view(r, *args, **kwargs))

    def changelist_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        view = super().changelist_view
        return self._in_history_context(request, lambda r: view(r, *args, **kwargs))

    def delete_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        view = super().delete_view
        return self._in_history_context(request, lambda r: view(r, *args, **kwargs))


# --------------------------------------------------------------------------- actions with a reason


class ReasonForm(forms.Form):
    reason = forms.CharField(max_length=150)


_REASON_PAGE = engines["django"].from_string("""{% extends "admin/base_site.html" %}
{% block content %}
<p>{{ explanation }}</p>
<ul>{% for obj in objects %}<li>{{ obj }}</li>{% endfor %}</ul>
<form method="post">{% csrf_token %}
{{ form.as_p }}
{% for pk in selected %}<input type="hidden" name="_selected_action" value="{{ pk }}">{% endfor %}
<input type="hidden" name="action" value="{{ action }}">
<input type="submit" name="apply" value="{{ verb }}">
</form>
{% endblock %}""")


def reason_action(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    objects: Sequence[Any],
    *,
    title: str,
    explanation: str,
    verb: str,
    do: Callable[[Any, str], Any],
) -> HttpResponse | None:
    """An admin action in two steps: a page asking for a reason; on ``apply``, ``do(obj,
    reason)`` for each object (a service), its domain errors shown as messages and each success
    written to Django's admin log."""
    form = ReasonForm(request.POST if "apply" in request.POST else None)
    if form.is_bound and form.is_valid():
        reason = form.cleaned_data["reason"]
        done = 0
        for obj in objects:
            try:
                do(obj, reason)
            except DomainError as exc:
                modeladmin.message_user(request, f"{obj}: {exc.detail()}", messages.ERROR)
                continue
            modeladmin.log_change(request, obj, f"{verb}: {reason}")
            done += 1
        if done:
            modeladmin.message_user(request, f"{verb}: {done} done.")
        return None
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": title,
        "explanation": explanation,
        "form": form if form.is_bound else ReasonForm(),
        "objects": objects,
        "selected": request.POST.getlist("_selected_action"),
        "action": request.POST.get("action", ""),
        "verb": verb,
        "opts": modeladmin.model._meta,
    }
    return TemplateResponse(request, _REASON_PAGE, context)


# --------------------------------------------------------------------------- adjust balance


class AdjustBalanceForm(forms.Form):
    """Amount (signed whole Quan, not 0, at most 10^12 either way) and reason of an adjustment;
    ``nonce`` keys the booking, so submitting the same form twice books it once."""

    amount = forms.CharField(
        max_length=32, help_text="Whole Quan: positive credits the wallet, negative debits it."
    )
    reason = forms.CharField(max_length=200)
    nonce = forms.UUIDField(widget=forms.HiddenInput)

    def clean_amount(self) -> int:
        raw = self.cleaned_data["amount"].strip().replace("_", "").replace(",", "")
        if not re.fullmatch(r"[+-]?[0-9]+", raw):
            raise forms.ValidationError("The amount must be a whole number of Quan.")
        amount = int(raw)
        if amount == 0:
            raise forms.ValidationError("An adjustment of 0 Quan changes nothing.")
        if abs(amount) > MAX_ADJUSTMENT:
            raise forms.ValidationError(f"An adjustment is at most {MAX_ADJUSTMENT:,} Quan.")
        return amount


_ADJUST_PAGE = engines["django"].from_string("""{% extends "admin/base_site.html" %}
{% block content %}
<p>Adjust the Quan balance of: {% for user in users %}<b>{{ user }}</b> ({{ user.balance }})
{% if not forloop.last %}, {% endif %}{% endfor %}. Each adjustment is an issuance transaction
of the ledger; it cannot be edited or deleted afterwards.</p>
<form method="post">{% csrf_token %}
{{ form.as_p }}
{% for pk in selected %}<input type="hidden" name="_selected_action" value="{{ pk }}">{% endfor %}
<input type="hidden" name="action" value="{{ action }}">
<input type="submit" name="apply" value="Book adjustment">
</form>
{% endblock %}""")


def _adjust_balance(
    modeladmin: admin.ModelAdmin, request: HttpRequest, users: list[User], selected: list[str]
) -> HttpResponse | None:
    """The action's two steps: show the form; on ``apply`` book one adjustment per user."""
    form = AdjustBalanceForm(request.POST if "apply" in request.POST else None)
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        booked = 0
        for user in users:
            try:
                balance_adjust(
                    user=user,
                    amount=data["amount"],
                    reason=data["reason"],
                    staff=request.user,
                    key=str(data["nonce"]),
                )
                booked += 1
            except DomainError as exc:
                modeladmin.message_user(request, f"{user}: {exc.detail()}", messages.ERROR)
        if booked:
            modeladmin.message_user(request, f"Booked {booked} adjustment(s) of {data['amount']}.")
        return None
    if not form.is_bound:
        form = AdjustBalanceForm(initial={"nonce": uuid.uuid4()})
    for user in users:
        user.balance = wallet_balance(user)  # type: ignore[attr-defined]
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": "Adjust Quan balance",
        "form": form,
        "users": users,
        "selected": selected,
        "action": request.POST.get("action", "adjust_balance"),
        "opts": modeladmin.model._meta,
    }
    return TemplateResponse(request, _ADJUST_PAGE, context)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Ledger rows: listed and shown, never added, changed or deleted here."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(LogEntry)
class LogEntryAdmin(ReadOnlyAdmin):
    """Django's own admin log, read-only."""

    list_display = ("action_time", "user", "content_type", "object_repr", "action_flag", "change")
    list_filter = ("action_flag", "content_type")
    search_fields = ("object_repr", "change_message", "user__username")
    list_select_related = ("user", "content_type")
    fields = (
        "action_time",
        "user",
        "content_type",
        "object_id",
        "object_repr",
        "action_flag",
        "change_message",
    )
    readonly_fields = fields

    @admin.display(description="change")
    def change(self, obj: LogEntry) -> str:
        return obj.get_change_message()


@admin.register(User)
class UserAdmin(HistoryContextAdmin, DjangoUserAdmin):
    inlines = LIMIT_INLINES  # the limits the player set itself, read-only (limit_admin.py)
    fieldsets = (
        *DjangoUserAdmin.fieldsets,
        (
            "Game profile",
            {
                "fields": (
                    "display_name",
                    "xp",
                    "level",
                    "vip",
                    "vip_points",
                    "badge",
                    "quan_balance",
                    "quan_held",
                    "quan_available",
                    "quan_holds",
                )
            },
        ),
        ("Ban", {"fields": ("banned_at", "ban_reason")}),
        ("Record", {"fields": ("created_at", "updated_at", "signup_address")}),
    )
    add_fieldsets = (
        *DjangoUserAdmin.add_fieldsets,
        ("Game profile", {"fields": ("display_name",)}),
    )
    readonly_fields = (
        "created_at",
        "updated_at",
        "quan_balance",
        "quan_held",
        "quan_available",
        "quan_holds",
        "banned_at",
        "ban_reason",
        "signup_address",
    )
    list_display = (
        "username",
        "display_name",
        "level",
        "xp",
        "vip",
        "vip_points",
        "badge",
        "is_staff",
        "is_active",
        "banned_at",
    )
    list_filter = (
        *DjangoUserAdmin.list_filter,
        "badge",
        ("banned_at", admin.EmptyFieldListFilter),
    )
    search_fields = ("username", "display_name", "email", "=signup_address")
    actions = ("adjust_balance", "ban", "unban")

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[User], search_term: str
    ) -> tuple[QuerySet[User], bool]:
        """A typed client address finds the accounts signed up from it (the column holds its
        HMAC only: ``signup_address_digest``)."""
        found, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        try:
            ipaddress.ip_address(term)
        except ValueError:
            return found, may_have_duplicates
        signed_up = queryset.filter(signup_address=signup_address_digest(term))
        return found | signed_up, may_have_duplicates

    @admin.display(description="Quan balance")
    def quan_balance(self, obj: User) -> int:
        return wallet_balance(obj) if obj.pk else 0

    @admin.display(description="Quan held (seats)")
    def quan_held(self, obj: User) -> int:
        return wallet_funds(obj).held if obj.pk else 0

    @admin.display(description="Quan available")
    def quan_available(self, obj: User) -> int:
        return wallet_funds(obj).available if obj.pk else 0

    @admin.display(description="Holds (per table)")
    def quan_holds(self, obj: User) -> str:
        holds = wallet_holds(obj) if obj.pk else []
        return ", ".join(f"table {h.table_id}: {h.amount}" for h in holds) or "—"

    @admin.action(description="Adjust Quan balance (ledger adjustment)", permissions=("change",))
    def adjust_balance(self, request: HttpRequest, queryset: QuerySet[User]) -> HttpResponse | None:
        selected = request.POST.getlist("_selected_action")
        return _adjust_balance(self, request, list(queryset.order_by("pk")), selected)

    @admin.action(description="Ban players (no login, no token, no seat)", permissions=("change",))
    def ban(self, request: HttpRequest, queryset: QuerySet[User]) -> HttpResponse | None:
        return reason_action(
            self,
            request,
            list(queryset.order_by("pk")),
            title="Ban players",
            explanation="A banned player cannot sign in, use its API tokens or sit at a table, "
            "and is stood up at the tables it sits at (its gà góp share refunded; mid-hand the "
            "server plays its seat to the end of the hand); its hands, ledger and history "
            "stay as they are.",
            verb="Ban",
            do=lambda user, reason: user_ban(user_id=user.pk, staff=request.user, reason=reason),
        )

    @admin.action(description="Lift the ban of players", permissions=("change",))
    def unban(self, request: HttpRequest, queryset: QuerySet[User]) -> HttpResponse | None:
        return reason_action(
            self,
            request,
            list(queryset.order_by("pk")),
            title="Lift bans",
            explanation="The players may sign in, use their tokens and sit again.",
            verb="Unban",
            do=lambda user, reason: user_unban(user_id=user.pk, staff=request.user, reason=reason),
        )


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Read-only: tokens are issued through the API; staff may only revoke them."""

    list_display = (
        "id",
        "user",
        "name",
        "key_prefix",
        "scopes",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    search_fields = ("user__username", "key_prefix", "name")
    fields = ("user", "name", "key_prefix", "scopes", "created_at", "last_used_at", "revoked_at")
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


@admin.register(LedgerAccount)
class LedgerAccountAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "user", "table", "balance", "held", "created_at")
    list_filter = ("kind",)
    search_fields = ("user__username",)
    list_select_related = ("user", "table")
    fields = ("kind", "user", "table", "balance", "held", "created_at")
    readonly_fields = fields
    actions = ("adjust_balance",)

    def has_adjust_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("accounts.change_user")

    @admin.action(description="Adjust Quan balance (wallets only)", permissions=("adjust",))
    def adjust_balance(
        self, request: HttpRequest, queryset: QuerySet[LedgerAccount]
    ) -> HttpResponse | None:
        others = queryset.exclude(kind=LedgerAccount.Kind.WALLET)
        if others.exists():
            self.message_user(
                request,
                "Only wallets can be adjusted: the house, pots and issuance move only with "
                "the transactions of the game.",
                messages.ERROR,
            )
            return None
        users = [account.user for account in queryset.select_related("user").order_by("pk")]
        selected = request.POST.getlist("_selected_action")
        return _adjust_balance(self, request, users, selected)


class LedgerEntryInline(admin.TabularInline):
    model = LedgerEntry
    fields = ("account", "amount", "balance_after")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(LedgerTransaction)
class LedgerTransactionAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "idempotency_key", "user", "hand", "table", "memo", "created_at")
    list_filter = ("kind",)
    search_fields = ("idempotency_key", "user__username", "memo", "hash")
    list_select_related = ("user",)
    # prev_hash and hash: an auditor follows the chain from an export's transactions to a head
    # (docs/audit.md)
    fields = (
        "kind",
        "idempotency_key",
        "memo",
        "user",
        "hand",
        "table",
        "created_at",
        "prev_hash",
        "hash",
    )
    readonly_fields = fields
    inlines = (LedgerEntryInline,)


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "transaction", "account", "amount", "balance_after")
    search_fields = ("transaction__idempotency_key", "account__user__username")
    list_select_related = ("transaction", "account", "account__user")
    fields = ("transaction", "account", "amount", "balance_after")
    readonly_fields = fields


@admin.register(LedgerHold)
class LedgerHoldAdmin(ReadOnlyAdmin):
    """Hold events: what each seat's hold became, and the wallet's total after."""

    list_display = ("id", "account", "table", "kind", "amount", "delta", "held_after", "reason")
    list_filter = ("kind",)
    search_fields = ("account__user__username", "hash")
    list_select_related = ("account", "account__user", "table")
    fields = (
        "account",
        "table",
        "hand",
        "kind",
        "amount",
        "delta",
        "held_after",
        "reason",
        "created_at",
        "prev_hash",
        "hash",
    )
    readonly_fields = fields


# --------------------------------------------------------------------------- OAuth apps


class OAuthApplicationForm(ApplicationForm):
    """django-oauth-toolkit's form, with this server's redirect rule: ``https``, or plain
    ``http`` to a loopback address only (a native app's, RFC 8252 §7.3), as authorization
    enforces it (accounts/redirect_uris.py)."""

    def clean_redirect_uris(self) -> str:
        uris = self.cleaned_data.get("redirect_uris", "")
        if refused := [uri for uri in uris.split() if not redirect_uri_allowed(uri)]:
            raise forms.ValidationError(
                f"Not allowed: {' '.join(refused)}. A redirect URI is https, or plain http to a "
                "loopback address (127.0.0.1 or [::1], any port); not to localhost."
            )
        return uris


class OAuthApplicationAdmin(ApplicationAdmin):
    form = OAuthApplicationForm


admin.site.unregister(get_application_model())
admin.site.register(get_application_model(), OAuthApplicationAdmin)
