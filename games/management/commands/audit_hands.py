"""Verify stored hands as an auditor would verify their exports (docs/audit.md):

    DEBUG=1 .venv/bin/python manage.py audit_hands [--since DATE] [--hand ID …]

Each ended hand's export (``games.export``) goes through the offline verifier
(``games.rules.verify``: seed, shuffle, replay of its log, result, Quan, ledger entries by
party and on the accounts its deal bound), and its ledger rows through ``ledger_check``'s
per-hand check (booked once, to the right accounts). A hand whose record does not replay
(``hand_store.hand_log_break``) is listed at its first bad seq and the audit goes on. Every mismatch is listed on stderr; the command exits 1 if
there is any. Each batch of hands is read in one snapshot (``games.audit.hands_checked``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from accounts.record_keys import record_keys
from games.audit import hand_settlement_problems, hands_checked
from games.export import hand_export
from games.hand_store import hand_log_break, hand_mac_problems, hand_seats_load
from games.models import Hand
from games.rules.verify import mac_discrepancies, verify_export
from games.services.settlement_parties import hand_seats_bound


def moment(text: str) -> dt.datetime:
    """A date (midnight in ``TIME_ZONE``) or an ISO 8601 datetime (naive: in ``TIME_ZONE``)."""
    when = parse_datetime(text)
    if when is None:
        day = parse_date(text)
        if day is None:
            raise ValueError(f'not a date: "{text}"')
        when = dt.datetime.combine(day, dt.time())
    return when if timezone.is_aware(when) else timezone.make_aware(when)


def hand_audit_problems(hand: Hand) -> list[str]:
    """What is wrong with a stored ended hand: where its record stops being true (its export
    could not be made past it), else the first discrepancy of its export, then its ledger rows'
    problems; and every event and its settlement transaction that the record key does not vouch
    for."""
    hand_seats_load(hand)
    unvouched = hand_mac_problems(hand)  # every event the record key does not vouch for
    broken = hand_log_break(hand)
    if broken is not None:
        return [str(broken), *unvouched]
    problems = []
    doc = hand_export(hand)
    found = verify_export(doc)
    if found is not None:
        problems.append(str(found))
    problems.extend(unvouched)
    # its settlement transaction's MAC too (the events' are listed already)
    for unkeyed in mac_discrepancies(record_keys(), doc["events"], ledger=doc["ledger"]):
        if str(unkeyed) not in unvouched:
            problems.append(str(unkeyed))
    problems.extend(hand_settlement_problems(hand))
    return problems


class Command(BaseCommand):
    help = (
        "Verify ended hands (or --hand ID, or those ended --since DATE) as their exports: seed, "
        "shuffle, replay, result, Quan and ledger rows. Exit 1 on any mismatch."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--since", type=moment, help="Hands ended at or after this date or datetime."
        )
        parser.add_argument("--hand", type=int, action="append", help="Only this hand id.")

    def handle(self, *args: Any, **options: Any) -> None:
        hands = Hand.objects.filter(status=Hand.Status.ENDED).select_related("table", "room")
        if options["since"] is not None:
            hands = hands.filter(ended_at__gte=options["since"])
        wanted = set(options["hand"] or ())
        if wanted:
            hands = hands.filter(pk__in=wanted)
        bad = checked = unbound = 0
        for hand, problems in hands_checked(hands, hand_audit_problems):
            checked += 1
            if not problems and hand_seats_bound(hand) is None:
                unbound += 1
            wanted.discard(hand.pk)
            for problem in problems:
                bad += 1
                self.stderr.write(f"hand {hand.pk}: {problem}")
        for missing in sorted(wanted):
            bad += 1
            self.stderr.write(f"hand {missing}: not among the ended hands asked for")
        if bad:
            raise CommandError(f"{bad} mismatch(es) in {checked} hand(s).")
        self.stdout.write(f"{checked} hand(s) verified: seed, replay, result, Quan and ledger.")
        if unbound:
            self.stdout.write(
                f"{unbound} of them dealt before the deal bound its seats: "
                "their parties are their seat rows."
            )
