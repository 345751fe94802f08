"""Pairing an arena's free players into tables: a pure function, no Django.

Who sits first: when the free players cannot all sit (an odd number at 2-seat tables), the
one left out is the one whose turn it is least: the players who waited at the last pairings
while others sat come first, then those who played the fewest hands (as lichess arenas do),
then the best score, then the earlier entry. So the player left out changes from one pairing
to the next, and nobody waits two pairings in a row while others play (unless it is blocked
with every other free player).

How they sit: those who sit are sorted by score, best first (ties: the earlier entry), and cut
into as few tables as the table size allows, as even as they can be and never a table of one
(5 free players at 4-seat tables make 3 + 2, not 4 + 1). Each table takes the next players in
that order, so its players are near in score; a player blocked with someone already at the
table is passed over for the next one (it sits at a later table), and the sizes of the tables
still to open are worked out again for those left. A player blocked with every other, or left
alone, waits for the next pairing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

MIN_TABLE, MAX_TABLE = 2, 4


@dataclass(frozen=True, slots=True)
class FreePlayer:
    """A player waiting for a table: its id, its arena score, the order it entered in, the
    arena hands it has played and the pairings in a row it waited at while others sat."""

    user_id: int
    score: int
    order: int = 0
    hands: int = 0
    waited: int = 0


def table_sizes(count: int, size: int) -> list[int]:
    """How ``count`` free players sit at tables of at most ``size`` (2–4): as few tables as
    possible, the sizes as even as possible, none below 2 (``[]`` for fewer than 2)."""
    if not MIN_TABLE <= size <= MAX_TABLE:
        raise ValueError(f"a table has 2 to 4 seats, not {size}")
    if count < MIN_TABLE:
        return []
    tables = -(-count // size)  # ceil
    base, extra = divmod(count, tables)
    return [base + 1] * extra + [base] * (tables - extra)


def arena_pairing(
    players: Sequence[FreePlayer],
    *,
    size: int,
    blocked: Collection[frozenset[int]] = (),
) -> list[tuple[int, ...]]:
    """The tables to open now: tuples of user ids, the players whose turn it is seated first
    and each table's players near in score (see the module docstring). ``blocked``: pairs of
    user ids never seated together."""
    by_turn = sorted(players, key=lambda p: (-p.waited, p.hands, -p.score, p.order, p.user_id))
    seats = sum(n for n in table_sizes(len(by_turn), size) if n >= MIN_TABLE)
    tables = _tables_by_score(by_turn[:seats], size, blocked)
    seated = {user_id for table in tables for user_id in table}
    # Those a block left alone try again with those whose turn had not come.
    rest = [p for p in by_turn if p.user_id not in seated]
    if len(rest) >= MIN_TABLE:
        tables += _tables_by_score(rest, size, blocked)
    return tables


def _tables_by_score(
    players: Sequence[FreePlayer], size: int, blocked: Collection[frozenset[int]]
) -> list[tuple[int, ...]]:
    """``players`` cut into tables near in score, blocked pairs apart (the module docstring)."""
    waiting = sorted(players, key=lambda p: (-p.score, p.order, p.user_id))
    tables: list[tuple[int, ...]] = []
    while len(waiting) >= MIN_TABLE:
        wanted = table_sizes(len(waiting), size)[0]  # the sizes of what is left, first table
        table = [waiting[0]]
        for player in waiting[1:]:
            if len(table) == wanted:
                break
            if not any(frozenset((player.user_id, p.user_id)) in blocked for p in table):
                table.append(player)
        if len(table) < MIN_TABLE:
            waiting.pop(0)  # blocked with every other free player: it waits
            continue
        tables.append(tuple(p.user_id for p in table))
        waiting = [p for p in waiting if p not in table]
    return tables
