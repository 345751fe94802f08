"""Check a hand's export offline: ``python -m games.rules.verify FILE`` (RULES.md §13).

The export (``GET /api/v1/hands/{id}/export``, docs/audit.md) is one JSON document. This module
needs nothing but the rules core: it checks that ``seed_hash`` is the SHA-256 of the seed's
bytes, rebuilds the deck with the documented shuffle (``games.rules.deck``) of the fair deal's
key (``games.rules.fair_deal``: the server seed, every seat's ``client_seeds``, the hand's id;
for hands dealt before it, of the seed alone) and holds it to the deal event's ``deck_hash``,
or checks a fixed deck is the 100 cards, holds the deal's seat binding (``payload.seats``,
``games.rules.seating``) to one entry per seat and the listed players, replays every move
through the rules core (in seq order, no gaps, each legal in its state; the records after the end, ``settled`` and ``voided``, are not moves: they
are checked to come after the end, and the settled one to be the booked Quan) through the one
replay (``games.rules.replay``), re-derives every event's effects and a system move's cause
(an event of an older schema held to what it recorded), compares the outcome, the declaration and its verdict, the points
settlement and the bỏ ù (``bo_u``, when the document lists them) with the document's, then the
Quan with points × stake and the room's fees, and the ledger transaction's entries with those
Quan and with the accounts the deal bound, its hash (``games.rules.ledger_chain``), and for
each capped payer that the balance the cap used is its previous ledger entry's ``balance_after`` (``caps``). Before the replay it checks the log's hash chain (``games.rules.chain``): every event's
hash, its link to the one before (the deal's to ``seed_hash``) and the chain's ``head``. It prints ``verified`` and exits 0, or prints the
first discrepancy (its seq and the reason) and exits 1. Given several exports of one table's
consecutive hands it also checks the chain of server-seed commitments (each hand's
``next_seed_hash`` is the next hand's ``seed_hash``: :func:`verify_seed_chain`). Given the record
key (``--record-key KEYS`` or ``--record-key @FILE``, ``CHAN_RECORD_KEY``'s form), it also checks
that every event and the settlement transaction carry that key's MAC of their hash
(``games.rules.record_mac``, :func:`mac_discrepancies`).

The server's checkers (``check_hands``, ``audit_hands``, ``ledger_check``) hold a stored log,
ended or still being played, to the same seqs, deck commitment, chain and replay with
:func:`log_break` (and the seed to its hash with :func:`seed_break`) before anything else reads
it, so that a changed log is reported at its first bad seq instead of stopping them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games.rules.cards import parse_kinds
from games.rules.chain import CHAIN_ALGORITHM, chain_break
from games.rules.deck import check_deck, first_dealer, shuffle
from games.rules.engine import new_hand
from games.rules.errors import RuleError, shown
from games.rules.fair_deal import KEY_ALGORITHM, check_client_seed, deal_key, deck_hash
from games.rules.ledger_chain import ledger_tx_hash
from games.rules.quan import FeeSchedule, FeesError, result_quan
from games.rules.record_mac import (
    HAND,
    LEDGER,
    MacChain,
    RecordKeyError,
    RecordKeys,
    mac_problem,
    record_keys_from,
)
from games.rules.records import SETTLED, VOIDED, is_record, settled_record
from games.rules.replay import as_stored, causes_allowed, move_effects, replay
from games.rules.results import HandResult
from games.rules.ruleset import RulesetError, ruleset_from_stored
from games.rules.seating import BindingError, BoundSeat, booking_unbound, seats_bound
from games.rules.state import HandConfig, HandState, Mode
from games.rules.views import missed_wins_of, result_of

EXPORT_FORMAT = "chan-hand-export"
EXPORT_VERSION = 1
# The shuffle of games.rules.deck (SHA-256 in counter mode over the seed, Fisher–Yates with
# rejection sampling); a fixed deck (test tables) has no shuffle.
SHUFFLE_ALGORITHM = "sha256-ctr-fisher-yates-v1"
# The fair deal (games.rules.fair_deal): the same shuffle of a key derived from the server's
# seed, every seat's seed (``client_seeds``) and the hand's id.
FAIR_SHUFFLE = f"{KEY_ALGORITHM}+{SHUFFLE_ALGORITHM}"
FIXED_SHUFFLE = "fixed"
RESULT_PARTS = ("outcome", "win", "declaration", "settlement")


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """Where an export stops being true: at event ``seq`` (the deal is 0; the result, the Quan
    and the ledger are judged at the last event), and why."""

    seq: int | None
    reason: str

    def __str__(self) -> str:
        where = "the document" if self.seq is None else f"seq {self.seq}"
        return f"discrepancy at {where}: {self.reason}"


class _Found(Exception):
    def __init__(self, seq: int | None, reason: str) -> None:
        super().__init__(reason)
        self.discrepancy = Discrepancy(seq, reason)


def verify_export(doc: Any, *, keys: RecordKeys | None = None) -> Discrepancy | None:
    """The first discrepancy of the export ``doc`` (parsed JSON), or None when it verifies.
    Given the record keys (``keys``), also that every event and the ledger transaction carry
    the record key's MAC of their hash (:func:`mac_discrepancies`)."""
    try:
        _verify(doc)
        if keys is not None:
            found = mac_discrepancies(keys, doc["events"], ledger=doc["ledger"])
            if found:
                return found[0]
    except _Found as found:
        return found.discrepancy
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        return Discrepancy(None, f"the document is malformed ({type(exc).__name__}: {exc})")
    return None


