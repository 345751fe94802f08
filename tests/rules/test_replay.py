"""The one replay (games.rules.replay), the effects every event records, and the events' schema
versions: a log stored in an older shape replays and verifies after the shape changed."""

from __future__ import annotations

import copy
import functools
import json
import random
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_engine import _drawer_could_win_and_passes
from test_verify import SEED, chained, derived_effects, export_of

from games.rules.bots import RandomBot
from games.rules.deck import first_dealer, shuffle
from games.rules.engine import apply, new_hand
from games.rules.moves import Discard, move_from_dict
from games.rules.records import SETTLED
from games.rules.replay import (
    CAUSE_BAO,
    CAUSE_LEFT,
    CAUSE_TIMEOUT,
    EVENT_VERSION,
    as_stored,
    causes_allowed,
    move_effects,
    replay,
    replay_from,
    system_cause,
    upcast,
)
from games.rules.state import HandConfig, Mode, Phase
from games.rules.verify import Discrepancy, verify_export
from games.rules.views import effects_for, is_private_effect


def log_of(config: HandConfig, seed: bytes, moves: list[Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [{"seq": 0, "type": "deal", "payload": {}}]
    for i, move in enumerate(moves, start=1):
        events.append({"seq": i, "type": move.to_dict()["type"], "payload": move.to_dict()})
    return events


def self_play(config: HandConfig, seed: bytes) -> tuple[Any, list[Any], list[Any]]:
    """A random bot's hand: the dealt state, the moves, the state after each."""
    rng = random.Random(seed)
    bot = RandomBot(rng)
    start = new_hand(config, shuffle(seed), first_dealer(seed, config.n_seats))
    state, moves, states = start, [], []
    while state.phase is not Phase.ENDED:
        move = bot.choose(state, state.turn)
        state = apply(state, move)
        moves.append(move)
        states.append(state)
    return start, moves, states


# --------------------------------------------------------------------------- one replay


def test_the_replay_yields_each_event_with_the_state_reduce_apply_gives() -> None:
    config = HandConfig(n_seats=3)
    seed = b"one-replay"
    start, moves, states = self_play(config, seed)
    events = log_of(config, seed, moves)
    # a record after the end is passed by: the state it yields is the final one
    events.append({"seq": len(events), "type": SETTLED, "payload": {"type": SETTLED}})
    replayed = list(replay(config, shuffle(seed), start.dealer, events))
    assert [e["seq"] for e, _ in replayed] == list(range(len(events)))
    assert replayed[0][1] == start
    assert [s for _, s in replayed[1:-1]] == states
    assert replayed[-1][1] == states[-1] == functools.reduce(apply, moves, start)


@settings(max_examples=25, deadline=None)
@given(n_seats=st.integers(2, 4), seed=st.binary(min_size=1, max_size=8), cut=st.floats(0, 1))
def test_a_replay_cut_anywhere_and_carried_on_gives_the_same_states(n_seats, seed, cut) -> None:
    config = HandConfig(n_seats=n_seats)
    start, moves, _states = self_play(config, seed)
    events = log_of(config, seed, moves)
    events.append({"seq": len(events), "type": SETTLED, "payload": {"type": SETTLED}})
    whole = list(replay(config, shuffle(seed), start.dealer, events))
    at = int(cut * (len(events) - 1))  # the state after event ``at``, carried on from there
    carried = list(replay_from(whole[at][1], events[at + 1 :]))
    assert [s for _, s in carried] == [s for _, s in whole[at + 1 :]]
    assert [e for e, _ in carried] == [e for e, _ in whole[at + 1 :]]


def test_the_replay_shows_each_event_to_check_before_it_is_applied() -> None:
    config = HandConfig(n_seats=2)
    seed = b"check"
    start, moves, _ = self_play(config, seed)
    seen: list[tuple[int, int]] = []
    events = log_of(config, seed, moves[:3])
    for _ in replay(
        config,
        shuffle(seed),
        start.dealer,
        events,
        check=lambda before, event: seen.append((event["seq"], before.n_moves)),
    ):
        pass
    assert seen == [(1, 0), (2, 1), (3, 2)]  # the deal is not checked; each move sees its state


# --------------------------------------------------------------------------- versions


def test_upcast_moves_the_version_out_of_the_payload_and_keeps_a_v1_event_as_it_was() -> None:
    v1 = {"seq": 3, "type": "draw", "payload": {"type": "draw", "seat": 1}, "effects": [{"a": 1}]}
    assert upcast(v1) == {**v1, "v": EVENT_VERSION, "stored_v": 1}
    v2 = {**v1, "payload": {"type": "draw", "seat": 1, "v": 2}}
    assert upcast(v2) == {**v1, "v": EVENT_VERSION, "stored_v": 2}
    assert v2["payload"]["v"] == 2  # in memory only: the stored event is not touched
    # the stored payload still parses as the move (the hash covers it as stored)
    assert move_from_dict(v2["payload"]) == move_from_dict(v1["payload"])


def test_a_v1_effects_list_is_the_v2_one_without_what_v2_added() -> None:
    effects = [
        {"type": "discard", "seat": 0, "card": "2V"},
        {"type": "fault", "seat": 0, "fault": "an_chon_ca", "hidden": True},
        {"type": "fault", "seat": 0, "fault": "x", "bao": True},
        {"type": "bao", "seat": 0},
        {"type": "win", "seat": 1, "card": "2V", "source": "chiu"},
        {"type": "claim", "seat": 1, "card": "2V", "rule": "auto_chiu", "replaced": None},
        {"type": "system", "seat": 0, "cause": "timeout"},
    ]
    assert as_stored(effects, 2) == effects
    assert as_stored(effects, 1) == [effects[0], effects[2], effects[4]]


def v1_export() -> dict[str, Any]:
    """An export as the server wrote it before version 2: payloads without ``v``, effects of
    the version-1 shape, no hash chain."""
    doc = export_of(SEED)
    for event, effects in zip(doc["events"], derived_effects(doc), strict=True):
        event["effects"] = as_stored(effects, 1)
    return doc


def test_an_older_export_verifies_after_the_shape_changed() -> None:
    doc = v1_export()
    assert "chain" not in doc and all("v" not in e["payload"] for e in doc["events"])
    # the win's claim effect is new in version 2: the version-1 event does not have it …
    win = next(e for e in doc["events"] if any(x["type"] == "win" for x in e["effects"]))
    assert not any(x["type"] == "claim" for x in win["effects"])
    assert verify_export(doc) is None
    # … but an event that says it is version 2 must carry it.
    win["payload"] = {**win["payload"], "v": 2}
    found = verify_export(doc)
    assert found is not None and found.seq == win["seq"]
    assert "effects are not the rules'" in found.reason


def test_an_edited_effect_is_named_at_its_seq_and_with_the_chain_the_chain_catches_it_first() -> (
    None
):
    doc = v1_export()
    edited = copy.deepcopy(doc)
    edited["events"][5]["effects"].append({"type": "fault", "seat": 1, "fault": "made_up"})
    found = verify_export(edited)
    assert found is not None and found.seq == 5 and "effects" in found.reason
    # A faked effect on a chained export breaks its hash before the replay looks at it.
    doc = chained(export_of(SEED))
    assert verify_export(doc) is None
    doc["events"][5]["effects"].append({"type": "fault", "seat": 1, "fault": "made_up"})
    assert verify_export(doc) == Discrepancy(5, "its hash is not the SHA-256 of its content")


def test_a_removed_claim_is_caught_where_it_was() -> None:
    doc = export_of(SEED)
    for event, effects in zip(doc["events"], derived_effects(doc), strict=True):
        event["payload"] = {**event["payload"], "v": EVENT_VERSION}
        event["effects"] = effects
    assert verify_export(doc) is None
    win = next(e for e in doc["events"] if any(x["type"] == "claim" for x in e["effects"]))
    win["effects"] = [x for x in win["effects"] if x["type"] != "claim"]
    found = verify_export(doc)
    assert found is not None and found.seq == win["seq"]


# --------------------------------------------------------------------------- system moves


def test_a_system_moves_cause_is_bao_for_a_bao_seat_else_the_clocks() -> None:
    config = HandConfig(n_seats=2, mode=Mode.ADVANCED)
    state = new_hand(config, shuffle(b"cause"), 0)
    assert system_cause(state, 0, left=False) == CAUSE_TIMEOUT
    assert system_cause(state, 0, left=True) == CAUSE_LEFT
    assert causes_allowed(state, 0) == ("timeout", "left", "bot")
    bao = replace(state, seats=(replace(state.seats[0], bao=True), *state.seats[1:]))
    assert system_cause(bao, 0, left=True, bot=True) == CAUSE_BAO
    assert causes_allowed(bao, 0) == (CAUSE_BAO,)
    after = apply(bao, Discard(0, next(k for k in range(25) if bao.seats[0].hand[k]), system=True))
    effects = move_effects(after, CAUSE_BAO)
    assert effects[-1] == {"type": "system", "seat": 0, "cause": "bao"}


# --------------------------------------------------------------------------- hidden effects


@pytest.mark.slow(seconds=30)
@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=25)
@given(seed=st.binary(min_size=1, max_size=8), n=st.integers(min_value=2, max_value=4))
def test_no_seat_reads_another_seats_hidden_effects_before_the_end(seed: bytes, n: int) -> None:
    # Advanced mode: a random bot makes faults (hidden ones too) and claims happen.
    config = HandConfig(n_seats=n, mode=Mode.ADVANCED)
    _, _, states = self_play(config, seed)
    for state in states:
        effects = json.loads(json.dumps(move_effects(state)))
        ended = state.phase is Phase.ENDED
        for seat in [*range(n), None]:
            shown = effects_for(effects, seat, ended)
            hidden = [e for e in shown if is_private_effect(e) and e.get("seat") != seat]
            if seat is None or not ended:
                assert hidden == [], (seat, hidden)
            # a seat always reads its own
            if seat is not None:
                own = [e for e in effects if is_private_effect(e) and e.get("seat") == seat]
                assert all(e in shown for e in own)
        # every fault the move made is an effect of its event, hidden ones flagged
        made = [
            (i, f.slug, f.visible)
            for i, s in enumerate(state.seats)
            for f in s.faults
            if f.move_index == state.n_moves - 1
        ]
        recorded = [
            (e["seat"], e["fault"], not e.get("hidden", False))
            for e in effects
            if e["type"] == "fault"
        ]
        assert sorted(recorded) == sorted(made)


def test_a_claim_waiting_for_the_drawer_is_hidden_from_the_others_until_the_end() -> None:
    drawn, passed = _drawer_could_win_and_passes(Mode.BASIC)
    effects = move_effects(drawn)
    waiting = {
        "type": "claim",
        "seat": 2,
        "card": "2V",
        "rule": "drawer_first",
        "pending": True,
        "hidden": True,
    }
    assert waiting in effects
    # the drawer (seat 1) must not learn that seat 2 waits on its card
    assert waiting not in effects_for(effects, 1, ended=False)
    assert waiting in effects_for(effects, 2, ended=False)
    assert waiting in effects_for(effects, 1, ended=True)
    assert waiting not in effects_for(effects, None, ended=True)
