"""Input and output serializers of the games API (they are also its OpenAPI schema)."""

from __future__ import annotations

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from chan_api.strict_input import (
    QueryIntegerField,
    StrictBooleanField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)
from games.models import (
    DEFAULT_ROOM,
    MAX_BOT_DELAY_SECONDS,
    MAX_BOTS,
    MAX_SEATS,
    MAX_TIMEOUT_SECONDS,
    MIN_SEATS,
    Hand,
    Mode,
    Table,
)
from games.rules.calculator import MAX_NHAI, NO_WIN_REASONS
from games.rules.cuoc import WIN_SOURCES
from games.rules.fair_deal import CLIENT_SEED_MAX
from games.rules.moves import MOVE_TYPES
from games.rules.ruleset import PRESETS
from games.selectors.history import HISTORY_PAGE_DEFAULT, HISTORY_PAGE_MAX
from games.selectors.tables import TABLE_LIST_MAX, TABLE_PAGE_DEFAULT

MAX_STAKE = 1_000_000_000
MAX_SEQ = 2**31 - 1
CARD_HELP = "A kind code: 2V…9V, 2N…9N, 2S…9S or CC."
ROOM_RE = r"^[a-z0-9-]{1,32}$"
TABLE_CURSOR_RE = r"^[0-9]{1,17}\.[0-9]{1,18}\Z"
HAND_CURSOR_RE = r"^[0-9]{1,18}\Z"

# --------------------------------------------------------------------------- shared


class RulesetSpecSerializer(StrictInputSerializer):
    """A ruleset as data: a preset plus overrides (validated by the rules core)."""

    preset = StrictCharField(help_text=f"One of {', '.join(PRESETS)}.")
    overrides = serializers.JSONField(
        required=False, help_text='Overrides of the preset (RULES.md §7), e.g. {"ga_points": 3}.'
    )


@extend_schema_field(RulesetSpecSerializer)
class RulesetSpecField(serializers.JSONField):
    """A ruleset spec, validated by the rules core (a 400 ``invalid_ruleset`` names the key)."""


@extend_schema_field(
    {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
)
class CuocField(serializers.JSONField):
    """A cước map slug → count, validated by the rules core (400 ``invalid_cuoc``)."""


class RulesetSerializer(serializers.Serializer):
    """A table's ruleset as stored: its preset and the overrides (possibly empty)."""

    preset = serializers.ChoiceField(choices=list(PRESETS))
    overrides = serializers.DictField(help_text="Overrides of the preset (RULES.md §7).")


class TimeoutsSerializer(StrictInputSerializer):
    turn = StrictIntegerField(min_value=1, max_value=MAX_TIMEOUT_SECONDS, required=False)
    tra_cua = StrictIntegerField(min_value=1, max_value=MAX_TIMEOUT_SECONDS, required=False)
    declare = StrictIntegerField(min_value=1, max_value=MAX_TIMEOUT_SECONDS, required=False)
    ready = StrictIntegerField(min_value=1, max_value=MAX_TIMEOUT_SECONDS, required=False)


class TableTimeoutsSerializer(serializers.Serializer):
    """A table's seconds per decision, every one of them."""

    turn = serializers.IntegerField()
    tra_cua = serializers.IntegerField()
    declare = serializers.IntegerField()
    ready = serializers.IntegerField()


# --------------------------------------------------------------------------- tables


class TableCreateInputSerializer(StrictInputSerializer):
    name = StrictCharField(max_length=64, default="Chắn")
    room = StrictCharField(
        max_length=32,
        default=DEFAULT_ROOM,
        validators=[RegexValidator(ROOM_RE)],
        help_text="A room's slug: nen-dat (default), chieu-coi, sap-gu-2, sap-gu-vip.",
    )
    stake = StrictIntegerField(
        min_value=1,
        max_value=MAX_STAKE,
        required=False,
        help_text="Quan per point; required unless `practice` (1 there: nothing is booked).",
    )
    spectators = StrictBooleanField(
        default=True, help_text="Anyone signed in may watch its hands (their public view only)."
    )
    max_seats = StrictIntegerField(
        min_value=MIN_SEATS,
        max_value=MAX_SEATS,
        required=False,
        help_text=f"{MAX_SEATS} by default; `bots` + 1 at a practice table.",
    )
    practice = StrictBooleanField(
        default=False,
        help_text="A practice table: server bots at `bots` seats; no Quan moves, no fees, "
        "no stats or XP; dealt as soon as its human players are ready.",
    )
    bots = StrictIntegerField(
        min_value=1,
        max_value=MAX_BOTS,
        required=False,
        help_text="Practice only: how many seats server bots take (every other seat by default).",
    )
    bot_delay = StrictIntegerField(
        min_value=0,
        max_value=MAX_BOT_DELAY_SECONDS,
        required=False,
        help_text="Practice only: seconds a bot waits before it moves (1 by default).",
    )
    private = StrictBooleanField(
        default=False,
        help_text="A private table: not in the lobby nor quick-join, no spectators; others join "
        'with its `invite_code` (`POST /tables/{id}/join {"code"}`).',
    )
    mode = serializers.ChoiceField(choices=Mode.choices, default=Mode.BASIC)
    ruleset = RulesetSpecField(
        required=False,
        help_text='{"preset": "chan_van_van", "overrides": {…}}; the default preset if omitted.',
    )
    timeouts = TimeoutsSerializer(required=False, help_text="Seconds per decision.")
    seat = StrictIntegerField(
        min_value=0, max_value=MAX_SEATS - 1, required=False, help_text="The creator's seat (0)."
    )
    deck = serializers.ListField(
        child=StrictCharField(max_length=2, help_text=CARD_HELP),
        min_length=100,
        max_length=100,
        required=False,
        help_text="Test/dev only (setting CHAN_ALLOW_FIXED_DECK): 100 kind codes dealt every hand.",
    )
    dealer = StrictIntegerField(
        min_value=0,
        max_value=MAX_SEATS - 1,
        required=False,
        help_text="Test/dev only, with `deck`: the table seat that deals the first hand.",
    )


class TableListQuerySerializer(serializers.Serializer):
    room = serializers.CharField(max_length=32, required=False)
    stake = QueryIntegerField(min_value=1, max_value=MAX_STAKE, required=False)
    open_seats = QueryIntegerField(
        min_value=0, max_value=MAX_SEATS, required=False, help_text="At least this many free seats."
    )
    status = serializers.ChoiceField(
        choices=[Table.Status.OPEN, Table.Status.PLAYING],
        required=False,
        help_text="Only tables between hands (`open`) or playing one (`playing`).",
    )
    cursor = serializers.RegexField(
        TABLE_CURSOR_RE,
        trim_whitespace=False,
        required=False,
        help_text='The cursor of the `Link: <…>; rel="next"` header of the previous page '
        "(opaque); the newest tables without.",
    )
    limit = QueryIntegerField(min_value=1, max_value=TABLE_LIST_MAX, default=TABLE_PAGE_DEFAULT)
    wait = QueryIntegerField(
        min_value=0,
        max_value=30,
        default=0,
        help_text="With `If-None-Match`: answer as soon as a table of the lobby changes, at most "
        "after this many seconds (then 304).",
    )


class SeatJoinInputSerializer(StrictInputSerializer):
    seat = StrictIntegerField(
        min_value=0,
        max_value=MAX_SEATS - 1,
        required=False,
        help_text="The lowest free seat if omitted.",
    )
    auto_u = StrictBooleanField(required=False)
    auto_chiu = StrictBooleanField(required=False)
    code = StrictCharField(
        max_length=32,
        required=False,
        help_text="A private table's invite code (its owner and seated players see it).",
    )


class SeatReadyInputSerializer(StrictInputSerializer):
    ready = StrictBooleanField(default=True)
    auto_u = StrictBooleanField(required=False)
    auto_chiu = StrictBooleanField(required=False)
    client_seed = StrictCharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=CLIENT_SEED_MAX,
        help_text="This seat's own seed for the next deal (0–128 printable ASCII characters, no "
        "space), mixed into the shuffle with the server's committed seed (docs/audit.md); "
        "secret until the hand ends. Omitted: the one given before, or none (empty).",
    )


class SeatOutputSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    ready = serializers.BooleanField()
    leaving = serializers.BooleanField(help_text="Left mid-hand; played automatically to its end.")
    auto_u = serializers.BooleanField()
    auto_chiu = serializers.BooleanField()
    bot = serializers.BooleanField(help_text="A server bot (practice tables): always ready.")


class UserRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class RealityCheckSerializer(serializers.Serializer):
    """Reads ``games.selectors.reality_check.reality_check_for``."""

    reminder_minutes = serializers.IntegerField(allow_null=True, help_text="Null: none set.")
    session_started_at = serializers.DateTimeField()
    minutes_played = serializers.IntegerField()
    net = serializers.IntegerField(help_text="Quan won (negative: lost) in the session's hands.")
    reminders = serializers.IntegerField(help_text="Reminder periods reached in the session.")
    due = serializers.BooleanField(help_text="At least one reminder period played.")
    next_at = serializers.DateTimeField(allow_null=True)


class TableOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    room = serializers.CharField()
    stake = serializers.IntegerField()
    max_seats = serializers.IntegerField()
    mode = serializers.ChoiceField(choices=Mode.choices)
    ruleset = RulesetSerializer()
    timeouts = TableTimeoutsSerializer()
    owner = UserRefSerializer()
    status = serializers.ChoiceField(choices=Table.Status.choices)
    seats = SeatOutputSerializer(many=True)
    open_seats = serializers.IntegerField()
    current_hand_id = serializers.IntegerField(allow_null=True)
    pot = serializers.IntegerField(help_text="Quan in the table's gà góp pot (RULES.md §10.10).")
    ready_deadline = serializers.DateTimeField(
        allow_null=True,
        help_text="With some players ready but not all: when the others are unseated and the "
        "ready ones, if two or more, are dealt the next hand.",
    )
    fixed_deck = serializers.BooleanField(help_text="Dealt from a fixed test deck.")
    next_seed_hash = serializers.CharField(
        help_text="SHA-256 (hex) of the server seed the next hand will be dealt from, committed "
        "before any seat's seed is known (docs/audit.md); that hand's seed_hash."
    )
    spectators = serializers.BooleanField(help_text="Non-participants may watch its hands.")
    practice = serializers.BooleanField(
        help_text="A practice table: server bots, no Quan, no stats or XP."
    )
    bot_delay = serializers.IntegerField(help_text="Seconds a server bot waits before it moves.")
    private = serializers.BooleanField(
        help_text="A private table: joined with its invite code only; not in the lobby."
    )
    invite_code = serializers.CharField(
        allow_null=True,
        help_text="A private table's code, to its owner and seated players; null otherwise.",
    )
    created_at = serializers.DateTimeField()
    reality_check = RealityCheckSerializer(
        allow_null=True,
        required=False,
        help_text="To a player seated here (GET /tables/{id}, join): how long its session has "
        "lasted and its net result (docs/api.md, limits); null otherwise.",
    )


