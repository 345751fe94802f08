"""Rooms, tables, seats, hands, hand seats and the append-only hand log (RULES.md §2–3, §11–13).

A hand's state is the replay of its ``HandEvent`` log from its deal (``games.hand_store``); no
state is persisted beside the log. The money terms of a hand (stake, room, mode, ruleset) are
frozen on the ``Hand`` row at the deal, and its players are ``HandSeat`` rows.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pghistory
from django.conf import settings
from django.contrib.postgres.indexes import BrinIndex
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce, Length
from django.db.models.lookups import Exact, GreaterThanOrEqual, LessThanOrEqual

from accounts.models import HEX_DIGITS, only_chars
from games.rules.fair_deal import CLIENT_SEED_MAX, new_server_seed, seed_commitment
from games.rules.moves import MOVE_TYPES
from games.rules.quan import FeeSchedule
from games.rules.records import RECORD_TYPES
from games.rules.results import HandResult
from games.rules.ruleset import DEFAULT_PRESET, Ruleset, ruleset_from_stored

MIN_SEATS, MAX_SEATS = 2, 4
MAX_TIMEOUT_SECONDS = 3600
DECK_SIZE = 100
# Seq 0 is the deal; every later event is a move of one of the rules core's move types, or
# (after the end) a record of its settlement or void (games.rules.records: no move, no seat).
EVENT_TYPES = ("deal", *sorted(MOVE_TYPES), *sorted(RECORD_TYPES))
ROOM_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-"
ROOM_MAX_LENGTH = 32
DEFAULT_ROOM = "nen-dat"
VISIBLE_ASCII = "".join(chr(c) for c in range(0x21, 0x7F))
IDEMPOTENCY_KEY_MAX_LENGTH = 128
MAX_BOTS, MAX_BOT_DELAY_SECONDS = MAX_SEATS - 1, 10


def default_ruleset_spec() -> dict[str, Any]:
    return {"preset": DEFAULT_PRESET, "overrides": {}}


class JsonArrayLength(models.Func):
    """The length of a JSON array (PostgreSQL's JSONB_ARRAY_LENGTH; a non-array is an error)."""

    function = "JSONB_ARRAY_LENGTH"
    output_field = models.IntegerField()


class Mode(models.TextChoices):
    BASIC = "basic", "Basic (faults refused)"
    ADVANCED = "advanced", "Advanced (faults allowed and punished)"


@pghistory.track(
    pghistory.InsertEvent(),
    pghistory.UpdateEvent(),
    pghistory.DeleteEvent(),
    exclude=["created_at", "updated_at"],
    model_name="RoomEvent",
)
class Room(models.Model):
    """A room of tables (RULES.md §11): who may play there and the fees its hands pay.

    ``fees`` is the room's fee schedule, in percent of each seat's gain in a hand:
    ``{"declared": 5, "auto": 10}`` (by how the winner declared), or ``{"by_players": {"2": 4,
    "3": 3, "4": 2}}``; ``xuong_sai`` (optional) the fee on a xướng sai by number of players, and
    ``xuong_sai_settled`` false where a xướng sai is neither paid nor penalised (Nền đất).
    """

    slug = models.SlugField(max_length=ROOM_MAX_LENGTH, unique=True)
    name = models.CharField(max_length=64)
    position = models.PositiveSmallIntegerField(default=0, help_text="Order in the lobby.")
    min_balance = models.PositiveBigIntegerField(default=0, help_text="Quan needed to enter.")
    min_level = models.PositiveIntegerField(default=0)
    min_vip_points = models.PositiveIntegerField(default=0)
    needs_badge = models.BooleanField(default=False, help_text="A reputation badge is needed.")
    vip = models.BooleanField(default=False)
    fees = models.JSONField(default=dict)
    xuong_sai_settled = models.BooleanField(
        default=True, help_text="False: a xướng sai is neither paid nor penalised here."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "slug"]
        constraints = [
            models.CheckConstraint(
                condition=Q(GreaterThanOrEqual(Length("slug"), 1), only_chars("slug", ROOM_CHARS)),
                name="games_room_slug_chars",
            ),
        ]

    def __str__(self) -> str:
        return self.name


# History: the terms staff may edit, not the status (moved by the services every hand) nor the
# fixed deck (secret, auditors only).
@pghistory.track(
    pghistory.InsertEvent(),
    pghistory.UpdateEvent(),
    exclude=["status", "fixed_deck", "next_seed", "created_at", "updated_at"],
    model_name="TableEvent",
)
class Table(models.Model):
    """A table in a room: its stake, seats, mode, ruleset and the deadlines of its decisions."""

    class Status(models.TextChoices):
        OPEN = "open", "Open (between hands)"
        PLAYING = "playing", "A hand is being played"
        CLOSED = "closed", "Closed"

    name = models.CharField(max_length=64)
    room = models.ForeignKey(
        Room,
        on_delete=models.PROTECT,
        to_field="slug",
        default=DEFAULT_ROOM,
        related_name="tables",
    )
    stake = models.PositiveIntegerField(help_text="Quan per point.")
    max_seats = models.PositiveSmallIntegerField(default=MAX_SEATS)
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.BASIC)
    ruleset = models.JSONField(
        default=default_ruleset_spec, help_text='{"preset": …, "overrides": {…}}, validated.'
    )
    turn_timeout = models.PositiveSmallIntegerField(default=30)
    tra_cua_timeout = models.PositiveSmallIntegerField(default=15)
    declare_timeout = models.PositiveSmallIntegerField(default=60)
    ready_timeout = models.PositiveSmallIntegerField(default=60)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_tables"
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    fixed_deck = models.JSONField(
        null=True, blank=True, help_text="Test/dev only: 100 kind codes dealt every hand."
    )
    spectators = models.BooleanField(
        default=True, help_text="Anyone signed in may watch its hands (public view only)."
    )
    fixed_dealer = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Test/dev only: the table seat that deals the first hand."
    )
    practice = models.BooleanField(
        default=False,
        help_text="A practice table (server bots at some seats): no Quan, fees, stats or XP.",
    )
    bot_delay = models.PositiveSmallIntegerField(
        default=1, help_text="Seconds a server bot waits before it moves (0–10)."
    )
    # The fair deal (games.rules.fair_deal): the next hand's server seed, drawn before any seat's
    # seed is known; its SHA-256 (``next_seed_hash``) is public on the table, the seed is secret
    # until that hand ends. Each deal uses it and draws the next one.
    next_seed = models.CharField(
        max_length=64,
        default=new_server_seed,
        help_text="Secret: the next hand's server seed (hex); its SHA-256 is public.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(stake__gt=0), name="games_table_stake_positive"),
            models.CheckConstraint(
                condition=Q(bot_delay__lte=MAX_BOT_DELAY_SECONDS),
                name="games_table_bot_delay_0_10",
            ),
            models.CheckConstraint(
                condition=Q(max_seats__gte=MIN_SEATS, max_seats__lte=MAX_SEATS),
                name="games_table_max_seats_2_4",
            ),
            models.CheckConstraint(
                condition=Q(mode__in=Mode.values), name="games_table_mode_valid"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["open", "playing", "closed"]),
                name="games_table_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(
                    turn_timeout__gte=1,
                    turn_timeout__lte=MAX_TIMEOUT_SECONDS,
                    tra_cua_timeout__gte=1,
                    tra_cua_timeout__lte=MAX_TIMEOUT_SECONDS,
                    declare_timeout__gte=1,
                    declare_timeout__lte=MAX_TIMEOUT_SECONDS,
                    ready_timeout__gte=1,
                    ready_timeout__lte=MAX_TIMEOUT_SECONDS,
                ),
                name="games_table_timeouts_in_range",
            ),
            models.CheckConstraint(
                condition=Q(fixed_dealer__isnull=True) | Q(fixed_dealer__lt=F("max_seats")),
                name="games_table_fixed_dealer_seated",
            ),
            models.CheckConstraint(
                condition=Q(fixed_dealer__isnull=True) | Q(fixed_deck__isnull=False),
                name="games_table_fixed_dealer_needs_deck",
            ),
            models.CheckConstraint(
                condition=Q(fixed_deck__isnull=True)
                | Q(Exact(JsonArrayLength("fixed_deck"), DECK_SIZE)),
                name="games_table_fixed_deck_100_cards",
            ),
            models.CheckConstraint(
                condition=GreaterThanOrEqual(Length("name"), 1), name="games_table_name_not_empty"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} (#{self.pk}, {self.room_id}, stake {self.stake})"

    @property
    def next_seed_hash(self) -> str:
        """The public commitment to the next hand's server seed."""
        return seed_commitment(bytes.fromhex(self.next_seed))


@pghistory.track(
    pghistory.InsertEvent(),
    pghistory.UpdateEvent(),
    pghistory.DeleteEvent(),
    fields=["table", "player", "number", "auto_u", "auto_chiu"],
    model_name="SeatEvent",
)
class Seat(models.Model):
    """A player sitting at a table. ``ready_at``: when the player last said ready (set exactly
    while ``ready``). A player who stands up mid-hand keeps its seat until the hand ends; the
    hand's ``HandSeat.left_at`` says so (the one record of it)."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seats")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="seats"
    )
    number = models.PositiveSmallIntegerField()
    ready = models.BooleanField(default=False)
    ready_at = models.DateTimeField(null=True, blank=True)
    auto_u = models.BooleanField(default=True)
    auto_chiu = models.BooleanField(default=True)
    client_seed = models.CharField(
        max_length=CLIENT_SEED_MAX,
        blank=True,
        default="",
        help_text="Secret until the hand ends: the seed this seat gave with ready for the next "
        "deal (empty: none).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["table_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["table", "number"], name="games_seat_unique_number"),
            models.UniqueConstraint(fields=["table", "player"], name="games_seat_unique_player"),
            models.CheckConstraint(condition=Q(number__lt=MAX_SEATS), name="games_seat_number_0_3"),
            models.CheckConstraint(
                condition=Q(ready=True, ready_at__isnull=False)
                | Q(ready=False, ready_at__isnull=True),
                name="games_seat_ready_at_iff_ready",
            ),
        ]

    def __str__(self) -> str:
        return f"table {self.table_id} seat {self.number}: {self.player_id}"


# History of a hand's row: its voiding only (the log is the hand's own history).
@pghistory.track(
    pghistory.UpdateEvent(), fields=["voided_at", "void_reason"], model_name="HandVoidEvent"
)
class Hand(models.Model):
    """One hand at a table. Everything needed to replay it lives on this row, its ``HandSeat``
    rows (the players, in play order, with their preferences at the deal) and its log.

    The money terms (``stake``, ``room``, ``mode``, ``ruleset``) are copied from the table at
    the deal and never change, and so are the room's (``fees``, ``xuong_sai_settled``): a room
    whose fees change mid-hand settles its playing hands on the terms they were dealt under. ``seed`` is secret until the hand ends; ``seed_hash`` (SHA-256
    of the seed bytes, hex) is public from the start.
    """

    class Status(models.TextChoices):
        PLAYING = "playing", "Playing"
        ENDED = "ended", "Ended"

    # (No index of its own: games_hand_unique_number's (table_id, number) serves a table's
    # hands, and one index fewer is one entry fewer at each deal and each hand's end.)
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="hands", db_index=False)
    number = models.PositiveIntegerField()
    n_seats = models.PositiveSmallIntegerField()
    dealer = models.PositiveSmallIntegerField()
    stake = models.PositiveIntegerField(help_text="Quan per point, frozen at the deal.")
    room = models.ForeignKey(Room, on_delete=models.PROTECT, to_field="slug", related_name="hands")
    # Null only for a hand dealt by a process older than these columns (a rolling deploy): its
    # room's terms of the moment apply (room_terms).
    fees = models.JSONField(
        null=True,
        help_text="The room's fee schedule at the deal: what this hand's settlement charges.",
    )
    xuong_sai_settled = models.BooleanField(
        null=True,
        help_text="The room's xướng sai rule at the deal: whether this hand settles one.",
    )
    mode = models.CharField(max_length=8, choices=Mode.choices)
    ruleset = models.JSONField(
        help_text="The complete ruleset at the deal, by value (Ruleset.to_dict(): every cước, "
        "the gà table, every option, the preset and its version)."
    )
    previous_winner = models.PositiveSmallIntegerField(null=True, blank=True)
    deck = models.JSONField(
        null=True, blank=True, help_text="A fixed deck (test/dev tables); else the seed's shuffle."
    )
    seed = models.CharField(max_length=64, help_text="Secret until the hand ends (hex).")
    seed_hash = models.CharField(max_length=64, help_text="SHA-256 of the seed (hex), public.")
    # The fair deal (games.rules.fair_deal); null for a hand dealt from the server's seed alone
    # (before the fair deal).
    client_seeds = models.JSONField(
        null=True,
        blank=True,
        help_text="Each hand seat's seed in seat order (empty: none), mixed into the deck; "
        "secret until the end.",
    )
    next_seed_hash = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="The commitment to the next hand's server seed, made at this deal (a chain; "
        "empty for hands dealt before the fair deal).",
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PLAYING)
    result = models.JSONField(null=True, blank=True)
    seq = models.PositiveIntegerField(default=0, help_text="The seq of the last event.")
    seats_version = models.PositiveSmallIntegerField(
        default=0, help_text="Raised whenever one of its seats changes (a player leaves)."
    )
    last_event_at = models.DateTimeField()
    deadline_at = models.DateTimeField(
        null=True, blank=True, help_text="When the server moves for the seat to act (the clock)."
    )
    ended_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(
        null=True, blank=True, help_text="When its settlement was booked in the Quan ledger."
    )
    quan = models.JSONField(
        null=True, blank=True, help_text="The booked settlement in Quan (games.quan), per seat."
    )
    voided_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When staff voided the hand (its settlement reversed; its log kept).",
    )
    void_reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        # No index names a column a move changes (seq, last_event_at, deadline_at, updated_at),
        # so a move's update of its hand stays on the row's page (a HOT update, games 0035;
        # the clock's sweep finds overdue hands through games_hand_one_playing_per_table).
        indexes = [
            models.Index(
                fields=["ended_at"],
                condition=Q(status="ended", settled_at__isnull=True),
                name="games_hand_unsettled",
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["table", "number"], name="games_hand_unique_number"),
            models.UniqueConstraint(
                fields=["table"],
                condition=Q(status="playing"),
                name="games_hand_one_playing_per_table",
            ),
            models.CheckConstraint(
                condition=Q(n_seats__gte=MIN_SEATS, n_seats__lte=MAX_SEATS),
                name="games_hand_n_seats_2_4",
            ),
            models.CheckConstraint(
                condition=Q(dealer__lt=F("n_seats")), name="games_hand_dealer_seated"
            ),
            models.CheckConstraint(
                condition=Q(previous_winner__isnull=True) | Q(previous_winner__lt=F("n_seats")),
                name="games_hand_previous_winner_seated",
            ),
            models.CheckConstraint(condition=Q(mode__in=Mode.values), name="games_hand_mode_valid"),
            models.CheckConstraint(
                condition=Q(voided_at__isnull=True) | Q(status="ended", settled_at__isnull=False),
                name="games_hand_voided_only_once_settled",
            ),
            models.CheckConstraint(
                condition=Q(status="playing", result__isnull=True, ended_at__isnull=True)
                | Q(status="ended", result__isnull=False, ended_at__isnull=False),
                name="games_hand_result_iff_ended",
            ),
            models.CheckConstraint(
                condition=Q(status="playing", deadline_at__isnull=False)
                | Q(status="ended", deadline_at__isnull=True),
                name="games_hand_deadline_iff_playing",
            ),
            models.CheckConstraint(condition=Q(stake__gt=0), name="games_hand_stake_positive"),
            models.CheckConstraint(
                condition=Q(settled_at__isnull=True, quan__isnull=True)
                | Q(status="ended", settled_at__isnull=False, quan__isnull=False),
                name="games_hand_settled_after_its_end",
            ),
            models.CheckConstraint(
                condition=Exact(Length("seed"), 64), name="games_hand_seed_256_bits"
            ),
            models.CheckConstraint(
                condition=Exact(Length("seed_hash"), 64), name="games_hand_seed_hash_sha256"
            ),
            models.CheckConstraint(
                condition=only_chars("seed", HEX_DIGITS), name="games_hand_seed_lowercase_hex"
            ),
            models.CheckConstraint(
                condition=only_chars("seed_hash", HEX_DIGITS),
                name="games_hand_seed_hash_lowercase_hex",
            ),
            models.CheckConstraint(condition=Q(number__gte=1), name="games_hand_number_gte_1"),
            models.CheckConstraint(
                condition=Q(ended_at__isnull=True) | Q(ended_at__gte=F("created_at")),
                name="games_hand_ended_after_created",
            ),
            models.CheckConstraint(
                condition=Q(deck__isnull=True) | Q(Exact(JsonArrayLength("deck"), DECK_SIZE)),
                name="games_hand_deck_100_cards",
            ),
        ]

    def __str__(self) -> str:
        return f"hand {self.table_id}/{self.number} (#{self.pk}, {self.status})"

    def room_terms(self) -> tuple[FeeSchedule, bool]:
        """The fee schedule (typed) and the xướng sai rule this hand settles on: frozen at the
        deal, or its room's own for a hand dealt without them (see ``fees``)."""
        if self.fees is not None and self.xuong_sai_settled is not None:
            return FeeSchedule.from_dict(self.fees), self.xuong_sai_settled
        return FeeSchedule.from_dict(self.room.fees), self.room.xuong_sai_settled

    def frozen_ruleset(self) -> Ruleset:
        """The ruleset the hand was dealt under, from its own record only (``ruleset``); a
        record older than frozen tables (``{preset, overrides}``) is upcast."""
        return ruleset_from_stored(self.ruleset)

    def outcome_result(self) -> HandResult:
        """The one reading of ``result``: the typed outcome, win, declaration and points
        settlement (every part None while the hand is played). Nothing else walks the JSON."""
        return HandResult.from_dict(self.result)

    def seat_list(self) -> list[HandSeat]:
        """The hand's seats in play order (prefetched as ``hand_seats`` when the caller did)."""
        return sorted(self.hand_seats.all(), key=lambda s: s.position)

    def seat_of(self, user_id: int) -> int | None:
        """The hand seat (play position) of this user, or None for a non-participant."""
        for seat in self.seat_list():
            if seat.user_id == user_id:
                return seat.position
        return None


class HandSeat(models.Model):
    """A player in a hand: its ``position`` in play order (the rules core's seat), its table
    seat, its preferences at the deal, and ``left_at`` once it stood up mid-hand (the server then
    plays it after the auto-play delay to the end of the hand)."""

    hand = models.ForeignKey(Hand, on_delete=models.CASCADE, related_name="hand_seats")
    position = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="hand_seats"
    )
    table_seat = models.PositiveSmallIntegerField()
    auto_u = models.BooleanField()
    auto_chiu = models.BooleanField()
    left_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["hand_id", "position"]
        indexes = [models.Index(fields=["user", "-hand"], name="games_handseat_user_hands")]
        constraints = [
            models.UniqueConstraint(
                fields=["hand", "position"], name="games_handseat_unique_position"
            ),
            models.UniqueConstraint(fields=["hand", "user"], name="games_handseat_unique_user"),
            models.UniqueConstraint(
                fields=["hand", "table_seat"], name="games_handseat_unique_table_seat"
            ),
            models.CheckConstraint(
                condition=Q(position__lt=MAX_SEATS, table_seat__lt=MAX_SEATS),
                name="games_handseat_seats_0_3",
            ),
        ]

    def __str__(self) -> str:
        return f"hand {self.hand_id} seat {self.position}: {self.user_id}"

    @property
    def left(self) -> bool:
        return self.left_at is not None