def _verify(doc: Mapping[str, Any]) -> None:
    if doc.get("format") != EXPORT_FORMAT or doc.get("version") != EXPORT_VERSION:
        raise _Found(None, f"not a {EXPORT_FORMAT} document of version {EXPORT_VERSION}")
    deck = _deck(doc)
    config = _config(doc)
    events = doc["events"]
    _check_seqs(events)
    _check_deck_hash(events[0], deck)
    _check_chain(doc)
    bound = _bound(events[0], config.n_seats)
    _check_players(doc, bound)
    records: list[Mapping[str, Any]] = []
    at = {"last": 0}

    def check(before: HandState, event: dict[str, Any]) -> None:
        if is_record(event["type"]):
            _check_record_place(before, event, records)
            records.append(event)
        else:
            _check_move_event(event)
            at["last"] = event["seq"]

    state = new_hand(config, deck, doc["dealer"])
    before = state
    for event, state in _replay_judged(config, deck, doc["dealer"], events, check=check):
        _check_effects(before, event, state)
        before = state
    last = at["last"]
    if state.outcome is None:
        raise _Found(last, "the hand has not ended after its last event")
    _check_result(last, result_of(state), doc["result"])
    _check_bo_u(last, missed_wins_of(state), doc)
    _check_bound_booking(last, doc, bound, records)
    _check_quan(last, doc, result_of(state))
    _check_ledger_hash(last, doc)
    _check_caps(last, doc)
    _check_records(records, doc)


def log_break(
    *,
    hand_id: int,
    seed_hash: str,
    config: HandConfig,
    deck: list[int],
    dealer: int,
    events: Sequence[Mapping[str, Any]],
) -> Discrepancy | None:
    """Where a hand's log as stored (its events in seq order, each with the fields
    ``games.rules.chain`` reads) stops being the hand dealt from ``deck``: the first seq out of
    place, a deal that did not commit to this deck, the first link of the hash chain that
    breaks, or the first move the rules refuse; None when it holds. The server's checkers run it
    before anything that replays the log, so that a log changed behind the database's guards is
    reported at its first bad seq instead of stopping them."""
    try:
        _check_seqs(events)
        _check_deck_hash(events[0], deck)
        broken = chain_break(hand=hand_id, seed_hash=seed_hash, events=events)
        if broken is not None:
            raise _Found(*broken)
        _bound(events[0], config.n_seats)
        for _ in _replay_judged(config, deck, dealer, events):
            pass
    except _Found as found:
        return found.discrepancy
    return None