class TableHandSerializer(serializers.Serializer):
    """A hand of a table with the terms frozen at its deal."""

    id = serializers.IntegerField()
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Hand.Status.choices)
    room = serializers.CharField(source="room_id")
    stake = serializers.IntegerField(help_text="Quan per point, frozen at the deal.")
    mode = serializers.ChoiceField(choices=Mode.choices)
    n_seats = serializers.IntegerField()
    seq = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)


class SeatReadyOutputSerializer(serializers.Serializer):
    table = TableOutputSerializer()
    hand_id = serializers.IntegerField(
        allow_null=True, help_text="The hand this call dealt, if it did."
    )


# --------------------------------------------------------------------------- hands


class _MoveFieldsSerializer(serializers.Serializer):
    """The fields of a move in the rules core's JSON (RULES.md §4), each for its types only."""

    type = serializers.ChoiceField(choices=list(MOVE_TYPES))
    card = serializers.CharField(required=False, help_text=CARD_HELP)
    with_ = serializers.CharField(required=False, help_text="eat: the hand card it pairs with.")
    cuoc = serializers.DictField(
        child=serializers.IntegerField(), required=False, help_text="declare: slug → count."
    )
    auto = serializers.BooleanField(required=False, help_text="declare: let the server declare.")
    auto_u = serializers.BooleanField(required=False, help_text="set_prefs")
    auto_chiu = serializers.BooleanField(required=False, help_text="set_prefs")

    def get_fields(self):  # type: ignore[no-untyped-def]
        fields = super().get_fields()
        fields["with"] = fields.pop("with_")
        return fields


class LegalMoveSerializer(_MoveFieldsSerializer):
    """A move the caller may make now, exactly as it may be sent back to ``/moves``."""

    seat = serializers.IntegerField(help_text="The acting seat: the caller's.")


class MoveInputSerializer(_MoveFieldsSerializer):
    """A move in the rules core's JSON (RULES.md §4); only the fields of its type are allowed."""

    seat = serializers.IntegerField(
        required=False, help_text="The acting seat; optional, must be the caller's own."
    )
    expected_seq = serializers.IntegerField(
        min_value=0,
        max_value=MAX_SEQ,
        required=False,
        help_text="Refuse the move (409 stale_seq) unless the hand is at this seq.",
    )


class MatGroupSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["chan", "ca", "chiu"])
    cards = serializers.ListField(child=serializers.CharField())
    taken = serializers.CharField()
    source = serializers.CharField()
    from_door = serializers.IntegerField()


class FaultSerializer(serializers.Serializer):
    slug = serializers.CharField()
    visible = serializers.BooleanField()
    move = serializers.IntegerField(required=False)


class MissedWinSerializer(serializers.Serializer):
    """A bỏ ù (RULES.md §4, §9): a stock card the seat could have won on and let go by."""

    card = serializers.CharField()
    seq = serializers.IntegerField(
        help_text="The seq of the move that let it go; its event has a `bo_u` effect."
    )
    replaced_by = serializers.IntegerField(
        allow_null=True,
        help_text="The seat whose win on that card replaced the move (RULES.md §4), or null.",
    )


class ExportMissedWinSerializer(MissedWinSerializer):
    seat = serializers.IntegerField()


class PublicSeatSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    mat = MatGroupSerializer(many=True)
    hand_count = serializers.IntegerField()
    bao = serializers.BooleanField()
    auto_u = serializers.BooleanField()
    auto_chiu = serializers.BooleanField()
    faults = FaultSerializer(many=True)
    hand = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Only after the hand ends."
    )
    dealt = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Only after the hand ends."
    )
    bo_u = MissedWinSerializer(
        many=True,
        required=False,
        help_text="The seat's bỏ ù: only after the hand ends, never to a spectator.",
    )


class OfferSerializer(serializers.Serializer):
    card = serializers.CharField()
    door = serializers.IntegerField()
    source = serializers.ChoiceField(choices=["discard", "stock", "returned"])
    by = serializers.IntegerField()


class WinSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    card = serializers.CharField(allow_null=True)
    source = serializers.CharField()
    by_chiu = serializers.BooleanField()
    bach_thu = serializers.BooleanField()
    first_draw = serializers.BooleanField()


class PlayerSerializer(serializers.Serializer):
    seat = serializers.IntegerField(help_text="The hand seat (0..n-1, play order).")
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    table_seat = serializers.IntegerField()
    left = serializers.BooleanField(
        help_text="It left the table mid-hand: the server plays its turns (RULES.md §12)."
    )


def settlement_field() -> serializers.JSONField:
    return serializers.JSONField(
        allow_null=True,
        required=False,
        help_text='After the end: {"result", "transfers": [{"from", "to", "points", "reason"}], '
        '"facts", "thong_next", "quan"}; `quan` is the settlement booked in Quan: {"seats": '
        '[{"seat", "paid", "received", "fee", "net"}], "fees", "fee_percent", "pot": {"in", '
        '"out"}, "capped", "dropped"} (null until booked, moments after the end).',
    )