class PotShare(models.Model):
    """What one player has put into a table's gà góp pot since it was last won (RULES.md
    §10.10): refunded when the player leaves, the measure of a newcomer's buy-in. The shares of
    a table always sum to its pot's balance (``manage.py ledger_check``)."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="pot_shares")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="pot_shares"
    )
    amount = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["table_id", "user_id"]
        constraints = [
            models.UniqueConstraint(fields=["table", "user"], name="games_potshare_unique_player")
        ]

    def __str__(self) -> str:
        return f"table {self.table_id} pot: {self.user_id} put in {self.amount}"


class AppendOnlyError(Exception):
    """A hand event was about to be changed or deleted: the log is append-only."""


class HandEventQuerySet(models.QuerySet["HandEvent"]):
    def of_hand(self, hand: Hand) -> HandEventQuerySet:
        """The hand's events, read from its partition alone (the key is its ``created_at``)."""
        return self.filter(hand_id=hand.pk, hand_created_at=hand.created_at)

    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("Hand events are append-only.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("Hand events are append-only.")


HandEventManager = models.Manager.from_queryset(HandEventQuerySet)


class HandEvent(models.Model):
    """One entry of a hand's log: ``payload`` is the move as JSON, ``effects`` what it did.

    Seq 0 is the deal (a system event with no move); moves are 1, 2, 3 … in order. After the
    end come the records (``games.rules.records``): ``settled`` when its Quan are booked, and
    ``voided`` if staff void it; their payload is the record, not a move.
    Each row is appended by ``games.services.hand_log.hand_event_append``, hash-chained to the
    previous one.
    """

    # no index of its own: the unique (hand, seq, hand_created_at) index leads with it
    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="events", db_index=False)
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=16)
    actor_seat = models.PositiveSmallIntegerField(null=True, blank=True)
    system = models.BooleanField(default=False)
    bot = models.BooleanField(default=False, help_text="A server bot's move (practice tables).")
    payload = models.JSONField(default=dict)
    effects = models.JSONField(default=list)
    prev_hash = models.CharField(
        max_length=64, help_text="The previous event's hash (the hand's seed_hash for the deal)."
    )
    hash = models.CharField(
        max_length=64, help_text="SHA-256 (hex) of this event's canonical JSON (games.rules.chain)."
    )
    mac = models.CharField(
        max_length=64,
        blank=True,
        default="",
        db_default="",
        help_text="HMAC-SHA256 (hex) of its hash under the record key (games.rules.record_mac); "
        "empty on events appended before keys existed.",
    )
    mac_key = models.CharField(
        max_length=32,
        blank=True,
        default="",
        db_default="",
        help_text="The id of the record key its MAC is under.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    hand_created_at = models.DateTimeField(
        editable=False, help_text="The hand's created_at: the log's partition key."
    )

    objects: ClassVar[HandEventManager] = HandEventManager()

    class Meta:
        ordering = ["hand_id", "seq"]
        constraints = [
            # (hand, seq) is unique: PostgreSQL wants the partition key in a partitioned table's
            # unique constraints, and hand_created_at is the hand's (games 0027's triggers)
            models.UniqueConstraint(
                fields=["hand", "seq", "hand_created_at"], name="games_handevent_unique_seq"
            ),
            models.CheckConstraint(
                condition=Q(system=True) | Q(actor_seat__isnull=False),
                name="games_handevent_actor_or_system",
            ),
            models.CheckConstraint(
                condition=Q(bot=False) | Q(system=False, actor_seat__isnull=False),
                name="games_handevent_bot_moves_are_not_system",
            ),
            models.CheckConstraint(
                condition=Q(actor_seat__isnull=True) | Q(actor_seat__lt=MAX_SEATS),
                name="games_handevent_actor_0_3",
            ),
            models.CheckConstraint(
                condition=Q(seq=0, type="deal") | (Q(seq__gt=0) & ~Q(type="deal")),
                name="games_handevent_deal_is_seq_0",
            ),
            models.CheckConstraint(
                condition=Q(type__in=EVENT_TYPES), name="games_handevent_type_known"
            ),
            models.CheckConstraint(
                condition=Q(seq__gt=0) | Q(system=True, actor_seat__isnull=True),
                name="games_handevent_deal_by_the_system",
            ),
            # A move's row repeats its payload's type and seat (the payload is what is replayed).
            models.CheckConstraint(
                condition=Q(seq=0) | Q(type__in=sorted(RECORD_TYPES)) | Q(actor_seat__isnull=False),
                name="games_handevent_move_has_a_seat",
            ),
            # A settlement's or a void's record is the system's, with no seat and no bot.
            models.CheckConstraint(
                condition=~Q(type__in=sorted(RECORD_TYPES))
                | Q(seq__gt=0, system=True, bot=False, actor_seat__isnull=True),
                name="games_handevent_record_by_the_system",
            ),
            models.CheckConstraint(
                condition=Q(seq=0)
                | Q(
                    Exact(
                        Coalesce(KT("payload__type"), Value(""), output_field=models.TextField()),
                        F("type"),
                    )
                ),
                name="games_handevent_payload_type",
            ),
            models.CheckConstraint(
                condition=Q(seq=0)
                | Q(type__in=sorted(RECORD_TYPES))
                | Q(
                    Exact(
                        Coalesce(Cast(KT("payload__seat"), models.IntegerField()), Value(-1)),
                        F("actor_seat"),
                    )
                ),
                name="games_handevent_payload_seat",
            ),
        ]

    def __str__(self) -> str:
        return f"hand {self.hand_id} #{self.seq} {self.type}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError("Hand events are append-only.")
        if self.hand_created_at is None:
            self.hand_created_at = self.hand.created_at
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("Hand events are append-only.")