def mac_discrepancies(
    keys: RecordKeys,
    events: Sequence[Mapping[str, Any]],
    *,
    ledger: Mapping[str, Any] | None = None,
) -> list[Discrepancy]:
    """Every event (in seq order, each with ``seq``, ``hash``, ``mac``, ``mac_key``) whose MAC
    does not vouch for its hash (``games.rules.record_mac``: none is allowed only before the
    hand's first keyed event), then the ledger transaction's (judged at the last event). The
    server's checkers report them all and go on."""
    chain = MacChain(keys, domain=HAND)
    found = []
    for event in events:
        why = chain.check(
            digest=event["hash"], mac=event.get("mac") or "", mac_key=event.get("mac_key") or ""
        )
        if why is not None:
            found.append(Discrepancy(event["seq"], why))
    # (an export made before transactions carried their hash has nothing to vouch for)
    if ledger is not None and "hash" in ledger and (ledger.get("mac") or chain.keyed):
        why = mac_problem(
            keys,
            domain=LEDGER,
            digest=ledger["hash"],
            mac=ledger.get("mac") or "",
            mac_key=ledger.get("mac_key") or "",
        )
        if why is not None:
            last = events[-1]["seq"] if events else None
            found.append(Discrepancy(last, f"the ledger transaction {ledger['id']}: {why}"))
    return found


def seed_break(seed: str, seed_hash: str) -> Discrepancy | None:
    """The discrepancy at the deal when ``seed`` (hex) is not the seed its published
    ``seed_hash`` commits to; None when it is."""
    try:
        seed_bytes = bytes.fromhex(seed)
    except (TypeError, ValueError):
        return Discrepancy(0, "the seed is not hexadecimal")
    if hashlib.sha256(seed_bytes).hexdigest() != seed_hash:
        return Discrepancy(0, "seed_hash is not the SHA-256 of the seed's bytes")
    return None


def _replay_judged(
    config: HandConfig,
    deck: list[int],
    dealer: int,
    events: Sequence[Mapping[str, Any]],
    *,
    check: Callable[[HandState, dict[str, Any]], None] | None = None,
) -> Iterator[tuple[dict[str, Any], HandState]]:
    """The one replay (``games.rules.replay``), a move the rules refuse raised as the
    discrepancy at its seq."""
    seen: list[dict[str, Any]] = []

    def judged(state: HandState, event: dict[str, Any]) -> None:
        seen[:] = [event]
        if check is not None:
            check(state, event)

    try:
        yield from replay(config, deck, dealer, events, check=judged)
    except RuleError as exc:
        event = seen[0]
        payload = event["payload"]
        what = (
            f"{payload.get('type')} by seat {payload.get('seat')}"
            if isinstance(payload, Mapping)
            else "the move"
        )
        raise _Found(event["seq"], f"{what} is refused: {exc.code} ({exc.message})") from None


def _check_record_place(
    state: HandState, event: Mapping[str, Any], before: Sequence[Mapping[str, Any]]
) -> None:
    """A record (settled, voided) is the system's, after the end; one of each, the settlement
    first."""
    seq, kind = event["seq"], event["type"]
    if state.outcome is None:
        raise _Found(seq, f"a {kind} record before the hand has ended")
    if not event["system"] or event["seat"] is not None:
        raise _Found(seq, f"the {kind} record is not the system's")
    if not isinstance(event["payload"], Mapping) or event["payload"].get("type") != kind:
        raise _Found(seq, f"the {kind} record's payload is not a {kind} record")
    kinds = [e["type"] for e in before]
    if kind in kinds:
        raise _Found(seq, f"a second {kind} record")
    if kind == VOIDED and SETTLED not in kinds:
        raise _Found(seq, "a voided record before the settled one")


