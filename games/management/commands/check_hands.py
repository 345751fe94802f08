"""Replay every hand's log and check what the store holds against it (RULES.md §13)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from games.audit import hand_binding_problems, hands_checked
from games.hand_store import hand_store_problems
from games.models import Hand
from games.services.settlement_parties import hand_seats_bound


def hand_checked(hand: Hand) -> list[str]:
    """What the store holds against the replay of the hand's log, then (the log holding) its
    seats and settlement against the seats its deal bound."""
    return hand_store_problems(hand) or hand_binding_problems(hand)


class Command(BaseCommand):
    help = (
        "Replay every hand (or --hand ID): its seq is its log's, its log holds (seed, hash "
        "chain, every move legal), its ended result the replay's, its seats and settlement "
        "the ones its deal bound. Exit 1 on any problem."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--hand", type=int, action="append", help="Only this hand id.")

    def handle(self, *args: Any, **options: Any) -> None:
        hands = Hand.objects.select_related("table").prefetch_related("hand_seats")
        if options["hand"]:
            hands = hands.filter(pk__in=options["hand"])
        bad = checked = unbound = 0
        for hand, problems in hands_checked(hands, hand_checked):
            checked += 1
            if not problems and hand_seats_bound(hand) is None:
                unbound += 1
            for problem in problems:
                bad += 1
                self.stderr.write(f"hand {hand.pk}: {problem}")
        if bad:
            raise CommandError(f"{bad} problem(s) in {checked} hand(s).")
        self.stdout.write(f"{checked} hand(s) checked: every one is the replay of its log.")
        if unbound:
            self.stdout.write(
                f"{unbound} of them dealt before the deal bound its seats: "
                "their parties are their seat rows."
            )