class IdempotencyRecord(models.Model):
    """The response to a move request sent with an ``Idempotency-Key``, kept for retries."""

    # (No index of its own: games_idempotency_unique_key's (user_id, key) serves the player's
    # records, and each move with a key writes one index entry fewer.)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="idempotency_records",
        db_index=False,
    )
    key = models.CharField(max_length=IDEMPOTENCY_KEY_MAX_LENGTH)
    hand = models.ForeignKey(Hand, on_delete=models.CASCADE, related_name="idempotency_records")
    request_hash = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField()
    response_body = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="games_idempotency_unique_key"),
            models.CheckConstraint(
                condition=Q(response_status__gte=100, response_status__lte=599),
                name="games_idempotency_status_http",
            ),
            models.CheckConstraint(
                condition=Q(
                    GreaterThanOrEqual(Length("key"), 1),
                    LessThanOrEqual(Length("key"), IDEMPOTENCY_KEY_MAX_LENGTH),
                    only_chars("key", VISIBLE_ASCII),
                ),
                name="games_idempotency_key_visible_ascii",
            ),
            models.CheckConstraint(
                condition=Q(
                    Exact(Length("request_hash"), 64), only_chars("request_hash", HEX_DIGITS)
                ),
                name="games_idempotency_request_hash_sha256",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.key} → {self.response_status}"