def _check_records(records: Sequence[Mapping[str, Any]], doc: Mapping[str, Any]) -> None:
    """The settled record is the booked settlement (exports of hands settled before the log
    held it have none): its Quan are the document's, its transaction the document's ledger's."""
    for event in records:
        if event["type"] != SETTLED:
            continue
        booked, ledger = doc["quan"], doc["ledger"]
        if booked is None:
            raise _Found(event["seq"], "a settled record but no booked settlement")
        expected = {
            "type": SETTLED,
            **settled_record(booked, ledger["id"] if ledger else None),
        }
        if dict(event["payload"]) != expected:
            raise _Found(
                event["seq"],
                f"the settled record is not the booked settlement: {shown(expected, 400)}",
            )


def _check_seqs(events: Sequence[Mapping[str, Any]]) -> None:
    """Events are listed in seq order from the deal (0) with no gap and no repeat."""
    if not events:
        raise _Found(0, "the document has no events (not even the deal)")
    for expected, event in enumerate(events):
        seq = event["seq"]
        if seq != expected:
            raise _Found(expected, f"event {seq} is listed where seq {expected} should be")
    if events[0]["type"] != "deal" or not events[0]["system"]:
        raise _Found(0, "seq 0 is not the system's deal")


def _check_deck_hash(deal: Mapping[str, Any], deck: Sequence[int]) -> None:
    """The deal event commits to the deck it dealt (``payload.deck_hash``; deals logged before
    the fair deal have none): the seeds of the document must give that deck."""
    payload = deal["payload"]
    if not isinstance(payload, Mapping) or "deck_hash" not in payload:
        return
    if payload["deck_hash"] != deck_hash(deck):
        raise _Found(0, "the seeds do not give the deck the deal committed to (deck_hash)")


def _bound(deal: Mapping[str, Any], n_seats: int) -> tuple[BoundSeat, ...] | None:
    """The seats the deal binds to players and accounts (``payload.seats``,
    ``games.rules.seating``; None for deals logged before the binding), a malformed binding
    the discrepancy at the deal."""
    try:
        return seats_bound(deal["payload"], n_seats)
    except BindingError as exc:
        raise _Found(0, str(exc)) from None


def _check_players(doc: Mapping[str, Any], bound: Sequence[BoundSeat] | None) -> None:
    """The players the document lists are the ones the deal bound (exports made before the
    binding, or listing no ``user_id``, have nothing to hold to it)."""
    if bound is None:
        return
    for seat, player in zip(bound, doc["players"], strict=True):
        if "user_id" not in player:
            continue
        if (player["seat"], player["user_id"]) != (seat.position, seat.player) or player.get(
            "account", seat.account
        ) != seat.account:
            raise _Found(
                0, f"the players listed are not the ones the deal bound (seat {seat.position})"
            )


def _check_bound_booking(
    last: int,
    doc: Mapping[str, Any],
    bound: Sequence[BoundSeat] | None,
    records: Sequence[Mapping[str, Any]],
) -> None:
    """The settlement's ledger entries go to the accounts the deal bound: each seat's to its own,
    no bound account as another party, no account that is no party (``games.rules.seating``).
    Judged at the settled record (where the booking enters the log), else at the last move."""
    ledger = doc["ledger"]
    if bound is None or ledger is None:
        return
    why = booking_unbound(bound, ledger.get("entries", []))
    if why is not None:
        settled = [e["seq"] for e in records if e["type"] == SETTLED]
        raise _Found(settled[0] if settled else last, why)


