"""Play whole hands through the services with bots, settle them in Quan, and check the books:
the reconciliation run of ``.ci/run`` and of anyone doubting the ledger.

    DEBUG=1 .venv/bin/python manage.py play_bots --hands 1000 --seed 1

Bots sit at a few tables (stakes and rooms vary, gà góp on at some) — with
``--tables-per-player K``, each bot at K tables at once (K × 3 tables, 12 bots, each table's
four mixed from the twelve), so that its seats' holds stand side by side — play every
hand to its end
through ``hand_move_apply`` (the API's own path, minus HTTP), and each hand is settled by
``hand_settle``. At the end it prints the totals and fails unless Σ wallets + house + pots equals
the Quan issued, exactly, every wallet's ``held`` is the Σ of its open holds (and within its
balance), and ``ledger_check`` finds nothing.
"""

from __future__ import annotations

import random
import time
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.db.models import Sum

from accounts.hold_selectors import open_holds
from accounts.ledger import welcome_grant_book
from accounts.models import LedgerAccount, User
from games.hand_store import hand_state
from games.models import Hand, Table
from games.rules.bots import make_bot
from games.services.hands import hand_lock, hand_move_apply
from games.services.quan_booking import hand_settle
from games.services.tables import seat_join, seat_ready, table_create

TABLES = (
    {"stake": 10, "room": "nen-dat", "ruleset": None},
    {
        "stake": 20,
        "room": "nen-dat",
        "ruleset": {"preset": "thapthanh", "overrides": {"ga_gop": True}},
    },
    {"stake": 5, "room": "nen-dat", "ruleset": {"preset": "vinagames", "overrides": {}}},
)


def hand_play_out(hand_id: int, bot: Any) -> None:
    """Play the hand to its end, ``bot`` choosing every seat's moves, one transaction a move."""
    for _ in range(1000):
        with transaction.atomic():
            hand = hand_lock(hand_id)
            assert hand is not None
            if hand.status == Hand.Status.ENDED:
                return
            state = hand_state(hand)
            move = bot.choose(state, state.turn)
            hand_move_apply(hand=hand, seat=state.turn, move_json=move.to_dict())
    raise CommandError(f"hand {hand_id} did not end")


class Command(BaseCommand):
    help = "Play hands with bots through the services, settle them, reconcile the ledger."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--hands", type=int, default=50)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--bot", default="heuristic", choices=["heuristic", "random"])
        parser.add_argument(
            "--tables-per-player",
            type=int,
            default=1,
            help="Each bot sits at this many tables at once (default 1).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        rng = random.Random(options["seed"])
        run = f"{options['seed']}-{int(time.time())}"
        per_player = options["tables_per_player"]
        if per_player < 1:
            raise CommandError("--tables-per-player is at least 1")
        if per_player == 1:
            tables = [self._table(run, i, spec) for i, spec in enumerate(TABLES)]
        else:
            tables = self._shared_tables(run, per_player)
        started = time.monotonic()
        played = 0
        while played < options["hands"]:
            table, players = tables[played % len(tables)]
            hand = self._deal(table, players)
            if hand is None:
                raise CommandError(f"table {table.pk} could not deal (players out of Quan?)")
            hand_play_out(hand.pk, make_bot(options["bot"], rng))
            hand_settle(hand_id=hand.pk)
            played += 1
        elapsed = time.monotonic() - started
        self._reconcile(played, elapsed)

    def _table(self, run: str, index: int, spec: dict[str, Any]) -> tuple[Table, list[User]]:
        players = []
        for seat in range(4):
            user = User.objects.create_user(username=f"bot-{run}-{index}-{seat}")
            welcome_grant_book(user=user)
            players.append(user)
        table = table_create(
            owner=players[0],
            name=f"bots {run} #{index}",
            stake=spec["stake"],
            room=spec["room"],
            ruleset=spec["ruleset"],
        )
        for user in players[1:]:
            seat_join(table_id=table.pk, user=user)
        return table, players

    def _shared_tables(self, run: str, per_player: int) -> list[tuple[Table, list[User]]]:
        """``per_player`` × len(TABLES) tables over 4 × len(TABLES) bots: round ``k`` seats the
        bots ``4j + s + k`` (mod the pool) at its table ``j``, so each bot sits at one table of
        each round and the foursomes differ from round to round."""
        pool = []
        for i in range(4 * len(TABLES)):
            user = User.objects.create_user(username=f"bot-{run}-shared-{i}")
            welcome_grant_book(user=user)
            pool.append(user)
        tables = []
        for k in range(per_player):
            for j, spec in enumerate(TABLES):
                players = [pool[(4 * j + s + k) % len(pool)] for s in range(4)]
                table = table_create(
                    owner=players[0],
                    name=f"bots {run} #{k}.{j}",
                    stake=spec["stake"],
                    room=spec["room"],
                    ruleset=spec["ruleset"],
                )
                for user in players[1:]:
                    seat_join(table_id=table.pk, user=user)
                tables.append((table, players))
        return tables

    def _deal(self, table: Table, players: list[User]) -> Hand | None:
        hand = None
        for user in players:
            if table.seats.filter(player=user).exists():
                hand = seat_ready(table_id=table.pk, user=user) or hand
        return hand

    def _reconcile(self, played: int, elapsed: float) -> None:
        def total(kind: str) -> int:
            rows = LedgerAccount.objects.filter(kind=kind)
            return rows.aggregate(s=Sum("balance"))["s"] or 0

        wallets, house, pots = total("wallet"), total("house"), total("pot")
        issued = -total("issuance")
        self.stdout.write(
            f"{played} hands in {elapsed:.1f} s; wallets {wallets} + house {house} + pots {pots}"
            f" = {wallets + house + pots}; issued {issued}"
        )
        if wallets + house + pots != issued:
            raise CommandError("Quan were created or destroyed")
        total_held = LedgerAccount.objects.aggregate(s=Sum("held"))["s"] or 0
        holds = open_holds()
        in_holds = sum(amount for _, _, amount in holds)
        self.stdout.write(f"held {total_held} in {len(holds)} open holds (Σ {in_holds})")
        if total_held != in_holds:
            raise CommandError("what the wallets hold is not the sum of their holds")
        call_command("ledger_check", stdout=self.stdout)
        call_command("check_hands", stdout=self.stdout)