class FeedEntry(models.Model):
    """One line of a player's feed (``GET /me/feed``): something that concerns the player at one
    of its tables or in its account, numbered ``seq`` 1, 2, 3 … per player in commit order.
    Append-only: written by the services in the transaction of what it reports
    (``games.services.feed``), never edited; ``key`` says the same fact once. Entries older
    than ``CHAN_FEED_RETENTION_DAYS`` are deleted by the beat (each player's last one kept)."""

    # (No index of its own: games_feed_unique_seq's (user_id, seq) serves the player's feed,
    # and each entry a move writes is one index entry fewer.)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="feed_entries",
        db_index=False,
    )
    seq = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=32, help_text="games.live.kinds.FEED_KINDS")
    key = models.CharField(max_length=100, help_text="The fact it reports, once per player.")
    table_id = models.BigIntegerField(null=True, blank=True)
    hand_id = models.BigIntegerField(null=True, blank=True)
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user_id", "seq"]
        # The retention sweep's range (games.services.feed.feed_prune): rows are appended in
        # time order, so a block range index is a few pages however long the feed grows.
        indexes = [BrinIndex(fields=["created_at"], name="games_feed_created_brin")]
        constraints = [
            models.UniqueConstraint(fields=["user", "seq"], name="games_feed_unique_seq"),
            models.UniqueConstraint(fields=["user", "key"], name="games_feed_unique_key"),
            models.CheckConstraint(condition=Q(seq__gte=1), name="games_feed_seq_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}#{self.seq} {self.kind}"


class IntegrityFlag(models.Model):
    """A player, or a pair of players, whose statistic over a window crossed its signal's
    threshold (``games.integrity.signals``; docs/audit.md "Integrity signals"). Staff review it
    in the admin's queue: clear it, freeze the accounts (a frozen player cannot sit; its holds
    are kept) or ban them. Every action is an ``IntegrityAction`` row (append-only)."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        CLEARED = "cleared", "Cleared"
        FROZEN = "frozen", "Frozen"
        BANNED = "banned", "Banned"

    signal = models.CharField(max_length=32, help_text="games.integrity.signals.SIGNALS")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="integrity_flags"
    )
    partner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="integrity_flags_as_partner",
        help_text="The other player of a pair signal (the one that gained).",
    )
    statistic = models.FloatField()
    threshold = models.FloatField()
    detail = models.JSONField(default=dict, help_text="The numbers behind the statistic.")
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    hand_ids = models.JSONField(default=list, help_text="Evidence hands (ids).")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="integrity_reviews",
    )
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["signal", "player", "partner", "window_end"],
                name="games_integrityflag_once_per_window",
                nulls_distinct=False,
            ),
            models.CheckConstraint(
                condition=Q(status__in=["open", "cleared", "frozen", "banned"]),
                name="games_integrityflag_status",
            ),
            models.CheckConstraint(
                condition=Q(partner__isnull=True) | ~Q(partner=F("player")),
                name="games_integrityflag_pair_of_two",
            ),
        ]
        indexes = [models.Index(fields=["status", "created_at"], name="games_intflag_status")]

    def __str__(self) -> str:
        who = f"{self.player_id}" + (f"+{self.partner_id}" if self.partner_id else "")
        return f"{self.signal} {who} ({self.status})"


class IntegrityAction(models.Model):
    """What staff did to a flag (or the job: ``opened``), with the status it left: append-only,
    PostgreSQL refuses an UPDATE or DELETE (migration 0024)."""

    flag = models.ForeignKey(IntegrityFlag, on_delete=models.PROTECT, related_name="actions")
    action = models.CharField(max_length=16)
    status = models.CharField(max_length=8, choices=IntegrityFlag.Status.choices)
    staff = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="integrity_actions",
    )
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["flag_id", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.flag_id} {self.action}"


# ------------------------------------------------------------------ tables among friends
#: private tables, challenges and blocks. Apart from ``Table`` (tracked by
# django-pghistory) so that a private table adds a row, not columns and trigger changes.

INVITE_CODE_LENGTH = 8
INVITE_CODE_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud, typed by hand


class PrivateTable(models.Model):
    """A table that is not in the lobby nor quick-join: one joins it with its ``invite_code``
    (``POST /tables/{id}/join {"code"}``), which only the owner and the seated see."""

    table = models.OneToOneField(
        Table, on_delete=models.CASCADE, primary_key=True, related_name="private"
    )
    invite_code = models.CharField(max_length=INVITE_CODE_LENGTH, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(Exact(Length("invite_code"), INVITE_CODE_LENGTH))
                & only_chars("invite_code", INVITE_CODE_CHARS),
                name="games_private_table_code_format",
            ),
        ]

    def __str__(self) -> str:
        return f"private #{self.table_id}"


class Block(models.Model):
    """``blocker`` blocked ``blocked``: quick-join never seats them together, and ``blocked``
    may not challenge ``blocker`` nor join a private table where ``blocker`` sits or owns."""

    blocker = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="blocks"
    )
    blocked = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="blocked_by"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["blocker_id", "-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["blocker", "blocked"], name="games_block_unique"),
            models.CheckConstraint(condition=~Q(blocker=F("blocked")), name="games_block_not_self"),
        ]

    def __str__(self) -> str:
        return f"{self.blocker_id} blocks {self.blocked_id}"


CHALLENGE_TTL_SECONDS = 10 * 60


class Challenge(models.Model):
    """A player's challenge to another: accepted, it opens a private table with both seated.
    Pending until ``expires_at``; past it, it reads as expired (and is stored so when next
    touched)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        ACCEPTED = "accepted", "Accepted"
        DECLINED = "declined", "Declined"
        EXPIRED = "expired", "Expired"
        CANCELLED = "cancelled", "Cancelled"

    challenger = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="challenges_sent"
    )
    challenged = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="challenges_received"
    )
    room = models.ForeignKey(
        Room, on_delete=models.PROTECT, to_field="slug", related_name="challenges"
    )
    stake = models.PositiveIntegerField()
    max_seats = models.PositiveSmallIntegerField(default=MIN_SEATS)
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.BASIC)
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.PENDING)
    expires_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)
    table = models.ForeignKey(
        Table, on_delete=models.PROTECT, null=True, blank=True, related_name="challenges"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(challenger=F("challenged")), name="games_challenge_not_self"
            ),
            models.CheckConstraint(condition=Q(stake__gt=0), name="games_challenge_stake_positive"),
            models.CheckConstraint(
                condition=Q(max_seats__gte=MIN_SEATS, max_seats__lte=MAX_SEATS),
                name="games_challenge_max_seats_2_4",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["pending", "accepted", "declined", "expired", "cancelled"]),
                name="games_challenge_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(status="accepted", table__isnull=False)
                | (~Q(status="accepted") & Q(table__isnull=True)),
                name="games_challenge_table_iff_accepted",
            ),
            models.UniqueConstraint(
                fields=["challenger", "challenged"],
                condition=Q(status="pending"),
                name="games_challenge_one_pending_per_pair",
            ),
        ]
        indexes = [
            models.Index(fields=["challenged", "-created_at"], name="games_chall_received_idx"),
        ]

    def __str__(self) -> str:
        return f"challenge #{self.pk} {self.challenger_id} → {self.challenged_id} ({self.status})"


