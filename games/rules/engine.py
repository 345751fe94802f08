"""The game flow: ``new_hand``, ``legal_moves`` and ``apply`` (RULES.md §3–5).

``apply`` never mutates: it validates the move, then builds the next state through a small
mutable :class:`_Work` copy, resolving the out-of-turn claims of §4 (ù on a stock card, automatic
chíu and trả cửa) every time a card is exposed. Fault checks (§9) come from ``faults.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from games.rules import faults as fault_rules
from games.rules.cards import CC, CODES, COPIES, N_KINDS, can_pair, counts_of
from games.rules.cuoc import WinFacts, true_total
from games.rules.deck import deal
from games.rules.errors import FaultRefused, IllegalMove
from games.rules.moves import Chiu, Declare, Discard, Draw, Eat, Move, Pass, SetPrefs, TraCua, U
from games.rules.ruleset import FOUR_ELEVEN_MIN
from games.rules.shape import is_bach_thu, wins_with
from games.rules.state import (
    SRC_DISCARD,
    SRC_RETURNED,
    SRC_STOCK,
    Declined,
    Exposed,
    Fault,
    HandConfig,
    HandState,
    MatGroup,
    Mode,
    Nhai,
    Phase,
    SeatState,
    WinInfo,
)

MIN_SEATS, MAX_SEATS = 2, 4


def new_hand(config: HandConfig, deck: Sequence[int], dealer: int) -> HandState:
    """Deal ``deck`` (100 kinds, in order) with ``dealer`` as nhà cái (RULES.md §3)."""
    n = config.n_seats
    if not MIN_SEATS <= n <= MAX_SEATS:
        raise IllegalMove("bad_seat_count", f"A hand needs 2 to 4 seats, not {n}.")
    if not 0 <= dealer < n:
        raise IllegalMove("bad_dealer", f"Dealer seat {dealer} is not at this table.")
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
    """Every move ``seat`` may make now (faulty ones excluded in basic mode; set_prefs omitted)."""
    if state.phase is Phase.ENDED or seat != state.turn:
        return []
    st = state.seats[seat]
    moves: list[Move] = []
    phase = state.phase
    if phase is Phase.DECLARE:
        return [Declare(seat, auto=True)]
    if phase is Phase.DEALER_START:
        if wins_with(st.hand, 0, None) or _advanced(state):
            moves.append(U(seat))
        moves.extend(Discard(seat, k) for k in range(N_KINDS) if st.hand[k])
    elif phase in (Phase.DISCARD,):
        moves.extend(Discard(seat, k) for k in range(N_KINDS) if st.hand[k])
    elif phase is Phase.TRA_CUA:
        moves.extend(TraCua(seat, k) for k in range(N_KINDS) if st.hand[k])
    else:
        ex = state.exposed
        assert ex is not None
        c = ex.card
        if not st.bao:
            if _u_allowed(phase, ex, state.n_seats, st, seat) or _advanced(state):
                moves.append(U(seat))
            if _chiu_allowed(st, c):
                moves.append(Chiu(seat, c))
            if sum(st.hand) >= 2:  # it must keep a card to discard
                moves.extend(Eat(seat, c, k) for k in _eat_partners(c) if st.hand[k])
        if phase is Phase.OFFER:
            moves.append(Draw(seat))
        else:
            moves.append(Pass(seat))
    if _advanced(state) or not moves:
        return moves
    return [m for m in moves if not fault_rules.faults_of(state, m)]


def can_win(state: HandState, seat: int) -> bool:
    """Whether ``seat`` holds a real win now (what an honest ``u`` needs)."""
    if seat != state.turn or state.seats[seat].bao:
        return False
    st = state.seats[seat]
    if state.phase is Phase.DEALER_START:
        return wins_with(st.hand, 0, None)
    if state.phase in (Phase.OFFER, Phase.AFTER_DRAW):
        return _u_allowed(state.phase, state.exposed, state.n_seats, st, seat)
    return False


def _advanced(state: HandState) -> bool:
    return state.config.mode is Mode.ADVANCED


def _chiu_allowed(st: SeatState, card: int) -> bool:
    """Three in hand, and a fourth card left to discard or return unless the chíu wins."""
    if st.hand[card] != 3:
        return False
    return sum(st.hand) >= 4 or wins_with(st.hand, st.mat_chan, card)


def _eat_partners(card: int) -> list[int]:
    if card == CC:
        return [CC]
    base = card - card % 3
    return [base, base + 1, base + 2]


def _u_allowed(phase: Phase, ex: Exposed | None, n: int, st: SeatState, seat: int) -> bool:
    """Whether ``seat`` may win now with the ``u`` move: on its own stock draw, or on the stock
    card its cửa trên just drew and passed. Never on a discard or a returned card (§5)."""
    if ex is None or ex.source != SRC_STOCK or st.bao:
        return False
    if phase is Phase.OFFER and ex.by != (seat - 1) % n:
        return False
    return wins_with(st.hand, st.mat_chan, ex.card)


# --------------------------------------------------------------------------- apply


class _Work:
    """A mutable scratch copy of a state while one move is applied."""

    def __init__(self, state: HandState) -> None:
        self.state = state
        self.seats = list(state.seats)
        self.doors = [list(d) for d in state.doors]
        self.stock = state.stock
        self.stock_drawn = state.stock_drawn
        self.phase = state.phase
        self.turn = state.turn
        self.exposed = state.exposed
        self.pending_u = state.pending_u
        self.tra_cua_door = state.tra_cua_door
        self.resume = state.resume
        self.resume_turn = state.resume_turn
        self.win = state.win
        self.declaration = state.declaration
        self.outcome = state.outcome
        self.nhai = state.nhai
        self.nhai_streak = state.nhai_streak
        self.events: list[dict[str, Any]] = []
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
        return HandState(
            config=self.state.config,
            dealer=self.state.dealer,
            seats=tuple(self.seats),
            doors=tuple(tuple(d) for d in self.doors),
            stock=self.stock,
            phase=self.phase,
            turn=self.turn,
            stock_drawn=self.stock_drawn,
            exposed=self.exposed,
            pending_u=self.pending_u,
            tra_cua_door=self.tra_cua_door,
            resume=self.resume,
            resume_turn=self.resume_turn,
            win=self.win,
            declaration=self.declaration,
            outcome=self.outcome,
            n_moves=self.move_index + 1,
            nhai=self.nhai,
            nhai_streak=self.nhai_streak,
            events=tuple(self.events),
        )


def apply(state: HandState, move: Move) -> HandState:
    """The state after ``move``; raises IllegalMove (or FaultRefused in basic mode) if refused."""
    if isinstance(move, SetPrefs):
        return _apply_prefs(state, move)
    _check_turn(state, move)
    found = fault_rules.faults_of(state, move)
    if found and not _advanced(state):
        f = found[0]
        raise FaultRefused(f.slug, fault_rules.message(f.slug), fault_rules.message(f.slug, "vi"))
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


def _apply_prefs(state: HandState, move: SetPrefs) -> HandState:
    if state.phase is Phase.ENDED:
        raise IllegalMove("hand_over", "The hand is over.", "Ván đã kết thúc.")
    if not 0 <= move.seat < state.n_seats:
        raise IllegalMove("no_such_seat", f"There is no seat {move.seat}.")
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
    if state.phase is Phase.ENDED:
        raise IllegalMove("hand_over", "The hand is over.", "Ván đã kết thúc.")
    if not 0 <= move.seat < state.n_seats:
        raise IllegalMove("no_such_seat", f"There is no seat {move.seat}.")
    if move.seat != state.turn:
        raise IllegalMove("not_your_turn", "It is not your turn.", "Chưa đến lượt bạn.")
    if type(move) not in _PHASE_MOVES[state.phase]:
        raise IllegalMove(
            "wrong_phase",
            f"A '{move.type}' move is not allowed in phase '{state.phase.value}'.",
            f"Không được '{move.type}' ở giai đoạn '{state.phase.value}'.",
        )
    st = state.seats[move.seat]
    if st.bao and isinstance(move, Eat | Chiu):
        raise IllegalMove(
            "bao", "A báo seat can only draw and pass.", "Nhà báo chỉ được bốc và dưới."
        )


def _need_in_hand(w: _Work, seat: int, kind: int, n: int = 1) -> None:
    if w.seats[seat].hand[kind] < n:
        raise IllegalMove(
            "card_not_in_hand",
            f"{CODES[kind]} is not in your hand.",
            f"Bạn không có quân {CODES[kind]} trên tay.",
        )


def _need_exposed(w: _Work, card: int) -> Exposed:
    ex = w.exposed
    if ex is None or ex.card != card:
        shown = CODES[ex.card] if ex else "nothing"
        raise IllegalMove(
            "card_not_offered",
            f"{CODES[card]} is not the card on offer ({shown}).",
            f"{CODES[card]} không phải quân đang được mời ({shown}).",
        )
    return ex


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
        raise IllegalMove("stock_exhausted", "The stock is exhausted.", "Nọc đã hết.")
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
    claimant = _first_u_claimant(w, seat, card)
    if claimant is not None:
        if drawer_wins:
            w.pending_u = claimant
        else:
            _win_out_of_turn(w, claimant)
        return
    if not drawer_wins:
        _resolve_chiu_claims(w, exclude=(seat,))


def _count_nhai(w: _Work, seat: int, card: int, declined: int | None) -> None:
    """Gà góp (§10.10, seed 000): drawing the very card just let go by at the cửa trên is a
    nhái; consecutive nhái pay 1, 2, 3… points, doubled on Chi chi. Any other draw ends a run."""
    rs = w.state.config.ruleset
    if rs is None or not rs.ga_gop:
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
            "no_card_to_discard",
            "Eating would leave no card to discard.",
            "Ăn xong sẽ không còn quân để đánh.",
        )
    kind = can_pair(card, partner)
    if kind is None:
        raise IllegalMove(
            "not_a_pair",
            f"{CODES[card]} and {CODES[partner]} make neither a chắn nor a cạ.",
            f"{CODES[card]} và {CODES[partner]} không thành chắn hay cạ.",
        )
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
    _need_exposed(w, card)
    if not _chiu_allowed(w.seats[seat], card):
        raise IllegalMove(
            "cannot_chiu",
            f"Chíu needs three {CODES[card]} in hand and a card left to discard.",
            f"Cần có ba quân {CODES[card]} trên tay để chíu.",
        )
    st = w.seats[seat]
    if not st.bao and wins_with(st.hand, st.mat_chan, card):
        _win(w, seat, by_chiu=True)  # a chíu ù is the drawer's own win: it keeps its priority
        return
    _replace_by_pending(w, seat)
    if w.phase is Phase.DECLARE:
        return
    _lay_chiu(w, seat)
    w.phase = Phase.DISCARD


def _do_u(w: _Work, move: U) -> None:
    seat = move.seat
    st = w.seats[seat]
    if w.phase is Phase.DEALER_START:
        if not st.bao and wins_with(st.hand, 0, None):
            w.win = WinInfo(
                seat, None, "dealt", False, False, is_bach_thu(st.hand, 0, None), None, None
            )
            w.phase = Phase.DECLARE
            return
        _u_lao(w, seat)
        return
    if not _u_allowed(w.phase, w.exposed, w.n, st, seat):
        _u_lao(w, seat)
        return
    ex = w.exposed
    assert ex is not None
    _win(w, seat, by_chiu=st.hand[ex.card] == 3)


def _u_lao(w: _Work, seat: int) -> None:
    """A claim of ù without a winning hand: refused in basic mode, ù láo in advanced mode."""
    if w.state.config.mode is not Mode.ADVANCED:
        raise IllegalMove("not_a_win", "This is not a winning hand.", "Bài chưa ù.")
    fault = Fault("u_lao", True, w.move_index, "ù báo" if w.seats[seat].bao else "")
    w.seat(seat, faults=w.seats[seat].faults + (fault,), bao=True)
    w.events.append({"type": "fault", "seat": seat, "fault": "u_lao", "bao": True})
    w.phase = Phase.ENDED
    w.turn = seat
    w.outcome = {"result": "u_lao", "seat": seat}


def _do_tra_cua(w: _Work, move: TraCua) -> None:
    seat, card = move.seat, move.card
    _need_in_hand(w, seat, card)
    door = w.tra_cua_door
    assert door is not None and w.resume is not None and w.resume_turn is not None
    w.take_hand(seat, card)
    st = w.seats[seat]
    w.seat(seat, discarded=st.discarded + (card,))
    w.doors[door].append(card)
    w.exposed = Exposed(card, door, SRC_RETURNED, seat)
    w.phase, w.turn = w.resume, w.resume_turn
    w.resume = w.resume_turn = w.tra_cua_door = None
    _resolve_chiu_claims(w, exclude=(seat, w.turn))


def _do_declare(w: _Work, move: Declare) -> None:
    from games.rules.declaring import declare

    declare(w, move)


# --- claims and endings ---------------------------------------------------------------------


def _first_u_claimant(w: _Work, drawer: int, card: int) -> int | None:
    for step in range(1, w.n):
        s = (drawer + step) % w.n
        st = w.seats[s]
        if (
            st.auto_u
            and not st.bao
            and wins_with(st.hand, st.mat_chan, card)
            and not _below_four_eleven(w, s, card, "other_draw")
        ):
            return s
    return None


def _replace_by_pending(w: _Work, seat: int) -> bool:
    """Before the drawer's non-winning move: a pending out-of-turn ù takes over (drawer bỏ ù).

    Returns whether the drawer could have won on its own draw (its move is then a bỏ ù).
    """
    ex = w.exposed
    st = w.seats[seat]
    if w.phase is Phase.OFFER and _u_allowed(w.phase, ex, w.n, st, seat):
        _miss_win(w, seat, ex.card, "other_draw")  # let the passed-down stock card go by
        return False
    if w.phase is not Phase.AFTER_DRAW or ex is None or ex.source != SRC_STOCK:
        return False
    could = not st.bao and wins_with(st.hand, st.mat_chan, ex.card)
    if could:
        _miss_win(w, seat, ex.card, "own_draw")
    if w.pending_u is not None:
        claimant = w.pending_u
        w.pending_u = None
        _win_out_of_turn(w, claimant, replaced=seat)
    return could


def _below_four_eleven(w: _Work, seat: int, card: int, source: str) -> bool:
    """In 4-11 mode, whether the seat's win on ``card`` would truly score below 4: such a win
    costs its winner 11 to every other seat, so it may be let go freely (§10.6) and is never
    claimed automatically."""
    rs = w.state.config.ruleset
    if rs is None or not rs.four_eleven:
        return False
    st = w.seats[seat]
    facts = WinFacts(
        hand=st.hand,
        mat=st.mat,
        card=card,
        source=source,
        by_chiu=st.hand[card] == 3,
        first_draw=w.stock_drawn == 1,
        previous_winner=w.state.config.previous_winner == seat,
        dealt=st.dealt,
    )
    return true_total(rs, facts) < FOUR_ELEVEN_MIN


def _miss_win(w: _Work, seat: int, card: int, source: str) -> None:
    """The seat lets a stock card it could win on go by: a bỏ ù (§9), except that in 4-11 mode
    a win truly worth less than 4 may be declined freely (§10.6)."""
    if not _below_four_eleven(w, seat, card, source):
        w.seat(seat, missed_win=True)


def _win_out_of_turn(w: _Work, seat: int, replaced: int | None = None) -> None:
    ex = w.exposed
    assert ex is not None
    _win(w, seat, by_chiu=w.seats[seat].hand[ex.card] == 3, replaced=replaced)


def _resolve_chiu_claims(w: _Work, exclude: tuple[int, ...]) -> None:
    """An exposed card: a seat holding three of it with auto_chiu on chíus it at once."""
    ex = w.exposed
    assert ex is not None
    for s in range(w.n):
        if s in exclude:
            continue
        st = w.seats[s]
        if st.auto_chiu and not st.bao and _chiu_allowed(st, ex.card):
            w.events.append({"type": "chiu", "seat": s, "card": CODES[ex.card], "auto": True})
            if wins_with(st.hand, st.mat_chan, ex.card):
                _win(w, s, by_chiu=True)
                return
            _lay_chiu(w, s)
            w.resume, w.resume_turn = w.phase, w.turn
            w.tra_cua_door = ex.door
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


def _win(w: _Work, seat: int, *, by_chiu: bool, replaced: int | None = None) -> None:
    ex = w.exposed
    assert ex is not None
    st = w.seats[seat]
    card = ex.card
    own_door = ex.door == seat
    if ex.source == SRC_STOCK:
        source = "own_draw" if ex.by == seat else "other_draw"
    else:
        source = "chiu_own_door" if own_door else "chiu"
    first = (ex.source == SRC_STOCK and w.stock_drawn == 1) or (
        ex.source != SRC_STOCK and w.stock_drawn == 0
    )
    w.pop_exposed()
    w.win = WinInfo(
        seat=seat,
        card=card,
        source=source,
        by_chiu=by_chiu,
        first_draw=first,
        bach_thu=is_bach_thu(st.hand, st.mat_chan, card),
        from_door=ex.door,
        replaced=replaced,
    )
    w.pending_u = None
    w.resume = w.resume_turn = w.tra_cua_door = None
    w.phase, w.turn = Phase.DECLARE, seat
    w.events.append({"type": "win", "seat": seat, "card": CODES[card], "source": source})


def _end_hoa(w: _Work) -> None:
    w.phase = Phase.ENDED
    w.exposed = None
    w.outcome = {"result": "hoa"}
    w.events.append({"type": "hoa"})


def _decline(w: _Work, seat: int, card: int) -> None:
    st = w.seats[seat]
    others = 0 if card == CC else sum(st.hand[k] for k in _eat_partners(card) if k != card)
    w.seat(seat, declined=st.declined + (Declined(card, st.hand[card], others),))


_HANDLERS: dict[type, Any] = {
    Discard: _do_discard,
    Draw: _do_draw,
    Pass: _do_pass,
    Eat: _do_eat,
    Chiu: _do_chiu,
    U: _do_u,
    TraCua: _do_tra_cua,
    Declare: _do_declare,
}
