"""Checks an auditor runs over the games' money (``manage.py ledger_check`` runs them with the
ledger's own): every ended hand's settlement booked once and equal to what its replayed log
says at its frozen stake and room (a voided hand: reversed exactly; a practice hand:
nothing booked), and every pot equal to its players' shares.

A hand whose record stops being true (``hand_store.hand_log_break``: a payload, a seed or the
order of its events changed behind the database's guards) is reported at its first bad seq and
checked no further, and the check goes on to the next hand. ``manage.py check_hands`` and
``audit_hands`` walk the hands through :func:`hands_checked`, a batch at a time in one snapshot."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from django.db.models import QuerySet

from accounts.ledger_archive import ledger_entries_of
from accounts.ledger_selectors import LedgerProblem
from accounts.models import LedgerTransaction
from core.db_router import snapshot_reads
from games.hand_store import hand_log_break, hand_replay, hand_seats_load
from games.ledger_keys import settlement_key, void_key
from games.models import Hand, HandEvent, HandSeat
from games.rules.records import SETTLED
from games.rules.results import HandResult
from games.rules.seating import booking_unbound
from games.rules.verify import Discrepancy
from games.rules.views import result_of
from games.selectors.seat_holds import check_holds_have_seats, check_seats_have_holds
from games.selectors.tournaments import check_tournaments
from games.services.pot import pot_problems
from games.services.quan_booking import hand_quan, practice_quan
from games.services.seasons import season_prize_problems
from games.services.settlement_parties import (
    hand_seats_bound,
    settlement_accounts,
    settlement_party_of,
)


def hands_checked(
    hands: QuerySet[Hand], check: Callable[[Hand], list[str]], *, batch: int = 100
) -> Iterator[tuple[Hand, list[str]]]:
    """Each hand of ``hands`` in id order with what ``check`` finds wrong with it, a batch of
    hands read and checked in one snapshot (``core.db_router.snapshot_reads``): a hand's row, its
    log and its ledger rows as of one moment, so a move committed during the scan is in none of
    them. The snapshot ends before the batch's verdicts are handed out."""
    after = 0
    while True:
        with snapshot_reads():
            chunk = list(hands.filter(pk__gt=after).order_by("pk")[:batch])
            found = [(hand, check(hand)) for hand in chunk]
        yield from found
        if len(chunk) < batch:
            return
        after = chunk[-1].pk


def check_hand_settlements() -> list[LedgerProblem]:
    """Every ended hand is settled, once, as its replay says (RULES.md §10, §13); a hand whose
    log does not replay is reported where it breaks."""
    problems: list[LedgerProblem] = []
    hands = Hand.objects.filter(status=Hand.Status.ENDED).select_related("room", "table")
    for hand in hands.order_by("pk").iterator(chunk_size=200):
        hand_seats_load(hand)
        broken = hand_log_break(hand)
        found = [f"hand {hand.pk}: {broken}"] if broken else hand_settlement_problems(hand)
        problems.extend(LedgerProblem("hand_settlement", d) for d in found)
    return problems


def hand_settlement_problems(hand: Hand) -> list[str]:
    """Why an ended hand's booked settlement is not what its replay says (empty when it is).
    Its log must replay: the callers ask ``hand_log_break`` first."""
    if hand.settled_at is None or hand.quan is None:
        return [f"hand {hand.pk} ended but its settlement is not booked"]
    if hand.table.practice:
        return _practice_hand_problems(hand)
    hand_seats_load(hand)
    replayed_json = result_of(hand_replay(hand))  # an archived month's log from the archive
    replayed = HandResult.from_dict(replayed_json)
    if replayed.settlement != hand.outcome_result().settlement:
        return [f"hand {hand.pk}: the stored points settlement is not the replay's"]
    if json.loads(json.dumps(replayed_json)) != hand.result:
        return [f"hand {hand.pk}: the stored result is not the replay's"]
    quan = hand_quan(hand, balances=hand.quan["balances"], pot_balance=hand.quan["pot_before"])
    expected = {**quan.to_dict(), "balances": hand.quan["balances"]}
    expected["pot_before"] = hand.quan["pot_before"]
    if expected != hand.quan:
        return [f"hand {hand.pk}: the booked Quan are not the replay's × stake with fees"]
    unbound = hand_binding_problems(hand)
    if unbound:
        return [f"hand {hand.pk}: {problem}" for problem in unbound]
    booked = LedgerTransaction.objects.filter(idempotency_key=settlement_key(hand.pk))
    entries = {e.account_id: e.amount for tx in booked for e in ledger_entries_of(tx)}
    wanted = _wanted_entries(hand, quan.legs())
    if len(booked) > 1 or entries != wanted:
        return [f"hand {hand.pk}: its ledger entries {entries} are not {wanted}"]
    if hand.voided_at is not None:  # voided: the settlement stays, and its reversal negates it
        reversal = LedgerTransaction.objects.filter(idempotency_key=void_key(hand.pk))
        undone = {e.account_id: e.amount for tx in reversal for e in ledger_entries_of(tx)}
        if undone != {account: -amount for account, amount in wanted.items()}:
            return [f"hand {hand.pk} is void but its reversal {undone} does not negate {wanted}"]
    return []