class PlayerRating(models.Model):
    """A player's skill rating in one ruleset family (the preset of the hands' frozen ruleset),
    openskill's Plackett–Luce ``mu``/``sigma`` (docs/decisions/ratings-and-leaderboards.md). ``rating`` is the
    shown number, ``round(1500 + 40 × (mu − 3·sigma))`` (1500 at the start), kept as a column so
    the leaderboard reads an index; ``hands`` counts the rated hands (provisional below
    ``games.services.ratings.PROVISIONAL_HANDS``). Written only by ``games.services.ratings``
    inside a settlement's or a void's transaction."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings"
    )
    family = models.CharField(max_length=32, help_text="The ruleset preset of its hands.")
    mu = models.FloatField()
    sigma = models.FloatField()
    rating = models.IntegerField()
    hands = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["family", "-rating", "user_id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "family"], name="games_rating_unique_family"),
            models.CheckConstraint(condition=Q(sigma__gt=0), name="games_rating_sigma_positive"),
        ]
        # The board: top N and around-me walk this index (family, rating desc, user id).
        indexes = [
            models.Index(F("family"), F("rating").desc(), F("user_id"), name="games_rating_board")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.family} {self.rating}"


class RatingChange(models.Model):
    """One change of a player's rating (append-only): a rated hand's update, or its reversal
    when staff void the hand (``reversal``: the negated change). The player's history, its
    hands' ``rating_change`` and the ``rating_changed`` feed entries read these rows."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rating_changes"
    )
    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="rating_changes")
    family = models.CharField(max_length=32)
    reversal = models.BooleanField(default=False)
    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_after = models.FloatField()
    rating_before = models.IntegerField()
    rating_after = models.IntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user_id", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["hand", "user", "reversal"], name="games_ratingchange_once"
            ),
        ]
        indexes = [models.Index(fields=["user", "-id"], name="games_ratingchange_user")]

    def __str__(self) -> str:
        return f"{self.user_id} hand {self.hand_id} {self.delta:+d}"

    @property
    def delta(self) -> int:
        return self.rating_after - self.rating_before