class HandResultSerializer(serializers.Serializer):
    outcome = serializers.JSONField(help_text='{"result": "u", "seat": n} or {"result": "hoa"} …')
    win = WinSerializer(allow_null=True)
    declaration = serializers.JSONField(allow_null=True)
    settlement = settlement_field()


class HandViewSerializer(serializers.Serializer):
    """One seat's view of a hand: never another seat's hand or the stock before the end."""

    hand_id = serializers.IntegerField()
    table_id = serializers.IntegerField()
    number = serializers.IntegerField()
    room = serializers.CharField(help_text="The room, frozen at the deal.")
    stake = serializers.IntegerField(help_text="Quan per point, frozen at the deal.")
    seq = serializers.IntegerField(help_text="The seq of the hand's last event.")
    status = serializers.ChoiceField(choices=Hand.Status.choices)
    phase = serializers.CharField()
    turn_seat = serializers.IntegerField(allow_null=True)
    my_seat = serializers.IntegerField(allow_null=True, help_text="Null for a spectator.")
    spectator = serializers.BooleanField(
        help_text="A non-participant's view: no cards of any hand, no legal moves, no seed."
    )
    dealer = serializers.IntegerField()
    n_seats = serializers.IntegerField()
    mode = serializers.ChoiceField(choices=Mode.choices)
    moves_played = serializers.IntegerField()
    hand = serializers.ListField(
        child=serializers.CharField(), help_text="My cards (empty for a spectator)."
    )
    mats = serializers.ListField(child=MatGroupSerializer(many=True), help_text="Per seat.")
    doors = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()), help_text="Per seat."
    )
    stock_count = serializers.IntegerField()
    offer = OfferSerializer(allow_null=True)
    seats = PublicSeatSerializer(many=True)
    players = PlayerSerializer(many=True)
    legal_moves = LegalMoveSerializer(many=True)
    my_faults = FaultSerializer(many=True, required=False)
    my_bo_u = MissedWinSerializer(
        many=True,
        required=False,
        help_text="My bỏ ù while the hand is live (after the end: `seats[i].bo_u`).",
    )
    analysis = serializers.JSONField(
        allow_null=True,
        help_text="Basic mode: my hand grouped, the cards worth discarding, my waiting set, the "
        "clean ways to eat the card I face (null in advanced mode and after the end).",
    )
    win = WinSerializer(allow_null=True)
    declaration = serializers.JSONField(allow_null=True)
    outcome = serializers.JSONField(allow_null=True)
    settlement = settlement_field()
    deadline = serializers.DateTimeField(
        allow_null=True,
        help_text="When the server moves for the seat to act if it has not (RULES.md §12); "
        "null after the end.",
    )
    seed_hash = serializers.CharField(help_text="SHA-256 of the seed (hex), public from the deal.")
    next_seed_hash = serializers.CharField(
        allow_null=True,
        help_text="The commitment to the table's next hand's server seed, made at this deal "
        "(that hand's seed_hash; null for hands dealt before the fair deal).",
    )
    head_hash = serializers.CharField(
        allow_null=True,
        help_text="After the end: the hash of the hand's last event, the head of its log's "
        "hash chain (docs/audit.md); null before.",
    )
    fixed_deck = serializers.BooleanField()
    result = HandResultSerializer(allow_null=True, help_text="After the end.")
    seed = serializers.CharField(allow_null=True, help_text="The seed (hex), after the end.")
    client_seeds = serializers.ListField(
        child=serializers.CharField(allow_blank=True),
        allow_null=True,
        help_text="After the end (null before, and for spectators): each seat's own seed in "
        "seat order, mixed into the deck (docs/audit.md; empty: none given).",
    )
    stock = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="After the end."
    )


class HandQuerySerializer(serializers.Serializer):
    wait = QueryIntegerField(
        min_value=0, max_value=30, default=0, help_text="Long-poll for up to this many seconds."
    )
    after_seq = QueryIntegerField(
        min_value=0,
        max_value=MAX_SEQ,
        required=False,
        help_text="With wait: answer as soon as the hand's seq is above this (default: now).",
    )


class MoveCreatedSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    state = HandViewSerializer()


class EventsQuerySerializer(serializers.Serializer):
    after_seq = QueryIntegerField(
        min_value=0, max_value=MAX_SEQ, required=False, help_text="Cursor: events after this seq."
    )
    limit = QueryIntegerField(min_value=1, max_value=100, default=100)
    wait = QueryIntegerField(
        min_value=0,
        max_value=30,
        default=0,
        help_text="With after_seq: long-poll for up to this many seconds while no event is "
        "after it.",
    )


class HandEventSerializer(serializers.Serializer):
    seq = serializers.IntegerField(
        help_text="0 is the deal; moves are 1, 2, 3 …; after the end `settled`, then maybe "
        "`voided`."
    )
    type = serializers.CharField()
    v = serializers.IntegerField(
        help_text="The schema version the event was stored in: 1 (effects: the move, visible "
        "faults, draws, nhái, bỏ ù, automatic chíu, wins, hòa) or 2 (also hidden faults, báo, "
        "claims and the system moves' causes)."
    )
    actor_seat = serializers.IntegerField(allow_null=True)
    system = serializers.BooleanField()
    bot = serializers.BooleanField(help_text="A server bot's move (practice tables).")
    move = serializers.JSONField(
        allow_null=True, help_text="The move as submitted (null for the deal and the records)."
    )
    record = serializers.JSONField(
        allow_null=True,
        help_text="A record after the end (null for a move): `settled` (each seat's Quan, "
        "`fees`, `fee_percent`, `pot` {in, out}, `capped` seats, `dropped`, `practice`, the "
        "ledger `transaction` id) or `voided` (`by`, `reason`, the reversing `transaction`).",
    )
    effects = serializers.ListField(
        child=serializers.JSONField(),
        help_text="The move and what the server derived from it (drawn cards, faults, báo, "
        "bỏ ù, automatic chíu, the win and its claim, hòa, a system move's cause); the deal "
        "shows only the caller's cards, and a `bo_u` or a `hidden` effect only its own seat, "
        "until the end.",
    )
    created_at = serializers.DateTimeField()


