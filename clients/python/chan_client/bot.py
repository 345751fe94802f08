"""``chan-bot``: log in, sit at a table, play whole hands through the API.

The bot decides from its own view only (``GET /hands/{id}``): the view's ``legal_moves`` and
``hand`` are fed to the rules core's heuristic (:class:`games.rules.bots.HeuristicBot`, whose
``pick`` reads the legal moves and the seat's own hand, nothing else): ù or a declaration when
offered, chíu, eat a chắn from a lone card (or a cạ from the only card of its rank), else throw
the least useful card; draw or pass otherwise. In advanced mode every ``u`` is offered (one
without a win is ù láo): the bot drops them there and lets ``auto_u`` claim a real win.

It needs the server's rules core importable (``games.rules``: pure Python, no Django): run it
from the server's checkout or environment (README.md).

Between moves it long-polls (``?wait=&after_seq=`` with ``If-None-Match``); each move carries
``expected_seq`` and an ``Idempotency-Key``; a ``stale_seq`` or ``not_your_turn`` (the server's
clock moved first) reads the view again.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from chan_client.client import ApiError, ChanClient, RetryLater, RetryPolicy
from chan_client.types import HandView

logger = logging.getLogger("chan_bot")

# Refusals that mean "the hand moved on under me": read the view again and decide again.
RACED = frozenset({"stale_seq", "not_your_turn", "wrong_phase", "hand_over"})


def choose_move(view: HandView, rng: random.Random) -> dict[str, Any] | None:
    """The move to send from this view (one of its ``legal_moves``), or None when it has none."""
    from games.rules import move_from_dict, parse_kinds
    from games.rules.bots import HeuristicBot
    from games.rules.cards import counts_of

    legal = list(view.get("legal_moves") or [])
    if view.get("mode") == "advanced":
        legal = [m for m in legal if m["type"] != "u"] or legal
    if not legal:
        return None
    moves = [move_from_dict(m) for m in legal]
    hand = counts_of(parse_kinds(view.get("hand") or []))
    picked = HeuristicBot(rng).pick(moves, hand)
    return legal[moves.index(picked)]


@dataclass
class BotResult:
    username: str
    table_id: int | None = None
    hands: list[int] = field(default_factory=list)
    outcomes: list[dict[str, Any] | None] = field(default_factory=list)  # one per hand
    by_table: dict[int, list[int]] = field(default_factory=dict)  # hand ids at each table
    moves: int = 0
    raced: Counter[str] = field(default_factory=Counter)  # refusals read again, by code
    seconds: float = 0.0


class Bot:
    """One player: a client, a random source for ties, and what it did."""

    def __init__(
        self,
        client: ChanClient,
        username: str,
        *,
        rng: random.Random | None = None,
        wait: int = 25,
        deal_timeout: float = 120.0,
    ) -> None:
        self.client = client
        self.rng = rng or random.Random()
        self.wait = wait
        self.deal_timeout = deal_timeout
        self.result = BotResult(username)

    def sit(
        self,
        *,
        table_id: int | None = None,
        room: str | None = None,
        stake: int | None = None,
        create: bool = False,
        max_seats: int = 2,
        name: str = "chan-bot",
    ) -> int:
        """Join ``table_id``, quick-join ``room``, or open a table; return the table's id."""
        if create:
            table = self.client.create_table(
                name=name, stake=stake or 100, max_seats=max_seats, room=room or "nen-dat"
            )
        elif table_id is not None:
            table = self.client.join(table_id)
        elif room is not None:
            table = self.client.quick_join(room, stake=stake)
        else:
            raise ValueError("give a table, a room, or create")
        self.result.table_id = table["id"]
        return table["id"]

    def play(self, table_id: int, *, hands: int, leave: bool = True) -> BotResult:
        """Play ``hands`` hands at the table (0: until stopped), then leave it."""
        started = time.monotonic()
        previous: int | None = None
        try:
            while hands == 0 or len(self.result.hands) < hands:
                hand_id = self.next_hand(table_id, previous)
                self.result.outcomes.append(self.play_hand(hand_id))
                self.result.hands.append(hand_id)
                self.result.by_table.setdefault(table_id, []).append(hand_id)
                previous = hand_id
        finally:
            self.result.seconds = time.monotonic() - started
        if leave:
            self.client.leave(table_id)
        return self.result

    def next_hand(self, table_id: int, previous: int | None) -> int:
        """Say ready; the hand this dealt, or the one another player's ready dealt."""
        try:
            dealt = self.client.ready(table_id)["hand_id"]
            if dealt is not None:
                return dealt
        except ApiError as e:
            if e.code != "hand_in_progress":
                raise
        deadline = time.monotonic() + self.deal_timeout
        delay = 0.1
        while time.monotonic() < deadline:
            current = self.client.table(table_id).get("current_hand_id")
            if current is not None and current != previous:
                return current
            time.sleep(delay)
            delay = min(1.0, delay * 1.5)
        raise TimeoutError(f"no hand dealt at table {table_id} in {self.deal_timeout:.0f} s")

    def play_hand(self, hand_id: int) -> dict[str, Any] | None:
        """Play my seat until the hand ends; return its outcome."""
        view, etag = self.client.hand(hand_id)
        assert view is not None
        while view["status"] != "ended":
            move = choose_move(view, self.rng)
            if move is None:  # not my turn: wait for the next event
                fresh, etag = self.client.hand(
                    hand_id, wait=self.wait, after_seq=view["seq"], etag=etag
                )
                view = fresh or view
                continue
            try:
                answer = self.client.move(hand_id, move, expected_seq=view["seq"])
            except ApiError as e:
                if e.code not in RACED:
                    raise
                self.result.raced[e.code or ""] += 1
                logger.info(
                    "hand %s: %s %s refused %s (server at seq %s, my view at %s, phase %s); "
                    "reading the view again",
                    hand_id,
                    move["type"],
                    move.get("card", ""),
                    e.code,
                    e.body.get("seq"),
                    view["seq"],
                    view.get("phase"),
                )
                view, etag = self.client.hand(hand_id)
                assert view is not None
                continue
            self.result.moves += 1
            view, etag = answer["state"], None
        return view.get("outcome")