class BoardScore(models.Model):
    """One player's score on one leaderboard: ``board`` is ``quan`` (net Quan won in
    rated hands), ``xp`` (XP earned in hands) or ``rating:<family>`` (the rating after its
    latest hand); ``period`` is ``all``, an ISO week ``2026-W49`` or a month ``2026-12`` (in
    Asia/Ho_Chi_Minh, by the hand's end); ``room`` a room's slug or ``""`` for every room. Kept
    by ``games.services.leaderboards`` in the settlement's (and a void's) transaction; a closed
    season's rows stay as its archive. The board reads the index (board, period, room, score
    desc, user id): top N is an index range, a rank one index-only count."""

    board = models.CharField(max_length=40)
    period = models.CharField(max_length=8)
    room = models.CharField(max_length=ROOM_MAX_LENGTH, blank=True, default="")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="board_scores"
    )
    score = models.BigIntegerField(default=0)
    hands = models.IntegerField(default=0)  # a void's row carries −1
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["board", "period", "room", "user"], name="games_boardscore_unique"
            ),
        ]
        indexes = [
            models.Index(
                F("board"),
                F("period"),
                F("room"),
                F("score").desc(),
                F("user_id"),
                name="games_boardscore_rank",
            )
        ]

    def __str__(self) -> str:
        return f"{self.board}/{self.period}/{self.room or '*'} {self.user_id}={self.score}"


# ------------------------------------------------------------------ arenas


def default_payout() -> list[int]:
    return [50, 30, 20]


