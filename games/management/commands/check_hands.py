"""Replay every hand's log and check what the store holds against it (RULES.md §13)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from games.audit import hands_checked
from games.hand_store import hand_store_problems
from games.models import Hand


class Command(BaseCommand):
    help = (
        "Replay every hand (or --hand ID): its seq is its log's, its log holds (seed, hash "
        "chain, every move legal), its ended result the replay's. Exit 1 on any problem."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--hand", type=int, action="append", help="Only this hand id.")

    def handle(self, *args: Any, **options: Any) -> None:
        hands = Hand.objects.prefetch_related("hand_seats")
        if options["hand"]:
            hands = hands.filter(pk__in=options["hand"])
        bad = 0
        checked = 0
        for hand, problems in hands_checked(hands, hand_store_problems):
            checked += 1
            for problem in problems:
                bad += 1
                self.stderr.write(f"hand {hand.pk}: {problem}")
        if bad:
            raise CommandError(f"{bad} problem(s) in {checked} hand(s).")
        self.stdout.write(f"{checked} hand(s) checked: every one is the replay of its log.")