def _check_chain(doc: Mapping[str, Any]) -> None:
    """Each event's hash is that of its canonical form and its predecessor's, from the seed
    commitment (games.rules.chain), and the chain's head is the last event's hash. An export
    made before the chain (no ``chain`` key) has none to check."""
    chain = doc.get("chain")
    if chain is None:
        return
    if chain["algorithm"] != CHAIN_ALGORITHM:
        raise _Found(None, f"unknown chain {shown(chain['algorithm'], 40)}")
    events = doc["events"]
    broken = chain_break(
        hand=doc["hand_id"],
        seed_hash=doc["seed_hash"],
        events=({**e, "actor_seat": e["seat"]} for e in events),
    )
    if broken is not None:
        raise _Found(*broken)
    if chain["head"] != events[-1]["hash"]:
        raise _Found(events[-1]["seq"], "the chain's head is not the last event's hash")


def _deck(doc: Mapping[str, Any]) -> list[int]:
    """The deck the hand was dealt from, after checking the seed against its public hash."""
    seed = doc["seed"]
    broken = seed_break(seed, doc["seed_hash"])
    if broken is not None:
        raise _Found(broken.seq, broken.reason)
    seed_bytes = bytes.fromhex(seed)
    algorithm = doc["shuffle"]
    if algorithm == FIXED_SHUFFLE:
        try:
            deck = parse_kinds(doc["deck"])
            check_deck(deck)
        except RuleError as exc:
            raise _Found(0, f"the fixed deck is not the 100 cards: {exc.message}") from None
        return deck
    if algorithm not in (SHUFFLE_ALGORITHM, FAIR_SHUFFLE):
        raise _Found(
            0, f"unknown shuffle {shown(algorithm, 40)} (expected {shown(FAIR_SHUFFLE, 60)})"
        )
    n_seats = doc["config"]["seats"]
    if doc["number"] == 1 and doc["dealer"] != first_dealer(seed_bytes, n_seats):
        raise _Found(0, "the first hand's dealer is not the one the seed draws")
    if algorithm == SHUFFLE_ALGORITHM:  # a hand dealt before the fair deal
        return shuffle(seed_bytes)
    return shuffle(_deal_key(doc, seed_bytes, n_seats))


def _deal_key(doc: Mapping[str, Any], server_seed: bytes, n_seats: int) -> bytes:
    """The fair deal's key (games.rules.fair_deal) from the revealed seeds: one per seat."""
    seeds = doc.get("client_seeds")
    if not isinstance(seeds, list) or len(seeds) != n_seats:
        raise _Found(0, f"the fair deal needs one client seed per seat ({n_seats})")
    for position, seed in enumerate(seeds):
        try:
            check_client_seed(seed)
        except RuleError:
            raise _Found(0, f"seat {position}'s client seed is malformed") from None
    return deal_key(server_seed=server_seed, hand_id=doc["hand_id"], client_seeds=seeds)


def verify_seed_chain(docs: Sequence[Any]) -> Discrepancy | None:
    """Consecutive hands of one table (in any order): each hand's ``next_seed_hash`` (the
    commitment made at its deal) is the next hand's ``seed_hash``, so that hand's server seed
    was fixed before any seat said ready for it. None when every link holds."""
    try:
        ordered = sorted(docs, key=lambda d: (d["table"]["id"], d["number"]))
        for before, after in zip(ordered, ordered[1:], strict=False):
            if before["table"]["id"] != after["table"]["id"]:
                continue
            if after["number"] != before["number"] + 1:
                continue
            if before.get("next_seed_hash") is None:
                continue  # dealt before the fair deal committed the next seed
            if before["next_seed_hash"] != after["seed_hash"]:
                return Discrepancy(
                    0,
                    f"hand {after['hand_id']}'s seed_hash is not the commitment hand "
                    f"{before['hand_id']} made (next_seed_hash)",
                )
    except (KeyError, TypeError) as exc:
        return Discrepancy(None, f"the documents are malformed ({type(exc).__name__}: {exc})")
    return None


