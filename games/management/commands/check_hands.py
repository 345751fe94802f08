"""Replay every hand's log and compare it with the state cached on its row (RULES.md §13)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from games.models import Hand
from games.selectors import hand_cache_problems


class Command(BaseCommand):
    help = "Replay every hand (or --hand ID) and check its cached state equals the replay."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--hand", type=int, action="append", help="Only this hand id.")

    def handle(self, *args: Any, **options: Any) -> None:
        hands = Hand.objects.order_by("id")
        if options["hand"]:
            hands = hands.filter(pk__in=options["hand"])
        bad = 0
        checked = 0
        for hand in hands.iterator(chunk_size=100):
            checked += 1
            for problem in hand_cache_problems(hand):
                bad += 1
                self.stderr.write(f"hand {hand.pk}: {problem}")
        if bad:
            raise CommandError(f"{bad} problem(s) in {checked} hand(s).")
        self.stdout.write(f"{checked} hand(s) checked: every cache equals its replay.")
