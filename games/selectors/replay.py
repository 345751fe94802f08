"""What the replay viewer of a dispute shows (admin, auditors only; docs/audit.md "The replay
viewer"): every event of a hand with the state after it, the mover's legal moves before it and
what it chose, the faults made at that step (hidden ones too), the declared and the true cước
with their points, the winning card, the hand's Quan and its ledger entries, and every time in
the server's zone (Asia/Ho_Chi_Minh) with its UTC offset.

Read-only: one query for the events, one for the seats, one for the ledger entries; nothing is
written. Every seat's hand is face up (``full_view``): the caller must be an auditor.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone

from accounts.models import LedgerEntry
from games.hand_store import hand_initial_state, hand_log_replay, hand_seats_load
from games.ledger_keys import settlement_key, void_key
from games.models import Hand
from games.rules import HandState
from games.rules.engine import legal_moves
from games.rules.records import is_record
from games.rules.ruleset import CUOC_SLUGS, Ruleset
from games.rules.views import full_view

EVENT_FIELDS = ("seq", "type", "actor_seat", "system", "payload", "created_at")


def zoned(moment: dt.datetime | None) -> dict[str, str] | None:
    """A moment in the server's zone to the second, with the zone's name and UTC offset, and in
    UTC (ISO 8601): ``{"local": "2026-12-01 23:15:50", "zone": "Asia/Ho_Chi_Minh",
    "offset": "UTC+07:00", "utc": "2026-12-01T16:15:50Z"}``."""
    if moment is None:
        return None
    local = timezone.localtime(moment)
    offset = local.strftime("%z")  # +0700
    return {
        "local": local.strftime("%Y-%m-%d %H:%M:%S"),
        "zone": str(timezone.get_current_timezone()),
        "offset": f"UTC{offset[:3]}:{offset[3:]}",
        "utc": moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _same_move(legal: dict[str, Any], chosen: dict[str, Any]) -> bool:
    """Whether a legal move (``Move.to_dict()``) is the move made (its payload)."""
    keys = ("type", "card", "with")
    return all(legal.get(k) == chosen.get(k) for k in keys if k in legal or k in chosen)


def _legal_at(state: HandState | None, seat: int | None, move: dict[str, Any]) -> dict[str, Any]:
    """The mover's legal moves in the state before its move, and whether its move was one."""
    if state is None or seat is None or move.get("type") in ("prefs", "set_prefs"):
        return {"moves": [], "chosen_legal": None}
    moves = [m.to_dict() for m in legal_moves(state, seat)]
    moves = [{k: v for k, v in m.items() if k != "seat"} for m in moves]
    chosen = any(_same_move(m, move) for m in moves) if moves else None
    return {"moves": moves, "chosen_legal": chosen}


def _declaration(hand: Hand) -> dict[str, Any] | None:
    """The winner's judged declaration, read through the hand's typed result."""
    declaration = hand.outcome_result().declaration
    return None if declaration is None else dict(declaration.to_dict())


def cuoc_table(ruleset: Ruleset, declaration: dict[str, Any] | None) -> dict[str, Any] | None:
    """The declared and the true cước side by side, a row per cước either names or a reading
    as right as the true cước names (in the rules' order) with its điểm and dịch under the
    hand's ruleset, both scores, the verdict and those equally right readings (RULES.md §6:
    named hands tied in điểm and dịch). A row matches when the declared count is the count in
    the reading the declaration is (the true cước unless it is one of the others)."""
    if not declaration:
        return None
    declared = declaration["cuoc"]
    true = declaration["true_cuoc"]
    others = declaration.get("equally_right", [])
    judged = next((r for r in others if r == declared), true)
    rows = []
    for slug in CUOC_SLUGS:
        if not declared.get(slug) and not any(r.get(slug) for r in (true, *others)):
            continue
        rule = ruleset.cuoc[slug]
        rows.append(
            {
                "slug": slug,
                "declared": declared.get(slug, 0),
                "true": true.get(slug, 0),
                "diem": rule.diem,
                "dich": rule.dich,
                "enabled": rule.enabled,
                "match": declared.get(slug, 0) == judged.get(slug, 0),
            }
        )
    return {
        "rows": rows,
        "declared_score": declaration["declared_score"],
        "true_score": declaration["true_score"],
        "verdict": declaration["verdict"],
        "auto": declaration["auto"],
        "equally_right": others,
    }


