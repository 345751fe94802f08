"""Who sits where, as the hand's record says: the deal event binds each seat (in play order) to
its player and the ledger account its settlement moves (``payload.seats``), inside the log's
hash chain, so that a seat row changed after the deal cannot redirect the settlement unseen.

Deals logged before the binding have none (:func:`seats_bound` returns None): their parties are
read from the hand's seat rows, as they were.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BINDING_KEY = "seats"


class BindingError(ValueError):
    """The deal's binding is not one entry per seat, in play order, with a player each."""


@dataclass(frozen=True, slots=True)
class BoundSeat:
    """A seat bound at the deal: its position (play order), its player's user id and the ledger
    account its settlement moves (None at a practice table: nothing is booked there)."""

    position: int
    player: int
    account: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"position": self.position, "player": self.player, "account": self.account}


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def seats_bound(payload: Any, n_seats: int) -> tuple[BoundSeat, ...] | None:
    """The seats the deal event's ``payload`` binds, or None when it binds none (a deal logged
    before the binding). Raises :class:`BindingError` when the binding is malformed."""
    if not isinstance(payload, Mapping) or BINDING_KEY not in payload:
        return None
    seats = payload[BINDING_KEY]
    if not isinstance(seats, list) or len(seats) != n_seats:
        raise BindingError(f"the deal binds {_count(seats)} seats, the hand has {n_seats}")
    bound = []
    for position, seat in enumerate(seats):
        if not isinstance(seat, Mapping) or seat.get("position") != position:
            raise BindingError(f"the deal's binding lists seat {position} out of play order")
        player: Any = seat.get("player")
        account: Any = seat.get("account")
        if not _whole(player) or not (account is None or _whole(account)):
            raise BindingError(f"the deal binds seat {position} to no player or account")
        bound.append(BoundSeat(position=position, player=player, account=account))
    accounts = [s.account for s in bound if s.account is not None]
    if len(set(accounts)) != len(accounts) or len({s.player for s in bound}) != len(bound):
        raise BindingError("the deal binds two seats to one player or account")
    return tuple(bound)


def _count(seats: Any) -> int | str:
    return len(seats) if isinstance(seats, list) else "no list of"


def booking_unbound(seats: Sequence[BoundSeat], entries: Iterable[Mapping[str, Any]]) -> str | None:
    """Why a settlement's ledger ``entries`` (each ``account``, ``party`` — a seat, ``"pot"``,
    ``"house"`` or None for none of them — and ``amount``) do not go to the accounts the deal
    bound, or None: a seat's entry on another account than its own, a bound account booked as
    another party, or an account no party owns."""
    owner = {s.account: s.position for s in seats if s.account is not None}
    for entry in entries:
        account, party, amount = entry["account"], entry["party"], entry["amount"]
        if _whole(party):
            bound = seats[party].account if 0 <= party < len(seats) else None
            if account != bound:
                return (
                    f"seat {party}'s {amount:+} is booked to account {account}, "
                    f"its deal bound account {bound}"
                )
        elif account in owner:
            return (
                f"account {account}, bound to seat {owner[account]} at the deal, "
                f"is booked {amount:+} as {party!r}"
            )
        elif party is None:
            return f"account {account} is booked {amount:+}, but the deal bound no seat to it"
    return None
