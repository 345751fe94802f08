"""Practice tables: the server's bots — their users, their seats at a practice table,
and how one chooses its move from what its own seat may know.

A bot is an ``accounts.User`` with ``is_bot`` (inactive, no password, no wallet): a small pool
``bot~1`` … ``bot~3`` shared by every practice table (a user sits once per table, so the pool
covers the three seats a table can give to bots). Its moves go through ``hand_move_apply`` like a
player's (``games.services.hands.hand_clock_tick`` calls it when a bot's deadline comes).
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from django.contrib.auth.hashers import make_password
from django.utils import timezone

from accounts.models import User
from games.models import MAX_BOTS, Seat, Table
from games.rules import HandState, legal_moves
from games.rules.bots import HeuristicBot
from games.rules.cards import N_KINDS, Counts
from games.rules.engine import can_win
from games.rules.faults import faults_of
from games.rules.moves import Move, U

BOT_USERNAME = "bot~{n}"  # "~" is refused by the registration's username validator


def practice_bots(count: int) -> list[User]:
    """The first ``count`` bots of the pool, created on first use."""
    bots = []
    for n in range(1, count + 1):
        bot, _created = User.objects.get_or_create(
            username=BOT_USERNAME.format(n=n),
            defaults={
                "is_bot": True,
                "is_active": False,
                "display_name": f"Bot {n}",
                "password": make_password(None),
            },
        )
        if not bot.is_bot:
            raise AssertionError(f"user {bot.username} is not a bot")
        bots.append(bot)
    return bots


def practice_seat_bots(*, table: Table, count: int) -> list[Seat]:
    """Seat ``count`` bots at the practice table's lowest free seats, ready for good (a bot
    seat is always ready). The caller holds the table row (it has just created it)."""
    if count > MAX_BOTS:
        raise AssertionError("too many bots")
    taken = set(Seat.objects.filter(table=table).values_list("number", flat=True))
    free = [n for n in range(table.max_seats) if n not in taken]
    now = timezone.now()
    return [
        Seat.objects.create(
            table=table, player=bot, number=number, ready=True, ready_at=now, auto_u=True
        )
        for bot, number in zip(practice_bots(count), free, strict=False)
    ]


def _placeholder(n_cards: int) -> Counts:
    """``n_cards`` cards that tell nothing (four of each kind from the first), for a hand the
    seat may count but not see."""
    counts = [0] * N_KINDS
    for k in range(N_KINDS):
        counts[k] = min(4, n_cards)
        n_cards -= counts[k]
    return tuple(counts)


def seat_only_state(state: HandState, seat: int) -> HandState:
    """``state`` as ``seat`` may know it: the other seats' hands, dealt cards, hidden faults and
    declined cards replaced by placeholders of the same size, the stock's order hidden (its size
    kept) and another seat's pending ù dropped. ``view_for(seat_only_state(s, seat), seat)`` is
    ``view_for(s, seat)`` while the hand is live."""
    seats = tuple(
        st
        if i == seat
        else replace(
            st,
            hand=_placeholder(sum(st.hand)),
            dealt=_placeholder(sum(st.dealt)),
            declined=(),
            faults=tuple(f for f in st.faults if f.visible),
            missed_wins=(),
            last_taken=None,
        )
        for i, st in enumerate(state.seats)
    )
    return replace(
        state,
        seats=seats,
        stock=(0,) * len(state.stock),
        pending_u=state.pending_u if state.pending_u == seat else None,
    )


def bot_choose(state: HandState, seat: int, rng: random.Random) -> Move:
    """The heuristic bot's move for ``seat`` (whose turn it is), chosen from
    :func:`seat_only_state` alone: its legal moves, ù only with a real win, a clean move over a
    faulty one (advanced mode offers both)."""
    known = seat_only_state(state, seat)
    moves = legal_moves(known, seat)
    if not can_win(known, seat):
        moves = [m for m in moves if not isinstance(m, U)] or moves
    moves = [m for m in moves if not faults_of(known, m)] or moves
    return HeuristicBot(rng).pick(moves, known.seats[seat].hand)


def bot_rng(hand: Any) -> random.Random:
    """The bot's dice for the hand's next move: reproducible from the hand and its seq (a bot
    breaks ties between equally bad discards with them, nothing more)."""
    return random.Random(f"practice:{hand.pk}:{hand.seq}")