class HandEventPageSerializer(serializers.Serializer):
    hand_id = serializers.IntegerField()
    seq = serializers.IntegerField()
    events = HandEventSerializer(many=True)
    next_after_seq = serializers.IntegerField(allow_null=True)
    has_more = serializers.BooleanField()


class ReplayQuerySerializer(serializers.Serializer):
    seq = QueryIntegerField(min_value=0, max_value=MAX_SEQ, required=False)


class HandReplaySerializer(serializers.Serializer):
    hand_id = serializers.IntegerField()
    table_id = serializers.IntegerField()
    room = serializers.CharField()
    stake = serializers.IntegerField()
    seq = serializers.IntegerField()
    last_seq = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Hand.Status.choices)
    phase = serializers.CharField()
    turn_seat = serializers.IntegerField(allow_null=True)
    dealer = serializers.IntegerField()
    n_seats = serializers.IntegerField()
    mode = serializers.CharField()
    moves_played = serializers.IntegerField()
    stock_count = serializers.IntegerField()
    stock = serializers.ListField(child=serializers.CharField())
    doors = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))
    offer = OfferSerializer(allow_null=True)
    seats = PublicSeatSerializer(many=True)
    players = PlayerSerializer(many=True)
    pending_u = serializers.IntegerField(allow_null=True)
    win = WinSerializer(allow_null=True)
    declaration = serializers.JSONField(allow_null=True)
    outcome = serializers.JSONField(allow_null=True)
    settlement = settlement_field()
    seed_hash = serializers.CharField()
    seed = serializers.CharField()
    client_seeds = serializers.ListField(
        child=serializers.CharField(allow_blank=True), allow_null=True
    )
    next_seed_hash = serializers.CharField(allow_null=True)
    fixed_deck = serializers.BooleanField()
    deck = serializers.ListField(child=serializers.CharField())
    result = HandResultSerializer(allow_null=True)


# --------------------------------------------------------------------------- rules


class CuocValueSerializer(serializers.Serializer):
    diem = serializers.IntegerField()
    dich = serializers.IntegerField()
    enabled = serializers.BooleanField()


class PresetSerializer(serializers.Serializer):
    """A complete ruleset by value (``Ruleset.to_dict()``): what a preset holds, and what a hand
    stores at its deal."""

    preset = serializers.CharField()
    preset_version = serializers.IntegerField(
        help_text="The version of the preset's table (raised whenever its values change)."
    )
    cuoc = serializers.DictField(child=CuocValueSerializer())
    ga_enabled = serializers.BooleanField()
    ga_points = serializers.IntegerField()
    ga = serializers.DictField(child=serializers.IntegerField())
    ga_tam_do_requires_leo = serializers.BooleanField()
    ga_bach_dinh_requires_tom = serializers.BooleanField()
    thap_thanh_formula = serializers.CharField()
    bao_payer = serializers.CharField()
    den_lang = serializers.JSONField(help_text='"declared" or a number of points.')
    four_eleven = serializers.BooleanField()
    thong_after_treo_tranh = serializers.BooleanField()
    bach_thu_must_be_declared = serializers.BooleanField()
    ga_gop = serializers.BooleanField()
    overrides = serializers.DictField(
        help_text="The overrides of the preset this table was built with (empty for a preset)."
    )


class ScoreInputSerializer(StrictInputSerializer):
    ruleset = RulesetSpecField(required=False, help_text="The default preset if omitted.")
    cuoc = CuocField(help_text='Cước slug → count, e.g. {"tam_do": 1, "leo": 2}.')


class ScoreOutputSerializer(serializers.Serializer):
    base = serializers.IntegerField()
    ga = serializers.IntegerField()
    total = serializers.IntegerField()


class CardsJSONField(serializers.JSONField):
    """Card codes in the shape ``shape`` (``card``, ``cards`` or ``mat``), checked by the rules
    core so that each malformed value gets the core's own code; games/api/schema.py documents
    the shape with the ``CardCode`` enum."""

    shape = "cards"


class CardCodeField(CardsJSONField):
    shape = "card"


class CardCodesField(CardsJSONField):
    shape = "cards"


class MatField(CardsJSONField):
    shape = "mat"


@extend_schema_field({"type": "string", "enum": list(WIN_SOURCES)})
class WinSourceField(serializers.JSONField):
    """Where the candidate card comes from, checked by the rules core."""


@extend_schema_field(
    {"oneOf": [{"type": "integer", "minimum": 0, "maximum": MAX_NHAI}, {"type": "boolean"}]}
)
class NhaiField(serializers.JSONField):
    """A count of nhái or a bool, checked by the rules core."""