def _config(doc: Mapping[str, Any]) -> HandConfig:
    config = doc["config"]
    n_seats = config["seats"]
    if len(doc["players"]) != n_seats or len(config["prefs"]) != n_seats:
        raise _Found(0, f"the hand has {n_seats} seats but not as many players and preferences")
    try:
        # The hand's frozen table; an export older than frozen tables carries the spec
        # {preset, overrides}, upcast with the presets of this verifier.
        ruleset = ruleset_from_stored(config["ruleset"])
    except RulesetError as exc:
        raise _Found(0, f"the ruleset is refused: {exc}") from None
    return HandConfig(
        n_seats=n_seats,
        mode=Mode(config["mode"]),
        ruleset=ruleset,
        previous_winner=config["previous_winner"],
        prefs=tuple((bool(p["auto_u"]), bool(p["auto_chiu"])) for p in config["prefs"]),
    )


def _check_move_event(event: Mapping[str, Any]) -> None:
    """A move's event says what its payload says (type, seat, system flag)."""
    seq, payload = event["seq"], event["payload"]
    if not isinstance(payload, Mapping):
        raise _Found(seq, "the event's payload is not a move")
    if (event["type"], event["seat"]) != (payload.get("type"), payload.get("seat")):
        raise _Found(seq, "the event's type and seat are not its payload's")
    if event["system"] is not (payload.get("system", False) is True):
        raise _Found(seq, "the event's system flag is not its payload's")


def _check_effects(before: HandState, event: Mapping[str, Any], after: HandState) -> None:
    """The event's effects are what the rules derive from its move (``after.events``: faults,
    báo, bỏ ù, claims, automatic chíu, the win), plus, for a system move, its cause — one the
    state allows (``bao`` exactly when the seat was báo; the log cannot tell a deadline from a
    player who left or a bot's refused move: ``causes_allowed``). An event stored in an
    older schema is held only to what that schema recorded. A record has no effects."""
    seq = event["seq"]
    stated = event.get("effects")
    if stated is None and event.get("stored_v", 1) < 2:
        return  # exports made before the effects were exported
    if is_record(event["type"]):
        if stated:
            raise _Found(seq, "a record has effects")
        return
    cause = None
    if seq > 0 and event["system"]:
        seat = event["seat"]
        causes = [e for e in stated or [] if isinstance(e, Mapping) and e.get("type") == "system"]
        if causes or event.get("stored_v", 1) >= 2:
            cause = causes[0].get("cause") if causes else None
            allowed = causes_allowed(before, seat)
            if cause not in allowed:
                raise _Found(
                    seq,
                    f"the system move's cause is {shown(cause)}, the state allows "
                    f"{', '.join(allowed)}",
                )
    derived = json.loads(json.dumps(move_effects(after, cause)))  # as JSON stores it
    expected = as_stored(derived, event.get("stored_v", 1))
    if event.get("stored_v", 1) < 2 and not _has_bo_u(stated):
        # events stored before bỏ ù were recorded as effects have none
        expected = [e for e in expected if e.get("type") != "bo_u"]
    if stated != expected:
        raise _Found(seq, f"the event's effects are not the rules': {shown(expected, 400)}")


def _has_bo_u(effects: Any) -> bool:
    return isinstance(effects, list) and any(
        isinstance(e, Mapping) and e.get("type") == "bo_u" for e in effects
    )


def _check_result(seq: int, replayed: Mapping[str, Any], stated: Mapping[str, Any]) -> None:
    declaration = replayed["declaration"]
    stated_declaration = stated.get("declaration")
    if declaration and stated_declaration:
        mine, theirs = declaration["verdict"], stated_declaration.get("verdict")
        if mine != theirs:
            raise _Found(
                seq,
                f"the declaration's verdict is {shown(mine)}, the document says {shown(theirs)}",
            )
    for part in RESULT_PARTS:
        if replayed[part] != stated.get(part):
            raise _Found(
                seq, f"the result's {part} is not the replay's: {shown(replayed[part], 400)}"
            )