def hand_ledger_entries(hand: Hand) -> list[dict[str, Any]]:
    """The entries of the hand's settlement (``hand:<id>:settle``) and of its reversal if it was
    voided, in booking order: the transaction, the account (a player's wallet by username, the
    house, a table's pot) and the signed amount in Quan."""
    keys = {settlement_key(hand.pk): "settlement", void_key(hand.pk): "void"}
    entries = (
        LedgerEntry.objects.filter(transaction__idempotency_key__in=list(keys))
        .select_related("transaction", "account__user")
        .order_by("transaction_id", "id")
    )
    out = []
    for e in entries:
        account = e.account
        out.append(
            {
                "transaction": e.transaction_id,
                "key": e.transaction.idempotency_key,
                "purpose": keys[e.transaction.idempotency_key],
                "kind": account.kind,
                "account": account.user.username if account.user_id else account.kind,
                "table": account.table_id,
                "amount": e.amount,
                "at": zoned(e.transaction.created_at),
            }
        )
    return out


def hand_replay_steps(hand: Hand) -> dict[str, Any]:
    """What the replay viewer steps through: for each event of the log (seq 0, the deal, on),
    who made it, the move, its time (zoned), the mover's legal moves before it and whether the
    move was one of them, the auditor's view of the state after it (``full_view``: every hand
    face up, mats, doors, stock) and the faults that move made (hidden ones too); then the
    cước table, the winning card, the booked Quan and the ledger entries. A record
    (``settled``, ``voided``) is a step with the record as its move and the final state.

    The states are ``reduce(apply, …)`` over the log, as ``hand_replay(hand, upto=seq)``
    gives each of them, built in one pass (one query for the events)."""
    seats = hand_seats_load(hand)
    players = [s.user.username for s in seats]
    steps: list[dict[str, Any]] = []
    before_faults: list[int] = [0] * hand.n_seats
    before: HandState | None = hand_initial_state(hand)
    for event, state in hand_log_replay(hand, fields=EVENT_FIELDS):  # a record changes no state
        view = full_view(state)
        new_faults = []
        for seat in view["seats"]:
            faults = seat["faults"]
            fresh = faults[before_faults[seat["seat"]] :]
            new_faults += [{"seat": seat["seat"], **f} for f in fresh]
            before_faults[seat["seat"]] = len(faults)
        record = is_record(event["type"])
        move = event["payload"] if event["seq"] > 0 else {"type": "deal"}
        legal = (
            _legal_at(before, event["actor_seat"], move)
            if event["seq"] > 0 and not record
            else {"moves": [], "chosen_legal": None}
        )
        steps.append(
            {
                "seq": event["seq"],
                "type": event["type"],
                "actor": event["actor_seat"],
                "system": event["system"],
                "move": move,
                "at": zoned(event["created_at"]),
                "legal": legal,
                "view": view,
                "new_faults": new_faults,
            }
        )
        before = state
    last = steps[-1]["view"] if steps else {}
    win = last.get("win")
    return {
        "hand": hand.pk,
        "table": hand.table_id,
        "number": hand.number,
        "stake": hand.stake,
        "room": hand.room_id,
        "status": hand.status,
        "voided": zoned(hand.voided_at),
        "void_reason": hand.void_reason,
        "ended": zoned(hand.ended_at),
        "players": players,
        "steps": steps,
        "cuoc": cuoc_table(hand.frozen_ruleset(), _declaration(hand)),
        "win": win,
        "quan": hand.quan,
        "ledger": hand_ledger_entries(hand),
    }
