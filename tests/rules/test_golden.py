"""Golden playthroughs: whole hands from fixed decks, every move's resulting state checked
against a file in ``tests/rules/golden/``.

Regenerate (after a deliberate rules change, then review the diff):
    .venv/bin/python tests/rules/test_golden.py --regenerate
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from games.rules.bots import make_bot  # noqa: E402
from games.rules.cards import CODES  # noqa: E402
from games.rules.deck import parse_deck, shuffle  # noqa: E402
from games.rules.engine import apply, new_hand  # noqa: E402
from games.rules.moves import move_from_dict  # noqa: E402
from games.rules.ruleset import build_ruleset  # noqa: E402
from games.rules.state import HandConfig, Mode, Phase  # noqa: E402
from games.rules.views import full_view  # noqa: E402

GOLDEN = Path(__file__).resolve().parent / "golden"
# name -> (seats, dealer, deck seed, bot, mode, preset); chosen so one ends ù, one hòa.
CASES = {
    "four_seats_win": (4, 2, b"golden-win", "heuristic", "basic", "chan_van_van"),
    "two_seats_hoa": (2, 0, b"golden-hoa-0", "random", "basic", "chan_van_van"),
    "three_seats_advanced": (3, 1, b"golden-adv", "heuristic", "advanced", "thapthanh"),
}


def _config(data: dict) -> HandConfig:
    return HandConfig(
        n_seats=data["n_seats"],
        mode=Mode(data["mode"]),
        ruleset=build_ruleset({"preset": data["preset"]}),
    )


def generate(name: str) -> dict:
    n, dealer, deck_seed, bot_name, mode, preset = CASES[name]
    deck = shuffle(deck_seed)
    data = {"n_seats": n, "dealer": dealer, "mode": mode, "preset": preset}
    data["deck"] = [CODES[k] for k in deck]
    state = new_hand(_config(data), deck, dealer)
    bot = make_bot(bot_name, random.Random(name))
    steps = []
    while state.phase is not Phase.ENDED:
        move = bot.choose(state, state.turn)
        state = apply(state, move)
        steps.append(
            {"move": move.to_dict(), "events": list(state.events), "state": full_view(state)}
        )
    data["steps"] = steps
    return data


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_playthrough(name: str) -> None:
    data = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    state = new_hand(_config(data), parse_deck(data["deck"]), data["dealer"])
    for i, step in enumerate(data["steps"]):
        state = apply(state, move_from_dict(step["move"]))
        assert list(state.events) == step["events"], f"step {i}"
        assert json.loads(json.dumps(full_view(state))) == step["state"], f"step {i}"
    assert state.phase is Phase.ENDED


def test_golden_files_cover_a_win_and_a_hoa() -> None:
    results = set()
    for name in CASES:
        data = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
        results.add(data["steps"][-1]["state"]["outcome"]["result"])
    assert {"u", "hoa"} <= results


if __name__ == "__main__" and "--regenerate" in sys.argv:
    for case in CASES:
        out = GOLDEN / f"{case}.json"
        data = generate(case)
        steps = data.pop("steps")
        head = json.dumps(data, ensure_ascii=False)[:-1]
        lines = ",\n".join(json.dumps(s, ensure_ascii=False, separators=(",", ":")) for s in steps)
        out.write_text(f'{head}, "steps": [\n{lines}\n]}}\n', encoding="utf-8")
        print(out, json.loads(out.read_text())["steps"][-1]["state"]["outcome"])