class EvaluateContextSerializer(serializers.Serializer):
    """The calculator's optional facts about the hand (documentation only: the rules core
    validates ``context`` and refuses any other key)."""

    first_draw = serializers.BooleanField(
        required=False, help_text="The card is the hand's first stock card (Địa ù)."
    )
    previous_winner = serializers.BooleanField(
        required=False, help_text="The winner also won the previous hand (Thông)."
    )
    dealt_hand = CardCodesField(
        required=False,
        help_text="The 19 (or the dealer's 20) kinds dealt to the winner, for Thiên khai and "
        "Phá thiên; for a Thiên ù it must equal `hand`.",
    )
    nhai = NhaiField(
        required=False,
        help_text="The winner's nhái: a count, or true/false. Accepted for completeness; nhái "
        "only matter for the gà góp pot, never for cước, so they never change the answer.",
    )


@extend_schema_field(EvaluateContextSerializer)
class EvaluateContextField(serializers.JSONField):
    """The calculator's context, checked by the rules core."""


class EvaluateInputSerializer(StrictInputSerializer):
    ruleset = RulesetSpecField(required=False, help_text="The default preset if omitted.")
    mat = MatField(
        default=list, help_text='Eaten pairs, e.g. [["5V","5V"],["7N","7S"]]; four alike = a chíu.'
    )
    hand = CardCodesField(help_text="Kind codes of the hand before the candidate card.")
    card = CardCodeField(
        allow_null=True, help_text="The candidate card (null for Thiên ù: hand holds 20)."
    )
    source = WinSourceField(
        help_text="own_draw, other_draw, discard, returned (trả cửa into another door), chiu "
        "(chíu of another door's card), chiu_own_door (chíu of a card returned into the "
        "caller's door) or dealt (Thiên ù).",
    )
    context = EvaluateContextField(
        required=False,
        help_text="Optional facts: first_draw, previous_winner, dealt_hand, nhai; any other key "
        "is a 400.",
    )


class NoWinReasonSerializer(serializers.Serializer):
    code = serializers.ChoiceField(choices=list(NO_WIN_REASONS))
    message = serializers.CharField()
    message_vi = serializers.CharField()


class EvaluateOutputSerializer(serializers.Serializer):
    win = serializers.BooleanField()
    waiting = serializers.ListField(child=serializers.CharField())
    bach_thu = serializers.BooleanField()
    cuoc = serializers.DictField(child=serializers.IntegerField())
    base = serializers.IntegerField()
    ga = serializers.IntegerField()
    total = serializers.IntegerField()
    equally_right = serializers.ListField(
        child=serializers.DictField(child=serializers.IntegerField()),
        required=False,
        help_text="Only where named hands tie in điểm and dịch (RULES.md §6): the other readings "
        "of the win, each as right as `cuoc` (declaring any of them is đúng).",
    )
    reason = NoWinReasonSerializer(required=False, help_text="Only when `win` is false: why.")


# --------------------------------------------------------------------------- rooms (the lobby)


class RoomNameSerializer(serializers.Serializer):
    vi = serializers.CharField()
    en = serializers.CharField()


class RoomRequirementsSerializer(serializers.Serializer):
    """What a player needs to create a table or sit in the room (RULES.md §11)."""

    balance = serializers.IntegerField(help_text="Minimum Quan balance.")
    level = serializers.IntegerField(help_text="Minimum level.")
    vip_points = serializers.IntegerField(help_text="Minimum VIP points.")
    badge = serializers.BooleanField(help_text="A reputation badge is needed.")


class RoomOutputSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = RoomNameSerializer()
    requirements = RoomRequirementsSerializer()
    vip = serializers.BooleanField()
    fees = serializers.DictField(
        help_text='Fee schedule in percent of each seat\'s gain: `{"declared": 5, "auto": 10}`, '
        'optionally `"xuong_sai": {"2": 30, "3": 10, "4": 5}`, or `{"by_players": {"2": 4, '
        '"3": 3, "4": 2}}`.'
    )
    xuong_sai_settled = serializers.BooleanField(
        help_text="False: a xướng sai is neither paid nor penalised in this room."
    )
    open_tables = serializers.IntegerField(help_text="Tables of the room that are not closed.")
    players_seated = serializers.IntegerField(help_text="Players seated at those tables.")


class QuickJoinInputSerializer(StrictInputSerializer):
    stake = StrictIntegerField(
        min_value=1,
        max_value=MAX_STAKE,
        required=False,
        help_text="Only tables at this stake; any affordable stake (15 × stake) if omitted.",
    )


# --------------------------------------------------------------------------- hand history


class HistoryQuerySerializer(serializers.Serializer):
    cursor = serializers.RegexField(
        HAND_CURSOR_RE,
        trim_whitespace=False,
        required=False,
        help_text="The `next` cursor of the previous page (opaque); the newest hands without.",
    )
    limit = QueryIntegerField(min_value=1, max_value=HISTORY_PAGE_MAX, default=HISTORY_PAGE_DEFAULT)


class OutcomeSerializer(serializers.Serializer):
    result = serializers.ChoiceField(choices=["u", "u_lao", "hoa"])
    seat = serializers.IntegerField(required=False, help_text="The winner (or ù láo claimer).")