class Tournament(models.Model):
    """An arena: from ``starts_at`` to ``ends_at`` its entered players are seated together at
    ``table_size``-seat tables of ``room`` at ``stake`` as soon as they are free (ordinary
    tables and hands), each hand scoring arena points (games.rules.arena_points); at the end the
    pool of entry fees is paid by ``payout`` (percentages by rank). ``ledger_table``: the
    arena's table of record, where nobody sits: the entry fees are held there
    (accounts.holds) before the start, and its pot account is the prize pool after it."""

    class Status(models.TextChoices):
        SCHEDULED = "scheduled", "Scheduled"
        RUNNING = "running", "Running"
        FINISHED = "finished", "Finished"
        CANCELLED = "cancelled", "Cancelled"

    name = models.CharField(max_length=64)
    room = models.ForeignKey(
        Room, on_delete=models.PROTECT, to_field="slug", related_name="tournaments"
    )
    stake = models.PositiveIntegerField(help_text="Quan per point at its tables.")
    table_size = models.PositiveSmallIntegerField(default=MAX_SEATS, help_text="2 to 4 seats.")
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.BASIC)
    ruleset = models.JSONField(default=default_ruleset_spec)
    entry_fee = models.PositiveBigIntegerField(default=0, help_text="Quan, held on joining.")
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    payout = models.JSONField(
        default=default_payout, help_text="Percent of the pool by rank, summing to 100."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.SCHEDULED)
    ledger_table = models.OneToOneField(
        Table, on_delete=models.PROTECT, related_name="tournament_of_record"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tournaments_created"
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancel_reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-starts_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(ends_at__gt=F("starts_at")), name="games_tournament_ends_after_start"
            ),
            models.CheckConstraint(
                condition=Q(stake__gt=0), name="games_tournament_stake_positive"
            ),
            models.CheckConstraint(
                condition=Q(table_size__gte=MIN_SEATS, table_size__lte=MAX_SEATS),
                name="games_tournament_table_size_2_4",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["scheduled", "running", "finished", "cancelled"]),
                name="games_tournament_status_valid",
            ),
            models.CheckConstraint(
                condition=GreaterThanOrEqual(Length("name"), 1),
                name="games_tournament_name_not_empty",
            ),
        ]
        indexes = [models.Index(fields=["status", "starts_at"], name="games_tourn_status_start")]

    def __str__(self) -> str:
        return f"{self.name} (#{self.pk}, {self.status})"


class TournamentEntry(models.Model):
    """A player entered in an arena: its standing (``score``: arena points, ``hands``, ``wins``)
    and whether it is paired (``active``: it may withdraw while the arena runs, keeping its
    points). ``fee``: what it paid (or holds, before the start). ``waited``: the pairings in a
    row at which it was free but left out while others sat (the next pairing seats it first)."""

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="entries")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tournament_entries"
    )
    fee = models.PositiveBigIntegerField(default=0)
    score = models.PositiveIntegerField(default=0)
    hands = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    active = models.BooleanField(default=True)
    waited = models.PositiveIntegerField(
        default=0, help_text="Pairings in a row it was left out at while others sat."
    )
    prize = models.PositiveBigIntegerField(null=True, blank=True, help_text="Paid at the end.")
    rank = models.PositiveIntegerField(null=True, blank=True, help_text="Final rank.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["tournament_id", "-score", "-wins", "id"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "user"], name="games_tentry_once"),
        ]
        indexes = [
            models.Index(
                F("tournament"),
                F("score").desc(),
                F("wins").desc(),
                F("id"),
                name="games_tentry_standings",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user_id} in arena {self.tournament_id}: {self.score}"


class TournamentTable(models.Model):
    """A table the arena opened for one pairing (``done`` once its hand is scored and its
    players stood up)."""

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="tables")
    table = models.OneToOneField(Table, on_delete=models.PROTECT, related_name="tournament_link")
    done = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["tournament_id", "id"]
        indexes = [models.Index(fields=["tournament", "done"], name="games_ttable_open")]

    def __str__(self) -> str:
        return f"arena {self.tournament_id} table {self.table_id}"


class TournamentHand(models.Model):
    """A hand of an arena and the arena points it gave each hand seat (play order), scored once;
    if staff void the hand later, a second row (``kind`` void) takes them off again: the
    negated points, or zeros when the arena had already paid out (``after_payout``: its
    standings and prizes stood). Append-only (PostgreSQL refuses an UPDATE or DELETE,
    migration games_tournaments): an entry's score is the sum of its points over these rows."""

    class Kind(models.TextChoices):
        SCORE = "score", "Scored"
        VOID = "void", "Voided"

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="hands")
    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="tournament_hands")
    kind = models.CharField(max_length=5, choices=Kind.choices, default=Kind.SCORE)
    points = models.JSONField(help_text="Arena points by hand seat (play order).")
    after_payout = models.BooleanField(
        default=False, help_text="A void after the payout: nothing taken off, the prizes stood."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tournament_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["hand", "kind"], name="games_thand_once_per_kind"),
            models.CheckConstraint(
                condition=Q(kind__in=["score", "void"]), name="games_thand_kind_valid"
            ),
            models.CheckConstraint(
                condition=Q(after_payout=False) | Q(kind="void"),
                name="games_thand_after_payout_void",
            ),
        ]

    def __str__(self) -> str:
        return f"arena {self.tournament_id} hand {self.hand_id} {self.kind} {self.points}"


# The board's histogram: BUCKET_LEVELS levels of radix 2**BUCKET_BITS over the score,
# each count split in BUCKET_SHARDS by user id so that concurrent settlements rarely share a row.
BUCKET_BITS, BUCKET_LEVELS, BUCKET_SHARDS = 8, 4, 8


