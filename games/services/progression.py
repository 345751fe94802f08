"""Experience and levels (RULES.md §11): the XP each player earns from a settled hand, and the
level that follows from XP.

XP per hand (awarded once, by ``hand_settle`` in the settlement's transaction):

* ù with gà (the win's declaration scored gà points): +10; any other ù: +3;
* hòa or a loss: +1;
* fined (đền): −1 (never below 0 XP) — the seat paid a penalty of its own: đền làng, xướng sai,
  ù láo / ù báo, 4-11, or a báo seat paying for the village. A fine outweighs the win.

The level follows from XP by the table of ``accounts.selectors.xp_for_level``.
"""

from __future__ import annotations

from django.utils import timezone

from accounts.models import User
from accounts.selectors import level_for_xp
from games.models import Hand
from games.rules.results import HandResult

XP_U_WITH_GA, XP_U, XP_PLAYED, XP_FINED = 10, 3, 1, -1
# Transfer reasons (games.rules.payments) by which a seat pays for its own fault.
FINE_REASONS = frozenset(
    {"den_lang", "xuong_sai", "bao_xuong_sai", "bao_den_lang", "u_lao", "four_eleven"}
)


def hand_fined_seats(result: HandResult) -> set[int]:
    """The seats that paid a penalty of their own in this hand's points settlement."""
    return {t.payer for t in result.transfers if t.reason in FINE_REASONS}


def win_scored_ga(result: HandResult) -> bool:
    """Whether the win's declaration scored gà (``declaration.declared_score.ga`` > 0)."""
    return result.declaration is not None and result.declaration.declared_score.ga > 0


def hand_xp(result: HandResult, n_seats: int) -> list[int]:
    """The XP each seat (in play order) earns from an ended hand with this result."""
    fined = hand_fined_seats(result)
    winner = result.winner
    out = []
    for seat in range(n_seats):
        if seat in fined:
            out.append(XP_FINED)
        elif seat == winner:
            out.append(XP_U_WITH_GA if win_scored_ga(result) else XP_U)
        else:
            out.append(XP_PLAYED)
    return out


def hand_award_xp(*, hand: Hand) -> list[int]:
    """Add the hand's XP to its players and move their levels along. Called once per hand by
    ``hand_settle`` inside its transaction, after the booking (guarded by ``settled_at``).
    Locks the players' user rows in primary-key order (after the ledger accounts). A practice
    table's hand awards nothing (``hand_settle`` does not call it; this guards any other
    caller)."""
    if hand.table.practice:
        return [0] * hand.n_seats
    seats = hand.seat_list()
    deltas = hand_xp(hand.outcome_result(), hand.n_seats)
    by_user = {s.user_id: d for s, d in zip(seats, deltas, strict=True)}
    now = timezone.now()
    users = User.objects.select_for_update(no_key=True).filter(pk__in=list(by_user)).order_by("pk")
    changed = []
    for user in users:
        user.xp = max(user.xp + by_user[user.pk], 0)
        user.level = level_for_xp(user.xp)
        user.updated_at = now
        changed.append(user)
    User.objects.bulk_update(changed, ["xp", "level", "updated_at"])
    return deltas
