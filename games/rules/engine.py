"""The game flow: ``new_hand``, ``legal_moves`` and ``apply`` (RULES.md §3–5).

``apply`` never mutates: it validates the move, then builds the next state through a small
mutable :class:`_Work` copy, resolving the out-of-turn claims of §4 (ù on a stock card, automatic
chíu and trả cửa) every time a card is exposed. Fault checks (§9) come from ``faults.py``, the
win predicates from ``wins.py``; a hand that ends is settled once (§10), into ``settlement``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from operator import attrgetter
from typing import Any

from games.rules import faults as fault_rules
from games.rules.cards import CC, CODES, COPIES, N_KINDS, can_pair, counts_of, pair_partners
from games.rules.cuoc import true_total, win_facts
from games.rules.deck import deal
from games.rules.declaring import declare
from games.rules.errors import FaultRefused, IllegalMove, InvalidInput, gettext_noop
from games.rules.moves import Chiu, Declare, Discard, Draw, Eat, Move, Pass, SetPrefs, TraCua, U
from games.rules.payments import settle
from games.rules.results import Declaration, Outcome, Result
from games.rules.ruleset import FOUR_ELEVEN_MIN, Ruleset
from games.rules.shape import is_bach_thu, wins_with
from games.rules.state import (
    SRC_DISCARD,
    SRC_RETURNED,
    SRC_STOCK,
    Declined,
    Event,
    Exposed,
    Fault,
    HandConfig,
    HandState,
    MatGroup,
    MissedWin,
    Mode,
    Nhai,
    Phase,
    SeatState,
    WinInfo,
)
from games.rules.wins import chiu_possible, chiu_wins, dealt_wins, only_chiu_u, u_wins

MIN_SEATS, MAX_SEATS = 2, 4


def new_hand(config: HandConfig, deck: Sequence[int], dealer: int) -> HandState:
    """Deal ``deck`` (100 kinds, in order) with ``dealer`` as nhà cái (RULES.md §3)."""
    n = config.n_seats
    if not isinstance(config.ruleset, Ruleset):
        raise InvalidInput("invalid_ruleset", gettext_noop("The hand needs a ruleset."))
    if isinstance(n, bool) or not isinstance(n, int) or not MIN_SEATS <= n <= MAX_SEATS:
        raise InvalidInput(
            "bad_seat_count", gettext_noop("A hand needs 2 to 4 seats, not %(n)s."), n=n
        )
    if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n:
        raise InvalidInput(
            "bad_dealer",
            gettext_noop("Dealer seat %(dealer)s is not at this table."),
            dealer=dealer,
        )
    if config.prefs and len(config.prefs) != n:
        raise InvalidInput(
            "bad_prefs",
            gettext_noop("Give the preferences of all %(n)s seats, not %(given)s."),
            n=n,
            given=len(config.prefs),
        )
    hands, stock = deal(deck, n, dealer)
    prefs = config.prefs or ((True, True),) * n
    seats = tuple(
        SeatState(hand=counts_of(h), dealt=counts_of(h), auto_u=prefs[i][0], auto_chiu=prefs[i][1])
        for i, h in enumerate(hands)
    )
    return HandState(
        config=config,
        dealer=dealer,
        seats=seats,
        doors=((),) * n,
        stock=tuple(stock),
        phase=Phase.DEALER_START,
        turn=dealer,
        events=({"type": "deal", "dealer": dealer, "stock_count": len(stock)},),
    )


# --------------------------------------------------------------------------- legal moves


def legal_moves(state: HandState, seat: int) -> list[Move]:
    """Every move ``seat`` may make now: exactly the moves ``apply`` accepts (faulty ones excluded
    in basic mode). Left out: ``set_prefs`` (any time) and declarations of a chosen cước map; the
    declare phase lists the auto-declaration."""
    if state.phase is Phase.ENDED or seat != state.turn:
        return []
    st = state.seats[seat]
    moves: list[Move] = []
    phase = state.phase
    advanced = _advanced(state)
    if phase is Phase.DECLARE:
        return [Declare(seat, auto=True)]
    if phase is Phase.DEALER_START:
        if advanced or dealt_wins(st):
            moves.append(U(seat))
        moves.extend(Discard(seat, k) for k in range(N_KINDS) if st.hand[k])
    elif phase is Phase.DISCARD:
        moves.extend(Discard(seat, k) for k in range(N_KINDS) if st.hand[k])
    elif phase is Phase.TRA_CUA:
        moves.extend(TraCua(seat, k) for k in range(N_KINDS) if st.hand[k])
    else:
        ex = state.exposed
        assert ex is not None
        c = ex.card
        # Advanced mode accepts every ``u``: one without a win (or by a báo seat) is ù láo.
        if advanced or u_wins(phase, ex, state.n_seats, st, seat):
            moves.append(U(seat))
        if not st.bao:
            own_return = only_chiu_u(ex, seat)
            if chiu_possible(st, c) and (not own_return or chiu_wins(st, c)):
                moves.append(Chiu(seat, c))
            if not own_return and sum(st.hand) >= 2:  # it must keep a card to discard
                moves.extend(Eat(seat, c, k) for k in pair_partners(c) if st.hand[k])
        moves.append(Draw(seat) if phase is Phase.OFFER else Pass(seat))
    if advanced:
        return moves
    return [m for m in moves if not fault_rules.faults_of(state, m)]


def can_win(state: HandState, seat: int) -> bool:
    """Whether ``seat`` holds a real win now (what an honest ``u`` needs)."""
    if seat != state.turn:
        return False
    st = state.seats[seat]
    if state.phase is Phase.DEALER_START:
        return dealt_wins(st)
    return u_wins(state.phase, state.exposed, state.n_seats, st, seat)


def _advanced(state: HandState) -> bool:
    return state.config.mode is Mode.ADVANCED


# --------------------------------------------------------------------------- apply

_STATE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(HandState))
_state_values = attrgetter(*_STATE_FIELDS)
_SEATS, _DOORS, _N_MOVES, _EVENTS = map(
    _STATE_FIELDS.index, ("seats", "doors", "n_moves", "events")
)


class _Work:
    """A mutable scratch copy of a state while one move is applied: one attribute per field of
    :class:`HandState` (copied from the state, frozen back into a new one), seats and doors as
    lists, and the events of this move."""

    seats: list[SeatState]
    doors: list[list[int]]
    stock: tuple[int, ...]
    stock_drawn: int
    phase: Phase
    turn: int
    exposed: Exposed | None
    pending_u: int | None
    tra_cua_door: int | None
    tra_cua_barred: int | None
    resume: Phase | None
    resume_turn: int | None
    win: WinInfo | None
    declaration: Declaration | None
    outcome: Outcome | None
    nhai: tuple[Nhai, ...]
    nhai_streak: int
    events: list[Event]

    def __init__(self, state: HandState) -> None:
        vars(self).update(zip(_STATE_FIELDS, _state_values(state), strict=True))
        self.state = state
        self.seats = list(state.seats)
        self.doors = [list(d) for d in state.doors]
        self.events = []
        self.n = state.n_seats
        self.move_index = state.n_moves

    def seat(self, i: int, **changes: Any) -> None:
        self.seats[i] = replace(self.seats[i], **changes)

    def take_hand(self, i: int, kind: int, n: int = 1) -> None:
        h = list(self.seats[i].hand)
        h[kind] -= n
        self.seat(i, hand=tuple(h))

    def pop_exposed(self) -> int:
        ex = self.exposed
        assert ex is not None
        card = self.doors[ex.door].pop()
        assert card == ex.card
        self.exposed = None
        return card

    def freeze(self) -> HandState:
        values = list(_state_values(self))
        values[_SEATS] = tuple(self.seats)
        values[_DOORS] = tuple(tuple(d) for d in self.doors)
        values[_N_MOVES] = self.move_index + 1
        values[_EVENTS] = tuple(self.events)
        state = HandState(*values)
        if state.phase is Phase.ENDED and state.settlement is None:
            state = replace(state, settlement=settle(state))
        return state


def apply(state: HandState, move: Move) -> HandState:
    """The state after ``move``; raises IllegalMove (or FaultRefused in basic mode) if refused."""
    if isinstance(move, SetPrefs):
        return _apply_prefs(state, move)
    _check_turn(state, move)
    found = fault_rules.faults_of(state, move)
    if found and not _advanced(state):
        raise FaultRefused(found[0].slug, fault_rules.message(found[0].slug))
    w = _Work(state)
    w.events.append(move.to_dict())
    if found:
        _record_faults(w, move.seat, found)
    if state.phase is Phase.OFFER and not isinstance(move, Draw):
        w.nhai_streak = 0  # a turn taken by eating or chíu ends a run of nhái
    handler = _HANDLERS[type(move)]
    handler(w, move)
    return w.freeze()


def _record_faults(w: _Work, seat: int, found: list[Fault]) -> None:
    st = w.seats[seat]
    bao = st.bao or any(f.visible for f in found)
    w.seat(seat, faults=st.faults + tuple(found), bao=bao)
    for f in found:
        if f.visible:
            w.events.append({"type": "fault", "seat": seat, "fault": f.slug, "bao": True})
        else:  # a hidden fault: shown to its seat, to the others only after the end
            w.events.append({"type": "fault", "seat": seat, "fault": f.slug, "hidden": True})
    if bao and not st.bao:
        w.events.append({"type": "bao", "seat": seat})


def _check_live_seat(state: HandState, seat: int) -> None:
    if state.phase is Phase.ENDED:
        raise IllegalMove("hand_over", gettext_noop("The hand is over."))
    if not 0 <= seat < state.n_seats:
        raise IllegalMove("no_such_seat", gettext_noop("There is no seat %(seat)s."), seat=seat)


def _apply_prefs(state: HandState, move: SetPrefs) -> HandState:
    _check_live_seat(state, move.seat)
    w = _Work(state)
    st = w.seats[move.seat]
    w.seat(
        move.seat,
        auto_u=st.auto_u if move.auto_u is None else move.auto_u,
        auto_chiu=st.auto_chiu if move.auto_chiu is None else move.auto_chiu,
    )
    w.events.append(move.to_dict())
    return w.freeze()


_PHASE_MOVES: dict[Phase, tuple[type, ...]] = {
    Phase.DEALER_START: (U, Discard),
    Phase.OFFER: (U, Eat, Chiu, Draw),
    Phase.AFTER_DRAW: (U, Eat, Chiu, Pass),
    Phase.DISCARD: (Discard,),
    Phase.TRA_CUA: (TraCua,),
    Phase.DECLARE: (Declare,),
}


def _check_turn(state: HandState, move: Move) -> None:
    _check_live_seat(state, move.seat)
    if move.seat != state.turn:
        raise IllegalMove("not_your_turn", gettext_noop("It is not your turn."))
    if type(move) not in _PHASE_MOVES[state.phase]:
        raise IllegalMove(
            "wrong_phase",
            gettext_noop("A '%(move)s' move is not allowed in phase '%(phase)s'."),
            move=move.type,
            phase=state.phase.value,
        )
    st = state.seats[move.seat]
    if st.bao and isinstance(move, Eat | Chiu):
        raise IllegalMove("bao", gettext_noop("A báo seat can only draw and pass."))


def _need_in_hand(w: _Work, seat: int, kind: int) -> None:
    if w.seats[seat].hand[kind] < 1:
        raise IllegalMove(
            "card_not_in_hand", gettext_noop("%(card)s is not in your hand."), card=CODES[kind]
        )


def _need_exposed(w: _Work, card: int) -> Exposed:
    ex = w.exposed
    if ex is None or ex.card != card:
        raise IllegalMove(
            "card_not_offered",
            gettext_noop("%(card)s is not the card on offer (%(offered)s)."),
            card=CODES[card],
            offered=CODES[ex.card] if ex else "nothing",
        )
    return ex


def _refuse_own_return(ex: Exposed) -> IllegalMove:
    return IllegalMove(
        "only_chiu_u",
        gettext_noop(
            "%(card)s was returned in place of your own discard: you may take it only by chíu ù."
        ),
        card=CODES[ex.card],
    )


# --- moves ----------------------------------------------------------------------------


def _do_discard(w: _Work, move: Discard) -> None:
    seat, card = move.seat, move.card
    _need_in_hand(w, seat, card)
    w.take_hand(seat, card)
    st = w.seats[seat]
    w.seat(seat, discarded=st.discarded + (card,))
    w.doors[seat].append(card)
    nxt = (seat + 1) % w.n
    w.turn = nxt
    w.phase = Phase.OFFER
    w.exposed = Exposed(card, seat, SRC_DISCARD, seat)
    _resolve_chiu_claims(w, exclude=(seat, nxt))


def _do_draw(w: _Work, move: Draw) -> None:
    seat = move.seat
    ex = w.exposed
    if ex is not None:
        _replace_by_pending(w, seat)
        _decline(w, seat, ex.card)
    if not w.stock:
        raise IllegalMove("stock_exhausted", gettext_noop("The stock is exhausted."))
    if len(w.stock) == 1:  # the last stock card is never drawn: hòa
        _end_hoa(w)
        return
    card, w.stock = w.stock[0], w.stock[1:]
    w.stock_drawn += 1
    w.doors[seat].append(card)
    w.exposed = Exposed(card, seat, SRC_STOCK, seat)
    w.phase = Phase.AFTER_DRAW
    w.events.append({"type": "drawn", "seat": seat, "card": CODES[card]})
    _count_nhai(w, seat, card, declined=None if ex is None else ex.card)
    drawer = w.seats[seat]
    drawer_wins = not drawer.bao and wins_with(drawer.hand, drawer.mat_chan, card)
    claimants = _u_claimants(w, seat, card)
    if claimants:
        claimant = claimants[0]
        if drawer_wins:
            w.pending_u = claimant
            # hidden: it tells the drawer that a seat waits on the card
            w.events.append(
                {
                    "type": "claim",
                    "seat": claimant,
                    "card": CODES[card],
                    "rule": "drawer_first",
                    "pending": True,
                    "hidden": True,
                }
            )
        else:
            _win(w, claimant, rule="turn_order", lost=claimants[1:])
        return
    if not drawer_wins:
        _resolve_chiu_claims(w, exclude=(seat,))


def _count_nhai(w: _Work, seat: int, card: int, declined: int | None) -> None:
    """Gà góp (§10.10, seed 000): drawing the very card just let go by at the cửa trên is a
    nhái; consecutive nhái pay 1, 2, 3… points, doubled on Chi chi. Any other draw ends a run."""
    if not w.state.config.ruleset.ga_gop:
        return
    if card != declined:
        w.nhai_streak = 0
        return
    w.nhai_streak += 1
    points = w.nhai_streak * (2 if card == CC else 1)
    w.nhai = w.nhai + (Nhai(seat, card, points),)
    w.events.append({"type": "nhai", "seat": seat, "card": CODES[card], "points": points})


def _do_pass(w: _Work, move: Pass) -> None:
    seat = move.seat
    ex = w.exposed
    assert ex is not None
    drawer_could_win = _replace_by_pending(w, seat)
    if w.phase is Phase.DECLARE:
        return
    _decline(w, seat, ex.card)
    nxt = (seat + 1) % w.n
    w.turn = nxt
    w.phase = Phase.OFFER
    if drawer_could_win:  # chíu claims waited for the drawer's decision
        _resolve_chiu_claims(w, exclude=(seat, nxt))


def _do_eat(w: _Work, move: Eat) -> None:
    seat, card, partner = move.seat, move.card, move.with_
    ex = _need_exposed(w, card)
    _need_in_hand(w, seat, partner)
    if sum(w.seats[seat].hand) < 2:
        raise IllegalMove(
            "no_card_to_discard", gettext_noop("Eating would leave no card to discard.")
        )
    kind = can_pair(card, partner)
    if kind is None:
        raise IllegalMove(
            "not_a_pair",
            gettext_noop("%(card)s and %(partner)s make neither a chắn nor a cạ."),
            card=CODES[card],
            partner=CODES[partner],
        )
    if only_chiu_u(ex, seat):
        raise _refuse_own_return(ex)
    _replace_by_pending(w, seat)
    if w.phase is Phase.DECLARE:
        return
    w.pop_exposed()
    w.take_hand(seat, partner)
    st = w.seats[seat]
    group = MatGroup(kind, (card, partner), card, ex.source, ex.door)
    w.seat(seat, mat=st.mat + (group,), last_taken=card)
    w.phase = Phase.DISCARD


def _do_chiu(w: _Work, move: Chiu) -> None:
    seat, card = move.seat, move.card
    ex = _need_exposed(w, card)
    st = w.seats[seat]
    if not chiu_possible(st, card):
        raise IllegalMove(
            "cannot_chiu",
            gettext_noop("Chíu needs three %(card)s in hand and a card left to discard."),
            card=CODES[card],
        )
    if chiu_wins(st, card):
        _win(w, seat, rule="chiu_u")  # a chíu ù is the drawer's own win: it keeps its priority
        return
    if only_chiu_u(ex, seat):
        raise _refuse_own_return(ex)
    _replace_by_pending(w, seat)
    if w.phase is Phase.DECLARE:
        return
    _lay_chiu(w, seat)
    w.phase = Phase.DISCARD


def _do_u(w: _Work, move: U) -> None:
    seat = move.seat
    st = w.seats[seat]
    if w.phase is Phase.DEALER_START:
        if dealt_wins(st):
            w.win = WinInfo(
                seat, None, "dealt", False, False, is_bach_thu(st.hand, 0, None), None, None
            )
            w.phase = Phase.DECLARE
        else:
            _u_lao(w, seat)
    elif u_wins(w.phase, w.exposed, w.n, st, seat):
        _win(w, seat, rule="claimed")
    else:
        _u_lao(w, seat)


def _u_lao(w: _Work, seat: int) -> None:
    """A claim of ù without a winning hand is the fault ``u_lao`` (RULES.md §9): refused with
    that slug in basic mode (the hand goes on), committed in advanced mode (ù láo ends it)."""
    if w.state.config.mode is not Mode.ADVANCED:
        raise FaultRefused("u_lao", fault_rules.message("u_lao"))
    was_bao = w.seats[seat].bao
    fault = Fault("u_lao", True, w.move_index, "ù báo" if was_bao else "")
    w.seat(seat, faults=w.seats[seat].faults + (fault,), bao=True)
    w.events.append({"type": "fault", "seat": seat, "fault": "u_lao", "bao": True})
    if not was_bao:
        w.events.append({"type": "bao", "seat": seat})
    w.phase = Phase.ENDED
    w.turn = seat
    w.outcome = Outcome(Result.U_LAO, seat)


def _do_tra_cua(w: _Work, move: TraCua) -> None:
    seat, card = move.seat, move.card
    _need_in_hand(w, seat, card)
    door = w.tra_cua_door
    assert door is not None and w.resume is not None and w.resume_turn is not None
    w.take_hand(seat, card)
    st = w.seats[seat]
    w.seat(seat, discarded=st.discarded + (card,))
    w.doors[door].append(card)
    w.exposed = Exposed(card, door, SRC_RETURNED, seat, barred=w.tra_cua_barred)
    w.phase, w.turn = w.resume, w.resume_turn
    w.resume = w.resume_turn = w.tra_cua_door = w.tra_cua_barred = None
    _resolve_chiu_claims(w, exclude=(seat, w.turn))


def _do_declare(w: _Work, move: Declare) -> None:
    w.declaration, w.outcome = declare(w.state, move)
    w.phase = Phase.ENDED


# --- claims and endings ---------------------------------------------------------------------


def _u_claimants(w: _Work, drawer: int, card: int) -> list[int]:
    """The seats after the drawer, in turn order, whose auto ù claims the drawn card (the
    first of them wins it unless the drawer does: RULES.md §4)."""
    found = []
    for step in range(1, w.n):
        s = (drawer + step) % w.n
        st = w.seats[s]
        if (
            st.auto_u
            and not st.bao
            and wins_with(st.hand, st.mat_chan, card)
            and not _below_four_eleven(w, s)
        ):
            found.append(s)
    return found


def _replace_by_pending(w: _Work, seat: int) -> bool:
    """Before the drawer's non-winning move: a pending out-of-turn ù takes over (drawer bỏ ù).

    Returns whether the drawer could have won on its own draw (its move is then a bỏ ù).
    """
    ex = w.exposed
    st = w.seats[seat]
    if w.phase is Phase.OFFER and u_wins(w.phase, ex, w.n, st, seat):
        _miss_win(w, seat)  # let the passed-down stock card go by
        return False
    if w.phase is not Phase.AFTER_DRAW or ex is None or ex.source != SRC_STOCK:
        return False
    could = not st.bao and wins_with(st.hand, st.mat_chan, ex.card)
    claimant = w.pending_u
    if could:
        _miss_win(w, seat, replaced_by=claimant)
    if claimant is not None:
        w.pending_u = None
        ex_card = ex.card
        lost = [s for s in _u_claimants(w, seat, ex_card) if s != claimant]
        _win(w, claimant, replaced=seat, rule="drawer_declined", lost=lost)
    return could


def _below_four_eleven(w: _Work, seat: int) -> bool:
    """In 4-11 mode, whether the seat's win on the exposed card would truly score below 4: such
    a win costs its winner 11 to every other seat, so it may be let go freely (§10.6) and is
    never taken automatically (neither by auto ù nor by an automatic chíu ù)."""
    rs = w.state.config.ruleset
    if not rs.four_eleven:
        return False
    facts = win_facts(_win_info(w, seat), w.seats[seat], w.state.config.previous_winner == seat)
    return true_total(rs, facts) < FOUR_ELEVEN_MIN


def _miss_win(w: _Work, seat: int, replaced_by: int | None = None) -> None:
    """The seat lets the exposed stock card, which it could win on, go by: a bỏ ù (§9), except
    that in 4-11 mode a win truly worth less than 4 may be declined freely (§10.6). Recorded in
    both modes on the seat and as a ``bo_u`` effect of the move (§4: "the drawer's bo_u is
    recorded"); ``replaced_by`` is the seat whose win replaces the move."""
    if _below_four_eleven(w, seat):
        return
    ex = w.exposed
    assert ex is not None
    missed = MissedWin(ex.card, w.move_index + 1, replaced_by)
    w.seat(seat, missed_wins=w.seats[seat].missed_wins + (missed,))
    w.events.append(
        {"type": "bo_u", "seat": seat, "card": CODES[ex.card], "replaced_by": replaced_by}
    )


def _resolve_chiu_claims(w: _Work, exclude: tuple[int, ...]) -> None:
    """An exposed card: a seat holding three of it with auto_chiu on chíus it at once, except
    where the chíu would be a chíu ù worth under 4 in 4-11 mode (§10.6), or a plain chíu of the
    card returned in place of the seat's own discard (§4): the card then goes by."""
    ex = w.exposed
    assert ex is not None
    for s in range(w.n):
        if s in exclude:
            continue
        st = w.seats[s]
        if not st.auto_chiu or st.bao or not chiu_possible(st, ex.card):
            continue
        if chiu_wins(st, ex.card):
            if _below_four_eleven(w, s):
                continue
            w.events.append({"type": "chiu", "seat": s, "card": CODES[ex.card], "auto": True})
            _win(w, s, rule="auto_chiu")
            return
        if only_chiu_u(ex, s):
            continue
        w.events.append({"type": "chiu", "seat": s, "card": CODES[ex.card], "auto": True})
        own = ex.source in (SRC_DISCARD, SRC_RETURNED) and ex.by == ex.door
        _lay_chiu(w, s)
        w.resume, w.resume_turn = w.phase, w.turn
        w.tra_cua_door = ex.door
        w.tra_cua_barred = ex.door if own else None
        w.phase, w.turn = Phase.TRA_CUA, s
        return


def _lay_chiu(w: _Work, seat: int) -> None:
    ex = w.exposed
    assert ex is not None
    card = w.pop_exposed()
    w.take_hand(seat, card, 3)
    st = w.seats[seat]
    group = MatGroup("chiu", (card,) * COPIES, card, ex.source, ex.door)
    w.seat(seat, mat=st.mat + (group,), last_taken=card)


def _win_info(w: _Work, seat: int, replaced: int | None = None) -> WinInfo:
    """The win ``seat`` would make on the exposed card (a chíu ù when it holds three of it)."""
    ex = w.exposed
    assert ex is not None
    st = w.seats[seat]
    card = ex.card
    if ex.source == SRC_STOCK:
        source = "own_draw" if ex.by == seat else "other_draw"
        first = w.stock_drawn == 1
    else:
        source = "chiu_own_door" if ex.door == seat else "chiu"
        first = w.stock_drawn == 0
    return WinInfo(
        seat=seat,
        card=card,
        source=source,
        by_chiu=st.hand[card] == 3,
        first_draw=first,
        bach_thu=is_bach_thu(st.hand, st.mat_chan, card),
        from_door=ex.door,
        replaced=replaced,
    )


def _win(
    w: _Work,
    seat: int,
    replaced: int | None = None,
    *,
    rule: str,
    lost: list[int] | tuple[int, ...] = (),
) -> None:
    """``seat`` wins on the exposed card. The ``claim`` effect says why the card is its
    (``rule``: ``claimed`` its own ù, ``chiu_u`` its chíu ù, ``auto_chiu`` its automatic chíu ù,
    ``turn_order`` the first auto ù after the drawer, ``drawer_declined`` the auto ù that waited
    for the drawer's move other than ù) and whose move it replaced; each other seat whose auto ù
    claimed the card too gets a hidden ``claim_lost``."""
    win = _win_info(w, seat, replaced)
    card = w.pop_exposed()
    w.win = win
    w.pending_u = None
    w.resume = w.resume_turn = w.tra_cua_door = w.tra_cua_barred = None
    w.phase, w.turn = Phase.DECLARE, seat
    w.events.append({"type": "win", "seat": seat, "card": CODES[card], "source": win.source})
    w.events.append(
        {"type": "claim", "seat": seat, "card": CODES[card], "rule": rule, "replaced": replaced}
    )
    for s in lost:
        w.events.append(
            {"type": "claim_lost", "seat": s, "card": CODES[card], "to": seat, "hidden": True}
        )


def _end_hoa(w: _Work) -> None:
    w.phase = Phase.ENDED
    w.exposed = None
    w.outcome = Outcome(Result.HOA)
    w.events.append({"type": "hoa"})


def _decline(w: _Work, seat: int, card: int) -> None:
    st = w.seats[seat]
    others = 0 if card == CC else sum(st.hand[k] for k in pair_partners(card) if k != card)
    w.seat(seat, declined=st.declined + (Declined(card, st.hand[card], others),))


_HANDLERS: dict[type, Callable[[_Work, Any], None]] = {
    Discard: _do_discard,
    Draw: _do_draw,
    Pass: _do_pass,
    Eat: _do_eat,
    Chiu: _do_chiu,
    U: _do_u,
    TraCua: _do_tra_cua,
    Declare: _do_declare,
}
