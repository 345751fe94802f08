"""The immutable state of one hand (RULES.md §2–5) and the small values it is made of."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from games.rules.cards import Counts
from games.rules.results import Declaration, JsonValue, Outcome, Settlement
from games.rules.ruleset import DEFAULT_PRESET, PRESETS, Ruleset

# What ``apply`` reports it did: the move itself, then its public effects (JSON objects).
Event = dict[str, JsonValue]


class Phase(StrEnum):
    DEALER_START = "dealer_start"  # the dealer holds 20: ù (Thiên ù) or discard
    OFFER = "offer"  # the turn seat faces the top card of its cửa trên: eat, chíu, draw
    AFTER_DRAW = "after_draw"  # the turn seat's door shows its own draw: ù, eat, chíu, pass
    DISCARD = "discard"  # the turn seat ate or chíu'd and must discard one card
    TRA_CUA = "tra_cua"  # a seat chíu'd out of turn and must return a card (trả cửa)
    DECLARE = "declare"  # the winner declares its cước (xướng)
    ENDED = "ended"


class Mode(StrEnum):
    BASIC = "basic"
    ADVANCED = "advanced"


# Where an exposed card came from.
SRC_DISCARD = "discard"
SRC_STOCK = "stock"
SRC_RETURNED = "returned"


@dataclass(frozen=True, slots=True)
class Exposed:
    """The card on top of a door that is on offer: its kind, door, origin and who put it there.

    ``barred`` is the seat that may only chíu ù this card (RULES.md §4, seed 004 Lưu ý 5): a
    returned card that replaced that seat's own discard or own trả cửa into its own door.
    """

    card: int
    door: int
    source: str
    by: int
    barred: int | None = None


@dataclass(frozen=True, slots=True)
class MatGroup:
    """An eaten pair (``chan``/``ca``) or a chíu (four of a kind) on a seat's mat."""

    kind: str
    cards: tuple[int, ...]
    taken: int
    source: str
    from_door: int

    @property
    def chan_count(self) -> int:
        return 2 if self.kind == "chiu" else (1 if self.kind == "chan" else 0)


@dataclass(frozen=True, slots=True)
class Declined:
    """A card offered to a seat that it did not take, with what the seat held of that rank."""

    card: int
    held_same: int  # copies of the card's kind in hand then
    held_other_suits: int  # cards of the same rank, other suits, in hand then


@dataclass(frozen=True, slots=True)
class Nhai:
    """Gà góp (§10.10): ``seat`` drew from the stock the very card it had just let go by at its
    cửa trên; every other seat pays ``points`` into the pot."""

    seat: int
    card: int
    points: int


@dataclass(frozen=True, slots=True)
class MissedWin:
    """A bỏ ù (RULES.md §4, §9): the seat let a stock card it could have won on go by.

    ``seq`` is the seq of the move that let the card go (the hand's ``n_moves`` once that move is
    applied; its event carries a ``bo_u`` effect); ``replaced_by`` is the seat whose win on the
    card replaced that move (§4: the drawer's move other than ``u``), or None when play went on.
    It changes no payment by itself (in advanced mode a later win of the seat is judged ``bo_u``).
    """

    card: int
    seq: int
    replaced_by: int | None = None


@dataclass(frozen=True, slots=True)
class Fault:
    slug: str
    visible: bool
    move_index: int
    detail: str = ""


@dataclass(frozen=True, slots=True)
class SeatState:
    hand: Counts
    dealt: Counts
    mat: tuple[MatGroup, ...] = ()
    auto_u: bool = True
    auto_chiu: bool = True
    declined: tuple[Declined, ...] = ()
    discarded: tuple[int, ...] = ()  # kinds discarded, trả cửa included, in order
    last_taken: int | None = None  # the card most recently taken (for auto-play)
    missed_wins: tuple[MissedWin, ...] = ()  # stock cards it could have won on and let go (bỏ ù)
    bao: bool = False  # báo: ngồi im after a visible fault (advanced mode)
    faults: tuple[Fault, ...] = ()

    @property
    def missed_win(self) -> bool:
        """Whether the seat has let a win go by (bỏ ù) in this hand."""
        return bool(self.missed_wins)

    @property
    def mat_chan(self) -> int:
        return sum(g.chan_count for g in self.mat)

    @property
    def mat_cards(self) -> int:
        return sum(len(g.cards) for g in self.mat)


@dataclass(frozen=True, slots=True)
class WinInfo:
    """How a hand was won. ``source`` uses the calculator's words (own_draw, other_draw, chiu, …)."""

    seat: int
    card: int | None
    source: str
    by_chiu: bool
    first_draw: bool
    bach_thu: bool
    from_door: int | None = None
    replaced: int | None = None  # the drawer whose non-winning move this win replaced


@dataclass(frozen=True, slots=True)
class HandConfig:
    """What a hand needs to know about its table."""

    n_seats: int = 4
    mode: Mode = Mode.BASIC
    ruleset: Ruleset = PRESETS[DEFAULT_PRESET]
    previous_winner: int | None = None  # seat that won the previous hand (for Thông)
    prefs: tuple[tuple[bool, bool], ...] = ()  # (auto_u, auto_chiu) per seat at the deal


@dataclass(frozen=True, slots=True)
class HandState:
    config: HandConfig
    dealer: int
    seats: tuple[SeatState, ...]
    doors: tuple[tuple[int, ...], ...]
    stock: tuple[int, ...]
    phase: Phase
    turn: int
    stock_drawn: int = 0
    exposed: Exposed | None = None
    pending_u: int | None = None  # a seat that wins at once unless the drawer wins first
    tra_cua_door: int | None = None
    tra_cua_barred: int | None = None  # Exposed.barred of the card the trả cửa will return
    resume: Phase | None = None  # the phase play resumes in after a trả cửa
    resume_turn: int | None = None  # and whose turn it is then
    win: WinInfo | None = None
    declaration: Declaration | None = None
    outcome: Outcome | None = None
    settlement: Settlement | None = None  # computed once, when the hand ends
    n_moves: int = 0
    nhai: tuple[Nhai, ...] = ()  # gà góp tables only
    nhai_streak: int = 0  # consecutive nhái up to now (the next pays one more)
    events: tuple[Event, ...] = ()  # what the last apply did, public

    @property
    def n_seats(self) -> int:
        return self.config.n_seats

    @property
    def ended(self) -> bool:
        return self.phase is Phase.ENDED

    def actor(self) -> int | None:
        """The seat expected to move next, or None when the hand is over."""
        if self.phase is Phase.ENDED:
            return None
        return self.turn