def hand_binding_problems(hand: Hand) -> list[str]:
    """Where the hand's seats stop being the ones its deal bound (``games.rules.seating``), as
    ``discrepancy at seq N: why``: a seat row naming another player than the deal (seq 0), a
    settlement entry on an account the deal bound to no seat (at the ``settled`` record).
    Nothing to hold a hand dealt before the binding to (its parties are its seat rows). Its log
    must hold: the callers ask ``hand_log_break`` first."""
    bound = hand_seats_bound(hand)
    if bound is None:
        return []
    # the rows as stored now (not as this process remembers them: hand_seats_load)
    rows = dict(HandSeat.objects.filter(hand=hand).values_list("position", "user_id"))
    for binding in bound:
        if rows.get(binding.position) != binding.player:
            why = (
                f"seat {binding.position}'s row names user {rows.get(binding.position)}, "
                f"the deal bound user {binding.player}"
            )
            return [str(Discrepancy(0, why))]
    if hand.settled_at is None or hand.table.practice:
        return []
    party_of = settlement_party_of(hand)
    booked = LedgerTransaction.objects.filter(idempotency_key=settlement_key(hand.pk))
    entries = [
        {"account": e.account_id, "party": party_of.get(e.account_id), "amount": e.amount}
        for tx in booked
        for e in ledger_entries_of(tx)
    ]
    unbound = booking_unbound(bound, entries)
    if unbound is None:
        return []
    settled = HandEvent.objects.of_hand(hand).filter(type=SETTLED).values_list("seq", flat=True)
    return [str(Discrepancy(settled.first() or hand.seq, unbound))]


def _practice_hand_problems(hand: Hand) -> list[str]:
    """A practice hand books nothing: its record is all zeros and no ledger entry names it."""
    if hand.quan != practice_quan(hand.n_seats):
        return [f"hand {hand.pk}: a practice hand's Quan record is not all zeros"]
    if LedgerTransaction.objects.filter(hand=hand).exists():
        return [f"hand {hand.pk}: a practice hand has ledger transactions"]
    return []


def _wanted_entries(hand: Hand, legs: dict[int | str, int]) -> dict[int, int]:
    accounts = settlement_accounts(hand)
    wanted: dict[int, int] = {}
    for party, amount in legs.items():
        if amount:
            account = accounts[party]
            assert account is not None
            wanted[account.pk] = wanted.get(account.pk, 0) + amount
    return wanted


def check_pots() -> list[LedgerProblem]:
    """Every table's pot holds exactly its players' shares."""
    return [LedgerProblem("pot_shares", detail) for detail in pot_problems()]


def check_season_prizes() -> list[LedgerProblem]:
    """Every season board's prizes are what its frozen standings and the schedule it was
    paid by say, booked once as its one transaction; every prize transaction belongs to a
    paid board; the prize account holds what was funded less what was paid."""
    return [LedgerProblem("season_prizes", detail) for detail in season_prize_problems()]


GAMES_LEDGER_CHECKS = [
    check_hand_settlements,
    check_pots,
    check_holds_have_seats,
    check_tournaments,
    check_season_prizes,
    check_seats_have_holds,
]
