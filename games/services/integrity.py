"""Writes of the integrity signals: the scan of a window into flags, and staff's review of a
flag (clear, freeze, ban), each recorded as an append-only ``IntegrityAction``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.services import signup_address_digest, user_ban
from core.errors import Conflict, InvalidInput, NotFound
from games.integrity.signals import compute
from games.models import IntegrityAction, IntegrityFlag
from games.selectors.integrity import player_addresses, window_hands

DEFAULT_WINDOW = dt.timedelta(days=7)
OPENED, CLEAR, FREEZE, BAN = "opened", "clear", "freeze", "ban"
ACTIONS = {
    CLEAR: IntegrityFlag.Status.CLEARED,
    FREEZE: IntegrityFlag.Status.FROZEN,
    BAN: IntegrityFlag.Status.BANNED,
}


def integrity_thresholds() -> dict[str, float]:
    """The default thresholds with the settings' overrides (``CHAN_INTEGRITY_THRESHOLDS``)."""
    from games.integrity.signals import THRESHOLDS

    return {**THRESHOLDS, **getattr(settings, "CHAN_INTEGRITY_THRESHOLDS", {})}


def integrity_scan(
    *,
    window_end: dt.datetime | None = None,
    window: dt.timedelta = DEFAULT_WINDOW,
    thresholds: Mapping[str, float] | None = None,
) -> list[IntegrityFlag]:
    """Compute every signal over the hands that ended in ``[window_end − window, window_end)``
    and open a flag for each statistic past its threshold. Safe to run twice: a flag is unique
    per signal, players and window end (the second run finds it)."""
    end = window_end or timezone.now()
    start = end - window
    facts = list(window_hands(start=start, end=end))
    players = {p for f in facts for p in f.players}
    signups, logins = player_addresses(players, since=start)
    addresses = {p: {signup} for p, signup in signups.items()}
    for p, seen in logins.items():
        addresses.setdefault(p, set()).update(signup_address_digest(a) for a in seen)
    flags, rates = compute(
        facts,
        addresses=addresses,
        thresholds={**integrity_thresholds(), **(thresholds or {})},
    )
    out = []
    for flag in flags:
        with transaction.atomic():
            partner = flag.players[1] if len(flag.players) > 1 else None
            row, created = IntegrityFlag.objects.get_or_create(
                signal=flag.signal,
                player_id=flag.players[0],
                partner_id=partner,
                window_end=end,
                defaults={
                    "window_start": start,
                    "statistic": flag.statistic,
                    "threshold": flag.threshold,
                    "detail": {**flag.detail, **{f"population_{k}": v for k, v in rates.items()}},
                    "hand_ids": flag.hands,
                },
            )
            if created:
                IntegrityAction.objects.create(flag=row, action=OPENED, status=row.status)
        out.append(row)
    return out


def integrity_flag_review(*, flag_id: int, action: str, staff: Any, notes: str = "") -> Any:
    """Staff's verdict on a flag: ``clear`` it, ``freeze`` its players (they cannot sit; holds
    kept) or ``ban`` them (``accounts.services.user_ban``). Recorded in the flag's history.
    A reviewed flag can be reviewed again (a freeze later cleared or turned into a ban)."""
    if action not in ACTIONS:
        raise InvalidInput(_("Unknown review action."), code="integrity_action_unknown")
    with transaction.atomic():
        flag = IntegrityFlag.objects.select_for_update(no_key=True).filter(pk=flag_id).first()
        if flag is None:
            raise NotFound(_("No such integrity flag."))
        status = ACTIONS[action]
        if flag.status == status:
            raise Conflict(
                _("The flag is already %(status)s."), code="integrity_flag_unchanged", status=status
            )
        flag.status = status
        flag.reviewer = staff
        if notes:
            flag.notes = f"{flag.notes}\n{notes}".strip()
        flag.save(update_fields=["status", "reviewer", "notes", "updated_at"])
        IntegrityAction.objects.create(
            flag=flag, action=action, status=status, staff=staff, notes=notes
        )
        if action == BAN:
            reason = notes or f"integrity flag {flag.pk} ({flag.signal})"
            for player_id in (flag.player_id, flag.partner_id):
                if player_id is not None and player_id != staff.pk:
                    user_ban(user_id=player_id, staff=staff, reason=reason)
    return flag


def integrity_scan_request(*, window_hours: float = DEFAULT_WINDOW.total_seconds() / 3600) -> None:
    """Queue the scan now (the admin's "Scan now"): the nightly task, sent once this commits."""
    from games.tasks import integrity_scan_due

    transaction.on_commit(lambda: integrity_scan_due.delay(window_hours=window_hours), robust=True)