def _check_bo_u(last: int, replayed: list[dict[str, Any]], doc: Mapping[str, Any]) -> None:
    """The document's bỏ ù are the replay's (exports made before they were listed have none)."""
    if "bo_u" not in doc:
        return
    stated = doc["bo_u"]
    if stated == replayed:
        return
    if not isinstance(stated, list):
        raise _Found(last, "the document's bo_u is not a list")
    for mine, theirs in zip(replayed, stated, strict=False):
        if mine != theirs:
            raise _Found(mine["seq"], f"the bỏ ù {theirs} is not the replay's {mine}")
    if len(replayed) > len(stated):
        missing = replayed[len(stated)]
        raise _Found(missing["seq"], f"the document does not list the bỏ ù {missing}")
    raise _Found(
        last, f"the document lists a bỏ ù the replay does not have: {stated[len(replayed)]}"
    )


def _check_quan(seq: int, doc: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    """The booked Quan are points × stake with the room's fees, from the balances they were
    booked against; the ledger transaction moves exactly those Quan."""
    booked, ledger = doc["quan"], doc["ledger"]
    if doc.get("practice"):  # a practice table books nothing: every seat's Quan is zero
        moved = booked and (booked.get("fees") or any(s.get("net") for s in booked["seats"]))
        if ledger is not None or moved or not (booked or {}).get("practice"):
            raise _Found(seq, "a practice hand moved Quan")
        return
    if booked is None:
        if ledger is not None:
            raise _Found(seq, "a ledger transaction but no booked settlement")
        return
    room = doc["room"]
    try:
        fees = FeeSchedule.from_dict(room["fees"])
    except FeesError as exc:
        raise _Found(seq, f"the room's fees are refused: {exc}") from None
    quan = result_quan(
        HandResult.from_dict(result),
        n_seats=doc["config"]["seats"],
        stake=doc["stake"],
        fees=fees,
        xuong_sai_settled=room["xuong_sai_settled"],
        balances=booked["balances"],
        pot_balance=booked["pot_before"],
    )
    expected = {
        **quan.to_dict(),
        "balances": booked["balances"],
        "pot_before": booked["pot_before"],
    }
    for key, value in expected.items():
        if booked.get(key) != value:
            raise _Found(seq, f"the Quan {key} is {booked.get(key)}, points × stake says {value}")
    legs = {str(party): amount for party, amount in quan.legs().items() if amount}
    entries: dict[str, int] = {}
    for entry in (ledger or {}).get("entries", []):
        party = str(entry["party"])
        entries[party] = entries.get(party, 0) + entry["amount"]
    if entries != legs:
        raise _Found(seq, f"the ledger entries {entries} are not the settlement's {legs}")


def _check_ledger_hash(seq: int, doc: Mapping[str, Any]) -> None:
    """The settlement transaction is this hand's, and its ``hash`` is the ledger chain's hash of
    its content, its entries and its ``prev_hash`` (games.rules.ledger_chain): the link an
    auditor follows to the ledger's head. Exports made before they carried the hash have none."""
    ledger = doc["ledger"]
    if ledger is None or "hash" not in ledger:
        return
    if ledger["hand"] != doc["hand_id"] or ledger["table"] != doc["table"]["id"]:
        raise _Found(seq, "the ledger transaction is not this hand's")
    wanted = ledger_tx_hash(
        prev=ledger["prev_hash"],
        kind=ledger["kind"],
        key=ledger["key"],
        memo=ledger["memo"],
        user=ledger["user"],
        hand=ledger["hand"],
        table=ledger["table"],
        entries=[(e["account"], e["amount"]) for e in ledger["entries"]],
    )
    if ledger["hash"] != wanted:
        raise _Found(seq, "the ledger transaction's hash is not the SHA-256 of its content")


def _check_caps(seq: int, doc: Mapping[str, Any]) -> None:
    """Each capped payer (``quan.capped``) comes with its wallet's previous ledger entry
    (``caps``): the balance the cap used (``quan.balances``) is that entry's ``balance_after``
    less what it held for seats at other tables (``held_elsewhere``),
    the payer paid exactly that, and its settlement entry leaves it at that balance less what it
    paid. Exports made before they carried ``caps`` have none to check."""
    if "caps" not in doc:
        return
    booked, ledger, caps = doc["quan"], doc["ledger"], doc["caps"]
    capped = [] if booked is None or booked.get("practice") else list(booked["capped"])
    if sorted(c["seat"] for c in caps) != sorted(capped):
        raise _Found(seq, f"the caps {shown(caps, 200)} are not the capped seats {capped}")
    for cap in caps:
        seat, entry = cap["seat"], cap["entry"]
        balance = booked["balances"][seat]
        held = 0 if entry is None else entry["balance_after"]
        # Quan its seats at other tables held is not paid here (0 in older exports).
        elsewhere = cap.get("held_elsewhere", 0)
        if held - elsewhere != balance:
            at_others = f" ({elsewhere} of it held at other tables)" if elsewhere else ""
            raise _Found(
                seq,
                f"seat {seat}'s cap used a balance of {balance}, its previous ledger entry "
                f"holds {held}{at_others}",
            )
        paid = booked["seats"][seat]["paid"]
        if paid != balance:
            raise _Found(seq, f"seat {seat} was capped at {balance} but paid {paid}")
        mine = [e for e in (ledger or {}).get("entries", []) if e["party"] == seat]
        if any(e["account"] != cap["account"] for e in mine):
            raise _Found(seq, f"seat {seat}'s cap is not on its account in the ledger")
        if entry is not None and ledger is not None:
            if entry["transaction"]["id"] >= ledger["id"]:
                raise _Found(seq, f"seat {seat}'s previous entry is not before the settlement")
            for e in mine:
                if "balance_after" in e and e["balance_after"] != held + e["amount"]:
                    raise _Found(
                        seq,
                        f"seat {seat}'s settlement entry leaves {e['balance_after']}, not "
                        f"{held} {e['amount']:+}",
                    )


def main(argv: list[str] | None = None) -> int:
    args_given = sys.argv[1:] if argv is None else argv
    if args_given[:1] == ["monitor"]:  # the transparency log's monitor (games.rules.monitor)
        from games.rules.monitor import main as monitor_main

        return monitor_main(args_given[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "files",
        nargs="+",
        metavar="file",
        help="the export (JSON); '-' reads standard input; several exports of one table's "
        "consecutive hands also check the chain of server-seed commitments",
    )
    parser.add_argument(
        "--record-key",
        metavar="KEYS",
        help="also check every event's and the ledger transaction's MAC under these record "
        "keys (CHAN_RECORD_KEY's form: id:base64,…; @FILE reads them from FILE)",
    )
    args = parser.parse_args(argv)
    keys = None
    if args.record_key:
        try:
            text = args.record_key
            if text.startswith("@"):
                with open(text[1:], encoding="utf-8") as f:
                    text = f.read()
            keys = record_keys_from(text)
        except (OSError, RecordKeyError) as exc:
            print(f"cannot read the record keys: {exc}")
            return 1
    docs = []
    for name in args.files:
        try:
            if name == "-":
                docs.append(json.load(sys.stdin))
            else:
                with open(name, encoding="utf-8") as f:
                    docs.append(json.load(f))
        except (OSError, ValueError) as exc:
            print(f"cannot read {name}: {exc}")
            return 1
    for name, doc in zip(args.files, docs, strict=True):
        found = verify_export(doc, keys=keys)
        if found is not None:
            print(found if len(docs) == 1 else f"{name}: {found}")
            return 1
    if len(docs) > 1:
        found = verify_seed_chain(docs)
        if found is not None:
            print(found)
            return 1
    print("verified" if keys is None else "verified, with every record's MAC")
    for doc in docs:  # for the auditor to hold against the view's head_hash
        if doc.get("chain") is not None:
            print(f"chain head {doc['chain']['head']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