class FeedBot:
    """One player at many tables from one process, driven by its feed (``GET /me/feed``).

    It says ready at each table, then follows its feed with long polls: on ``your_turn`` or
    ``claim_window`` it reads that hand's view and plays from it (then goes on while the view
    still offers it moves); on ``hand_ended`` it counts the hand and, while the table owes it
    hands, says ready again. Nothing is polled per table: one long poll waits for all of them.
    """

    def __init__(
        self,
        client: ChanClient,
        username: str,
        *,
        rng: random.Random | None = None,
        wait: int = 25,
        timeout: float = 600.0,
    ) -> None:
        self.client = client
        self.rng = rng or random.Random()
        self.wait = wait
        self.timeout = timeout
        self.result = BotResult(username)
        self.hands_by_table: dict[int, list[int]] = {}

    def play(self, table_ids: Sequence[int], *, hands: int = 1, leave: bool = True) -> BotResult:
        """Play ``hands`` hands at each table, all at once; then leave them."""
        started = time.monotonic()
        self.hands_by_table = {t: [] for t in table_ids}
        self.result.by_table = self.hands_by_table
        cursor = self.client.feed()["head"]  # what happened before this run is not ours
        try:
            for table_id in table_ids:
                self._ready(table_id)
            while any(len(h) < hands for h in self.hands_by_table.values()):
                if time.monotonic() - started > self.timeout:
                    raise TimeoutError(
                        f"{self.result.username}: hands unfinished after "
                        f"{self.timeout:.0f} s: {self.hands_by_table}"
                    )
                page = self.client.feed(after=cursor, wait=self.wait)
                cursor = page["next_after"]
                for entry in page["entries"]:
                    self._on(entry, hands)
        finally:
            self.result.seconds = time.monotonic() - started
        if leave:
            for table_id in table_ids:
                self.client.leave(table_id)
        return self.result

    def _ready(self, table_id: int) -> None:
        try:
            self.client.ready(table_id)
        except ApiError as e:
            if e.code != "hand_in_progress":
                raise

    def _on(self, entry: dict[str, Any], hands: int) -> None:
        table_id, hand_id = entry.get("table_id"), entry.get("hand_id")
        if table_id not in self.hands_by_table or hand_id is None:
            return
        if entry["kind"] in ("your_turn", "claim_window"):
            self._move_while_offered(hand_id)
        elif entry["kind"] == "hand_ended":
            done = self.hands_by_table[table_id]
            if hand_id not in done:
                done.append(hand_id)
                self.result.hands.append(hand_id)
                view, _etag = self.client.hand(hand_id)
                self.result.outcomes.append(view.get("outcome") if view is not None else None)
                if len(done) < hands:
                    self._ready(table_id)

    def _move_while_offered(self, hand_id: int) -> None:
        view, _etag = self.client.hand(hand_id)
        while view is not None and view["status"] != "ended":
            move = choose_move(view, self.rng)
            if move is None:
                return
            try:
                view = self.client.move(hand_id, move, expected_seq=view["seq"])["state"]
            except ApiError as e:
                if e.code not in RACED:
                    raise
                self.result.raced[e.code or ""] += 1
                return  # the hand moved on: the feed says what comes next
            self.result.moves += 1