class HistoryHandSerializer(serializers.Serializer):
    """One hand of a player's history, from that player's seat."""

    id = serializers.IntegerField()
    table_id = serializers.IntegerField()
    number = serializers.IntegerField()
    room = serializers.CharField()
    stake = serializers.IntegerField(help_text="Quan per point, frozen at the deal.")
    n_seats = serializers.IntegerField()
    seat = serializers.IntegerField(help_text="The player's hand seat (play order).")
    table_seat = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Hand.Status.choices)
    outcome = OutcomeSerializer(allow_null=True)
    result = serializers.ChoiceField(
        choices=["won", "lost", "hoa", "u_lao"],
        allow_null=True,
        help_text="The player's result: `won`, `lost`, `hoa`, or `u_lao` (it claimed a false "
        "ù); null while the hand is played.",
    )
    quan = serializers.IntegerField(
        allow_null=True,
        help_text="The player's booked Quan change (net of fees); null until the settlement "
        "is booked.",
    )
    practice = serializers.BooleanField(help_text="Played at a practice table (0 Quan, no XP).")
    rating_change = serializers.IntegerField(
        allow_null=True,
        help_text="How much the hand moved the player's rating (0 once voided); null for an "
        "unrated hand (practice, not settled yet).",
    )
    created_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)


class HistoryPageSerializer(serializers.Serializer):
    results = HistoryHandSerializer(many=True, source="hands")
    next = serializers.CharField(
        allow_null=True,
        source="next_cursor",
        help_text="Pass as `cursor` for the next (older) page; null on the last page.",
    )


class RatingSerializer(serializers.Serializer):
    """A player's rating in one ruleset family (docs/api.md, "Ratings")."""

    family = serializers.CharField(help_text="The ruleset preset of the rated hands.")
    rating = serializers.IntegerField(help_text="1500 + 40 × (mu − 3·sigma), rounded.")
    hands = serializers.IntegerField(help_text="Rated hands in this family.")
    provisional = serializers.BooleanField(help_text="Fewer than 20 rated hands.")


class PlayerProfileSerializer(serializers.Serializer):
    """A player's public profile (counts over its ended hands)."""

    username = serializers.CharField()
    display_name = serializers.CharField()
    level = serializers.IntegerField()
    xp = serializers.IntegerField()
    badge = serializers.BooleanField(help_text="Reputation badge, granted by staff.")
    hands_played = serializers.IntegerField(help_text="Ended hands it played.")
    wins = serializers.IntegerField(help_text="Of those, the ones it won (ù).")
    win_rate = serializers.FloatField(allow_null=True, help_text="wins / hands_played (0–1).")
    biggest_win_points = serializers.IntegerField(
        help_text="The most points the others paid it in one hand (0 without a paid win)."
    )
    favourite_cuoc = serializers.CharField(
        allow_null=True, help_text="The cước it declared most often in its wins (a slug)."
    )
    member_since = serializers.DateTimeField()
    rating = RatingSerializer(
        allow_null=True, help_text="Its rating in the family it played most; null before any."
    )
    ratings = RatingSerializer(many=True, help_text="Every family it is rated in.")


# --------------------------------------------------------------------------- export (audit)


class ExportTableSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class ExportRoomSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    fees = serializers.JSONField(help_text="The room's fee schedule, in percent of each gain.")
    xuong_sai_settled = serializers.BooleanField()


class ExportPlayerSerializer(serializers.Serializer):
    seat = serializers.IntegerField(help_text="The rules core's seat (play order).")
    username = serializers.CharField()
    table_seat = serializers.IntegerField()
    user_id = serializers.IntegerField(
        allow_null=True,
        help_text="The player the deal bound to the seat (the deal event's payload.seats); "
        "null for a hand dealt before the deal bound its seats.",
    )
    account = serializers.IntegerField(
        allow_null=True,
        help_text="The ledger account the deal bound to the seat: its settlement entries go "
        "there. Null at a practice table and for a hand dealt before the binding.",
    )


class ExportPrefsSerializer(serializers.Serializer):
    auto_u = serializers.BooleanField()
    auto_chiu = serializers.BooleanField()


class ExportConfigSerializer(serializers.Serializer):
    seats = serializers.IntegerField()
    mode = serializers.CharField()
    ruleset = serializers.JSONField(
        help_text="The complete ruleset frozen at the deal (as a preset is listed: every cước, "
        'the gà table, every option, preset_version); older exports: {"preset", "overrides"}.'
    )
    previous_winner = serializers.IntegerField(allow_null=True)
    prefs = ExportPrefsSerializer(many=True, help_text="Each seat's preferences at the deal.")


class ExportEventSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    type = serializers.CharField()
    seat = serializers.IntegerField(allow_null=True)
    system = serializers.BooleanField()
    bot = serializers.BooleanField(help_text="A server bot's move (practice tables).")
    payload = serializers.JSONField(help_text="The move as the rules core replays it ({} at 0).")
    effects = serializers.JSONField(help_text="What the server derived from the move.")
    prev_hash = serializers.CharField(
        help_text="The previous event's hash (for the deal: the hand's seed_hash)."
    )
    hash = serializers.CharField(
        help_text="SHA-256 (hex) of the event's canonical JSON (docs/audit.md)."
    )
    mac = serializers.CharField(
        allow_blank=True,
        help_text="HMAC-SHA256 (hex) of its hash under the record key, checked by whoever holds "
        "the key (docs/audit.md); empty on events appended before keys existed.",
    )
    mac_key = serializers.CharField(allow_blank=True, help_text="The record key's id.")
    created_at = serializers.CharField()


class ExportChainSerializer(serializers.Serializer):
    algorithm = serializers.CharField(help_text='"sha256-canonical-json-v1" (docs/audit.md).')
    head = serializers.CharField(
        allow_null=True, help_text="The last event's hash: the view's head_hash."
    )


class ExportLedgerEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    account = serializers.IntegerField()
    party = serializers.JSONField(help_text='A seat, "pot" or "house" (null: none of them).')
    amount = serializers.IntegerField(help_text="Quan, signed (credited > 0).")
    balance_after = serializers.IntegerField(help_text="The account's balance after the entry.")


class ExportLedgerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    kind = serializers.CharField()
    created_at = serializers.CharField()
    memo = serializers.CharField(allow_blank=True)
    user = serializers.IntegerField(allow_null=True)
    hand = serializers.IntegerField(allow_null=True)
    table = serializers.IntegerField(allow_null=True)
    prev_hash = serializers.CharField(help_text="The previous ledger transaction's hash.")
    hash = serializers.CharField(
        help_text="SHA-256 (hex) of the transaction's canonical JSON (docs/audit.md)."
    )
    mac = serializers.CharField(
        allow_blank=True,
        help_text="HMAC-SHA256 (hex) of its hash under the record key (docs/audit.md); empty on "
        "transactions booked before keys existed.",
    )
    mac_key = serializers.CharField(allow_blank=True, help_text="The record key's id.")
    entries = ExportLedgerEntrySerializer(many=True)


class ExportCapTransactionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    hash = serializers.CharField()
    prev_hash = serializers.CharField()


class ExportCapEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    balance_after = serializers.IntegerField(help_text="The balance the cap used.")
    transaction = ExportCapTransactionSerializer()


class ExportCapSerializer(serializers.Serializer):
    seat = serializers.IntegerField(help_text="A payer the settlement capped at its balance.")
    account = serializers.IntegerField(allow_null=True, help_text="Its wallet.")
    held_elsewhere = serializers.IntegerField(
        help_text="What the wallet held then for its seats at other tables: the cap "
        "is the entry's balance_after less this."
    )
    entry = ExportCapEntrySerializer(
        allow_null=True,
        help_text="The wallet's last ledger entry before the settlement (null: it had none).",
    )


class ExportLogHeadSerializer(serializers.Serializer):
    size = serializers.IntegerField()
    root = serializers.CharField()  # type: ignore[assignment]  # (DRF's Field.root: see TreeHeadSerializer)
    timestamp = serializers.IntegerField(help_text="ms since the Unix epoch.")
    key_id = serializers.CharField()
    signature = serializers.CharField(help_text="Ed25519, base64 (GET /api/v1/log/head).")


class ExportLogProofSerializer(serializers.Serializer):
    leaf_hash = serializers.CharField(help_text="SHA-256 (hex) of 0x00 and the leaf's data.")
    index = serializers.IntegerField()
    proof = serializers.ListField(child=serializers.CharField(), help_text="RFC 9162's path.")


class ExportLogSerializer(serializers.Serializer):
    head = ExportLogHeadSerializer(help_text="The signed tree head the proofs are under.")
    hand = ExportLogProofSerializer(help_text="The hand's head (its last event) in the log.")
    ledger = serializers.ListField(
        child=ExportLogProofSerializer(allow_null=True),
        help_text="The settlement transaction in the log (empty without one; null: not in the "
        "log under this head).",
    )


class HandExportSerializer(serializers.Serializer):
    """A hand as one self-contained document, verified offline by
    ``python -m games.rules.verify FILE`` (docs/audit.md)."""

    format = serializers.CharField()
    version = serializers.IntegerField()
    hand_id = serializers.IntegerField()
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Hand.Status.choices)
    table = ExportTableSerializer()
    room = ExportRoomSerializer()
    stake = serializers.IntegerField()
    players = ExportPlayerSerializer(many=True)
    config = ExportConfigSerializer()
    dealer = serializers.IntegerField()
    seed = serializers.CharField()
    seed_hash = serializers.CharField()
    shuffle = serializers.CharField(
        help_text='"hmac-sha256-seats-v1+sha256-ctr-fisher-yates-v1" (the fair deal), '
        '"sha256-ctr-fisher-yates-v1" (hands dealt before it), or "fixed" (deck).'
    )
    client_seeds = serializers.ListField(
        child=serializers.CharField(allow_blank=True),
        allow_null=True,
        help_text="Each seat's own seed in seat order (null before the fair deal).",
    )
    next_seed_hash = serializers.CharField(
        allow_null=True,
        help_text="The commitment to the table's next hand's server seed, made at this deal.",
    )
    deck = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Fixed-deck tables only."
    )
    events = ExportEventSerializer(many=True)
    chain = ExportChainSerializer(
        help_text="The log's hash chain (absent from exports made before the hash chains)."
    )
    result = HandResultSerializer(allow_null=True)
    bo_u = ExportMissedWinSerializer(
        many=True,
        help_text="Every bỏ ù of the hand in seq order, as the replay finds them (absent from "
        "exports made before bỏ ù were recorded as effects).",
    )
    ended_at = serializers.CharField(allow_null=True)
    quan = serializers.JSONField(
        allow_null=True,
        help_text='The settlement booked in Quan, with the "balances" and "pot_before" it was '
        "booked against (null until booked).",
    )
    ledger = ExportLedgerSerializer(allow_null=True)
    caps = ExportCapSerializer(
        many=True,
        help_text="Each capped payer's previous ledger entry (absent from exports made before "
        "the hash chains).",
    )
    log = ExportLogSerializer(
        allow_null=True,
        required=False,
        help_text="The hand's place in the transparency log under its latest signed head "
        "(docs/audit.md; null until the log has it; absent from older exports).",
    )
