"""Run in a process of its own (``manage.py shell -c``) by tests/core/test_db_router.py, with
``DATABASE_URL`` on a private primary and ``DATABASE_REPLICA_URL`` on its replica: calls the reads
that may lag and some that decide a move or money, and prints, as one JSON line, which database
served each (by the queries each connection ran) and what the profile said."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from django.db import connections, transaction

from accounts.ledger_selectors import house_balance
from accounts.models import User
from accounts.selectors import user_balance
from core.db_router import REPLICA, replica_lag
from games.export import hand_export_for_user
from games.hand_store import hand_state
from games.models import Hand
from games.selectors.hands import hand_get
from games.selectors.history import hand_history
from games.selectors.leaderboards import leaderboard
from games.selectors.players import player_by_username, player_profile


@contextmanager
def served_by() -> Iterator[set[str]]:
    """The aliases that ran a query inside (the replica's lag check left out)."""
    seen: set[str] = set()

    def recorder(alias: str) -> Callable[..., Any]:
        def wrapper(execute: Callable[..., Any], sql: str, *args: Any) -> Any:
            if "pg_last_wal_replay_lsn" not in sql:
                seen.add("replica" if alias == REPLICA else "primary")
            return execute(sql, *args)

        return wrapper

    with ExitStack() as stack:
        for alias in ("default", REPLICA):
            stack.enter_context(connections[alias].execute_wrapper(recorder(alias)))
        yield seen


def main() -> None:
    """The probe of the first seat of the first ended hand (on the primary)."""
    hand_id = Hand.objects.filter(status=Hand.Status.ENDED).earliest("pk").pk
    user = User.objects.filter(hand_seats__hand_id=hand_id).order_by("hand_seats__position")[0]
    username = user.username
    out: dict[str, Any] = {"lag": replica_lag(), "username": username}

    def probe(name: str, read: Callable[[], Any]) -> Any:
        with served_by() as seen:
            value = read()
        out[name] = sorted(seen)
        return value

    # The reads that may lag.
    player = player_by_username(username)
    profile = probe("profile", lambda: player_profile(user=player))
    out["display_name"] = profile["display_name"]
    out["hands_played"] = profile["hands_played"]
    probe("history", lambda: hand_history(user=user))
    probe("leaderboard", lambda: leaderboard(board="xp"))
    hand = hand_get(hand_id=hand_id)
    doc = probe("export", lambda: hand_export_for_user(hand=hand, user=user))
    out["export_events"] = len(doc["events"])
    out["export_seq"] = hand.seq
    # What decides a move or money: the hand's row and state, the wallets, the house.
    probe("move_reads", lambda: (hand_get(hand_id=hand_id), hand_state(hand)))
    probe("money_reads", lambda: (user_balance(user), house_balance()))

    # A marked read called inside a transaction (as a service would) reads the primary.
    def in_service() -> None:
        with transaction.atomic():
            hand_history(user=user)
            player_profile(user=user)

    probe("in_transaction", in_service)
    print(json.dumps(out))