DEFAULT_URL = "http://127.0.0.1:8000"  # `make run` on its default PORT


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="chan-bot",
        description="Log in (registering if needed), sit at a table and play hands with the "
        "rules core's heuristic, through the Chắn API. Prints `table <id>` once seated and a JSON "
        "summary at the end.",
    )
    p.add_argument(
        "--url",
        default=os.environ.get("CHAN_URL") or DEFAULT_URL,
        help=f"the server's base URL (default: $CHAN_URL, else {DEFAULT_URL}; now %(default)s)",
    )
    p.add_argument("--username", required=True)
    p.add_argument(
        "--password",
        default=os.environ.get("CHAN_BOT_PASSWORD"),
        help="default: $CHAN_BOT_PASSWORD",
    )
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--table", type=int, action="append", help="join this table (repeat: several tables)"
    )
    where.add_argument("--room", help="quick-join this room (a slug, e.g. nen-dat)")
    where.add_argument("--create", action="store_true", help="open a table (basic mode)")
    p.add_argument("--stake", type=int, help="the stake (quick-join: exactly this stake)")
    p.add_argument("--max-seats", type=int, default=2, help="with --create (default 2)")
    p.add_argument(
        "--tables",
        type=int,
        default=1,
        help="with --create or --room: open or quick-join this many tables and play them all at "
        "once, driven by the player's feed (default 1)",
    )
    p.add_argument(
        "--hands", type=int, default=1, help="hands to play (at each table); 0 = until stopped"
    )
    p.add_argument("--no-leave", action="store_true", help="stay seated after the last hand")
    p.add_argument("--wait", type=int, default=25, help="long-poll seconds (≤ 30)")
    p.add_argument("--attempts", type=int, default=8, help="tries per request (429, 5xx)")
    p.add_argument("--max-delay", type=float, default=30.0, help="longest wait between tries")
    p.add_argument("--seed", type=int, help="seed of the bot's tie-breaks")
    p.add_argument("-v", "--verbose", action="store_true", help="log each refused move")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s chan-bot %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # -v: the bot's lines, not each request
    if not args.password:
        print("chan-bot: give --password or set CHAN_BOT_PASSWORD", file=sys.stderr)
        return 2
    try:
        import games.rules  # noqa: F401
    except ImportError:
        print(
            "chan-bot: the rules core (games.rules) is not importable; run it from the server's "
            "checkout or put it on PYTHONPATH",
            file=sys.stderr,
        )
        return 2
    retry = RetryPolicy(attempts=args.attempts, max_delay=args.max_delay)
    with ChanClient(args.url, retry=retry) as client:
        rng = random.Random(args.seed)
        bot = Bot(client, args.username, rng=rng, wait=args.wait)
        try:
            client.login_or_register(args.username, args.password)
            table_ids = list(args.table or [])
            for n in range(0 if table_ids else max(1, args.tables)):
                table_ids.append(
                    bot.sit(
                        room=args.room,
                        stake=args.stake,
                        create=args.create,
                        max_seats=args.max_seats,
                        name=f"{args.username}'s table {n + 1}",
                    )
                )
            for table_id in table_ids:
                if args.table:
                    client.join(table_id)
                print(f"table {table_id}", flush=True)
            if len(table_ids) == 1:
                bot.play(table_ids[0], hands=args.hands, leave=not args.no_leave)
            else:  # many tables from one process: the feed says where to play
                many = FeedBot(client, args.username, rng=rng, wait=args.wait)
                bot.result = many.result
                many.play(table_ids, hands=max(1, args.hands), leave=not args.no_leave)
            bot.result.table_id = table_ids[0]
            code = 0
        except RetryLater as e:
            print(
                f"chan-bot {args.username}: the server refused ({e.status} {e.code}: {e.detail}) "
                f"and asks for a wait of {e.retry_after:.0f} s, longer than --max-delay "
                f"({args.max_delay:g} s): try again after {e.retry_at:%Y-%m-%d %H:%M:%S} UTC",
                file=sys.stderr,
            )
            code = 1
        except (ApiError, TimeoutError, httpx.HTTPError) as e:
            print(f"chan-bot {args.username}: {e}", file=sys.stderr)
            code = 1
        except KeyboardInterrupt:
            code = 130
        outcomes = dict(zip(bot.result.hands, bot.result.outcomes, strict=False))
        summary = {
            "username": args.username,
            "table_id": bot.result.table_id,
            "hands": bot.result.hands,
            "outcomes": bot.result.outcomes,
            "tables": [
                {
                    "table_id": table_id,
                    "hands": hands,
                    "outcomes": [outcomes.get(hand_id) for hand_id in hands],
                }
                for table_id, hands in bot.result.by_table.items()
            ],
            "moves": bot.result.moves,
            "raced": dict(bot.result.raced),
            "requests": client.stats.requests,
            "retries": client.stats.retries,
            "statuses": {str(k): v for k, v in sorted(client.stats.statuses.items())},
            "seconds": round(bot.result.seconds, 3),
            "ok": code == 0,
        }
        print(json.dumps(summary), flush=True)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