class BoardBucket(models.Model):
    """How many rows of one board (board, period, room) have a score in a bucket: at ``level``
    L the bucket of a score is ``score >> (8·L)`` (level 0 is the exact score). Kept by
    statement-level triggers on ``games_boardscore`` (games 0027) in the writing transaction,
    so a rank is the sum of a few hundred counts above the score plus the ties before the user,
    whatever the rank (``games.selectors.leaderboards``)."""

    board = models.CharField(max_length=40)
    period = models.CharField(max_length=8)
    room = models.CharField(max_length=ROOM_MAX_LENGTH, blank=True, default="")
    level = models.SmallIntegerField()
    bucket = models.BigIntegerField()
    shard = models.SmallIntegerField()
    n = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["board", "period", "room", "level", "bucket", "shard"]
        constraints = [
            models.UniqueConstraint(
                fields=["board", "period", "room", "level", "bucket", "shard"],
                name="games_boardbucket_unique",
            ),
            models.CheckConstraint(condition=Q(n__gte=0), name="games_boardbucket_n_non_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.board}/{self.period}/{self.room or '*'} L{self.level} {self.bucket}={self.n}"


BOARD_VERSION_SHARDS = 8


class BoardVersion(models.Model):
    """How many statements have written one board's rows (board, period, room): the sum of
    ``version`` over its shards. Bumped by statement-level triggers on ``games_boardscore``
    (games 0030) in the writing transaction, each transaction on the shard of its id, so that
    concurrent settlements rarely share a row; the key of the rendered board pages a process
    keeps (``games.api.leaderboard_views``): a page read after a commit that wrote the board is
    never the one rendered before it."""

    board = models.CharField(max_length=40)
    period = models.CharField(max_length=8)
    room = models.CharField(max_length=ROOM_MAX_LENGTH, blank=True, default="")
    shard = models.SmallIntegerField()
    version = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["board", "period", "room", "shard"]
        constraints = [
            models.UniqueConstraint(
                fields=["board", "period", "room", "shard"], name="games_boardversion_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.board}/{self.period}/{self.room or '*'} #{self.shard} v{self.version}"


class PrizeSchedule(models.Model):
    """The prizes of a season's board, set by staff in the admin: for each closed
    week or month (``kind``) of ``board`` (``quan``, ``xp`` or ``rating:<family>``) in
    ``room`` (blank: every room), rank → Quan (its lines), paid from the prize account when
    the season closes (``games.services.seasons``). Only players with at least ``min_hands``
    hands on that board are ranked for prizes."""

    class Kind(models.TextChoices):
        WEEK = "week", "Week"
        MONTH = "month", "Month"

    board = models.CharField(max_length=40, help_text="quan, xp or rating:<family>.")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    room = models.ForeignKey(
        Room,
        on_delete=models.PROTECT,
        to_field="slug",
        null=True,
        blank=True,
        related_name="prize_schedules",
        help_text="Blank: the board of every room.",
    )
    min_hands = models.PositiveIntegerField(default=1)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["board", "kind", "room_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["board", "kind", "room"],
                condition=Q(active=True),
                name="games_prizeschedule_one_active",
            ),
            models.UniqueConstraint(
                fields=["board", "kind"],
                condition=Q(active=True, room__isnull=True),
                name="games_prizeschedule_one_active_all_rooms",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.board} {self.kind} {self.room_id or '*'}"

    def amounts(self) -> list[int]:
        """Rank → Quan as a list (index 0 is rank 1; a rank without a line pays 0)."""
        lines = {line.rank: line.amount for line in self.lines.all()}
        return [lines.get(r, 0) for r in range(1, max(lines, default=0) + 1)]


class PrizeLine(models.Model):
    schedule = models.ForeignKey(PrizeSchedule, on_delete=models.CASCADE, related_name="lines")
    rank = models.PositiveIntegerField()
    amount = models.PositiveBigIntegerField(help_text="Quan paid to this rank.")

    class Meta:
        ordering = ["schedule", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["schedule", "rank"], name="games_prizeline_unique"),
            models.CheckConstraint(condition=Q(rank__gte=1), name="games_prizeline_rank_from_1"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="games_prizeline_amount_pos"),
        ]

    def __str__(self) -> str:
        return f"#{self.rank}: {self.amount}"


class Season(models.Model):
    """A week or month of the boards (Asia/Ho_Chi_Minh) being closed or closed: created when
    its close starts (no board of it is written after that), ``closed_at`` set when every
    board of it is archived (``games.services.seasons``)."""

    period = models.CharField(max_length=8, unique=True)
    kind = models.CharField(max_length=8, choices=PrizeSchedule.Kind.choices)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-ends_at", "period"]

    def __str__(self) -> str:
        return self.period


class SeasonBoard(models.Model):
    """One board of a closed season: its final standings are its frozen ``games_boardscore``
    rows; its prizes as paid (``status``), the schedule it was paid by (by value) and the
    ledger transaction (one per season and board)."""

    class Status(models.TextChoices):
        NO_PRIZES = "no_prizes", "No prize schedule"
        PAID = "paid", "Prizes paid"
        UNFUNDED = "unfunded", "Prize account short: nothing paid yet"
        NOBODY = "nobody", "No eligible player"

    season = models.ForeignKey(Season, on_delete=models.PROTECT, related_name="boards")
    board = models.CharField(max_length=40)
    room = models.CharField(max_length=ROOM_MAX_LENGTH, blank=True, default="")
    players = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices)
    schedule = models.JSONField(
        default=list, blank=True, help_text="Rank → Quan as paid (index 0 is rank 1)."
    )
    min_hands = models.PositiveIntegerField(default=1)
    total = models.BigIntegerField(default=0)
    needed = models.BigIntegerField(default=0, help_text="What the prizes cost (unfunded).")
    transaction = models.ForeignKey(
        "accounts.LedgerTransaction",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="season_boards",
    )
    closed_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["season", "board", "room"]
        constraints = [
            models.UniqueConstraint(
                fields=["season", "board", "room"], name="games_seasonboard_unique"
            ),
            models.CheckConstraint(
                condition=Q(status__in=["no_prizes", "paid", "unfunded", "nobody"]),
                name="games_seasonboard_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(status="paid", transaction__isnull=False)
                | (~Q(status="paid") & Q(transaction__isnull=True)),
                name="games_seasonboard_tx_iff_paid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.season_id} {self.board}/{self.room or '*'} {self.status}"


class SeasonPrize(models.Model):
    """A prize paid to a player for its final rank on a closed season's board."""

    season_board = models.ForeignKey(SeasonBoard, on_delete=models.PROTECT, related_name="prizes")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="season_prizes"
    )
    rank = models.PositiveIntegerField()
    score = models.BigIntegerField()
    amount = models.PositiveBigIntegerField()

    class Meta:
        ordering = ["season_board", "rank", "user_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["season_board", "user"], name="games_seasonprize_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.season_board_id} #{self.rank} {self.user_id}: {self.amount}"


class PrizeFunding(models.Model):
    """Staff moving Quan from issuance into the prize account (one ledger transaction each,
    booked when the row is added in the admin)."""

    amount = models.PositiveBigIntegerField()
    memo = models.CharField(max_length=200)
    staff = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+"
    )
    transaction = models.OneToOneField(
        "accounts.LedgerTransaction", on_delete=models.PROTECT, related_name="prize_funding"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.amount} Quan: {self.memo}"
