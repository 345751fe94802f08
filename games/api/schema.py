"""OpenAPI pieces for the games endpoints: documented problem+json error responses."""

from __future__ import annotations

from collections.abc import Mapping

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers

from chan_api.schema import COMMON_DESCRIPTIONS, ProblemSerializer, problem_responses_for
from games.rules.cards import CODES

_DESCRIPTIONS = {
    **COMMON_DESCRIPTIONS,
    403: "`not_a_participant`, `not_your_seat`, `hand_not_ended` (replay), or `permission_denied`.",
    404: "`not_found` (no such table or hand) or `no_hand` (the table never dealt).",
    409: "Conflict: `stale_seq` (with the current `seq`), `not_your_turn`, `wrong_phase`, "
    "`hand_over`, `prefs_unchanged`; for tables `seat_taken`, `table_full`, `already_seated`, "
    "`not_seated`, `hand_in_progress`, `table_closed`, `seat_leaving`; "
    "`room_requirements_not_met` (with `room` and `missing`: the room's minimum balance, level, "
    "VIP points or badge) and `insufficient_balance` (with `needed`, `available`, `held` and "
    "`balance`: 10 × stake available to create, 15 × stake to sit; what seats hold is not "
    "available); the player's own limits (docs/api.md, limits): "
    "`limit_exceeded` (with `max_stake` and `stake`), `loss_limit_reached` (with `limit`, "
    "`period`, `lost`, `resets_at`), `cooling_off` and `self_excluded` (with `ends_at`).",
    422: "A rule refused the move: the fault's slug (RULES.md §9, basic mode; a `u` without a "
    "winning hand is `u_lao`) or the rules core's code (`card_not_in_hand`, `card_not_offered`, "
    "`not_a_pair`, `cannot_chiu`, `no_card_to_discard`, `bao`, `stock_exhausted`, "
    "`empty_declaration`, `no_such_seat` …); or `idempotency_key_reused`.",
}

_BAD_BODY = (
    "`parse_error` (not JSON, nested too deeply, lone surrogates), `invalid` (`errors` name the "
    "fields: unknown ones, wrong JSON types, out of range)"
)

# The 400 of each kind of endpoint, with every code that can reach it.
BAD_QUERY = {400: "`invalid`: a query parameter is malformed (`errors` name it)."}
BAD_REPLAY = {
    400: "`invalid` (`errors` name the query parameter) or `seq_out_of_range` (after the hand's "
    "last event).",
    409: "`record_broken`: the hand's stored log does not replay (it was changed outside the "
    "server); `check_hands` says where.",
}
BAD_TABLE = {
    400: f"{_BAD_BODY}, `invalid_ruleset` (`errors` name the key, e.g. "
    "`ruleset.overrides.ga_points`), `invalid_seat`; the test-only `deck`/`dealer`: "
    "`fixed_deck_not_allowed`, `invalid_deck`, `unknown_card`, `invalid_cards` (`errors.deck`)."
}
BAD_SEAT = {400: f"{_BAD_BODY}, `invalid_seat` (no such seat at this table)."}
BAD_JOIN = {
    **BAD_SEAT,
    403: "A private table: `invite_code_required` (no `code`), `invite_code_invalid` (a wrong "
    "one), `player_blocked` (its owner or a seated player and I have blocked one another); "
    "`player_banned`.",
}
BAD_MOVE = {
    400: f"{_BAD_BODY}; the move: `invalid_move` (not an object, missing or extra fields, a bad "
    "`seat`), `unknown_move_type`, `unknown_card`, `unknown_cuoc`, `invalid_cuoc_count` "
    "(declare); `invalid` (`expected_seq`); `invalid_idempotency_key`. Carries the hand's "
    "`seq` once the move reached the hand."
}
BAD_SCORE = {
    400: f"{_BAD_BODY}, `invalid_ruleset` or `invalid_cuoc`; `errors` name the key "
    "(`ruleset.overrides.ga_points`, `cuoc.tom`)."
}
BAD_EVALUATE = {
    400: f"{_BAD_BODY}; the calculator's codes, with `errors` naming the field at fault "
    "(`hand`, `mat`, `card`, `source`, `context.<key>`, `ruleset.<key>`): `invalid_ruleset`, "
    "`unknown_source`, `unknown_card`, `invalid_cards`, `invalid_mat`, `invalid_mat_group`, "
    "`wrong_card_count` (hand + mat not 19, or a Thiên ù hand not 20), `too_many_copies`, "
    "`missing_card`, `unexpected_card`, `chiu_needs_three`, `invalid_context` (a bad or "
    "unknown context key)."
}


# Request and response headers of particular operations.
ETAG = OpenApiParameter(
    "ETag",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[200, 304],
    required=True,
    description='Strong validator of the view: `"<hand id>-<seq>"`.',
)
IF_NONE_MATCH = OpenApiParameter(
    "If-None-Match",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="A previous `ETag` (or `*`): answer 304 while it still matches.",
)
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    pattern=r"^[\x21-\x7e]{1,128}$",
    description="1–128 visible ASCII characters, unique per move the client means to make: a "
    "retry with the same key and body replays the first response and appends nothing.",
)
IDEMPOTENT_REPLAYED = OpenApiParameter(
    "Idempotent-Replayed",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[201],
    enum=["true"],
    description="`true` when this is the stored response to an earlier request with the same "
    "`Idempotency-Key`; absent otherwise.",
)
LOCATION_CREATED = OpenApiParameter(
    "Location",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[201],
    required=True,
    description="The new table's URL: `/api/v1/tables/{id}`.",
)
LOCATION_REDIRECT = OpenApiParameter(
    "Location",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[302],
    required=True,
    description="The hand's URL: `/api/v1/hands/{id}`.",
)


class CardsFieldSchema(OpenApiSerializerFieldExtension):
    """Card-code fields of the calculator: one code (or null), a list of codes, or mat groups,
    all referring to one ``CardCode`` enum component."""

    target_class = "games.api.serializers.CardsJSONField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):  # type: ignore[no-untyped-def]
        component = ResolvedComponent(
            name="CardCode",
            type=ResolvedComponent.SCHEMA,
            object="CardCode",
            schema={
                "type": "string",
                "enum": list(CODES),
                "description": "A kind code: 2V…9V, 2N…9N, 2S…9S or CC.",
            },
        )
        auto_schema.registry.register_on_missing(component)
        shape = self.target.shape
        if shape == "card":
            return {"allOf": [component.ref], "nullable": True}
        cards = {"type": "array", "items": component.ref}
        if shape == "mat":
            return {"type": "array", "items": {**cards, "minItems": 2, "maxItems": 4}}
        return cards


class MoveProblemSerializer(ProblemSerializer):
    """A problem+json body for a refused move; ``seq`` is the hand's current seq."""

    seq = serializers.IntegerField(required=False, help_text="The hand's current seq.")


class MissingRequirementSerializer(serializers.Serializer):
    requirement = serializers.ChoiceField(choices=["balance", "level", "vip_points", "badge"])
    needed = serializers.JSONField(help_text="An integer; `true` for the badge.")
    have = serializers.JSONField(help_text="An integer; `false` for the badge.")


class TableProblemSerializer(ProblemSerializer):
    """A problem+json body of the table endpoints: ``insufficient_balance`` carries ``needed``,
    ``available``, ``held`` and ``balance``; ``room_requirements_not_met`` carries ``room`` and ``missing``."""

    needed = serializers.IntegerField(required=False, help_text="Quan needed (10 or 15 × stake).")
    balance = serializers.IntegerField(required=False, help_text="The player's Quan.")
    available = serializers.IntegerField(
        required=False, help_text="balance − held: what the player's seats do not hold."
    )
    held = serializers.IntegerField(
        required=False, help_text="Quan held for the player's seats (15 × stake a table)."
    )
    room = serializers.CharField(required=False, help_text="The room's slug.")
    missing = MissingRequirementSerializer(
        many=True,
        required=False,
        help_text='What the player lacks, e.g. `[{"requirement": "balance", "needed": 150000, '
        '"have": 50000}]`.',
    )


LINK_NEXT = OpenApiParameter(
    "Link",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[200],
    description='`<…/tables?…&cursor=…>; rel="next"` when there is an older page; absent on '
    "the last page.",
)


def problem_responses(
    *statuses: int,
    move: bool = False,
    table: bool = False,
    request_body: bool = False,
    descriptions: Mapping[int, str] | None = None,
) -> dict[tuple[int, str], OpenApiResponse]:
    """``responses=`` entries documenting problem+json errors for these statuses, plus those of
    every authenticated endpoint (401, 429, 500) and, with ``request_body``, 400/413/415.
    ``table``: the body of the table endpoints (:class:`TableProblemSerializer`)."""
    body = MoveProblemSerializer if move else TableProblemSerializer if table else ProblemSerializer
    return problem_responses_for(
        statuses, {**_DESCRIPTIONS, **(descriptions or {})}, body, request_body=request_body
    )


# --------------------------------------------------------------------------- typed JSON
# What the serializers carry as free JSON (the rules core's dicts) described exactly, for client
# generators: the move a `oneOf` over its types with a `type` discriminator (one schema per class
# of games/rules/moves.py), each effect of an event likewise, the results and the records. The
# postprocessing hook (chan_api.schema.typed_schema_hook) adds these components and puts them in
# place of the untyped properties listed in TYPED_PROPERTIES.

REF = "#/components/schemas/"


def ref(name: str, *, nullable: bool = False, description: str | None = None) -> dict:
    """A reference to a component; OpenAPI 3.0 wants a nullable one wrapped in ``allOf``."""
    out: dict = (
        {"allOf": [{"$ref": REF + name}]} if nullable or description else {"$ref": REF + name}
    )
    if nullable:
        out["nullable"] = True
    if description:
        out["description"] = description
    return out


SEAT = {"type": "integer", "minimum": 0, "maximum": 3, "description": "A hand seat (0..n-1)."}
CARD = ref("CardCode")
CARDS = {"type": "array", "items": ref("CardCode")}
CUOC_COUNTS = {
    "type": "object",
    "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 10},
    "description": "Cước slug → count (RULES.md §8).",
}

# The fields of each move type beyond `type` and `seat`: the rules core's move classes
# (games/rules/moves.py; a test checks that both name the same fields).
MOVE_FIELDS: dict[str, dict[str, dict]] = {
    "discard": {"card": ref("CardCode", description="The card discarded.")},
    "eat": {
        "card": ref("CardCode", description="The offered card eaten."),
        "with": ref("CardCode", description="The hand card it pairs with."),
    },
    "draw": {},
    "pass": {},
    "chiu": {"card": ref("CardCode", description="The offered card chíu'd (three in hand).")},
    "tra_cua": {"card": ref("CardCode", description="The card returned (trả cửa).")},
    "u": {},
    "declare": {
        "cuoc": CUOC_COUNTS,
        "auto": {"type": "boolean", "description": "Let the server declare (instead of cuoc)."},
    },
    "set_prefs": {"auto_u": {"type": "boolean"}, "auto_chiu": {"type": "boolean"}},
}
# The fields a move of that type must carry (declare: `cuoc` or `auto`; set_prefs: one of them).
MOVE_REQUIRED: dict[str, list[str]] = {
    "discard": ["card"],
    "eat": ["card", "with"],
    "chiu": ["card"],
    "tra_cua": ["card"],
}
MOVE_SUMMARY = {
    "discard": "Discard a card to my door.",
    "eat": "Eat the offered card with a hand card (a chắn or a cạ).",
    "draw": "Draw from the stock.",
    "pass": "Let the offered card go by.",
    "chiu": "Chíu the offered card with three of it in hand.",
    "tra_cua": "Trả cửa: return a card after a chíu.",
    "u": "Declare a win (ù) on the offered card.",
    "declare": "Xướng: declare the cước of my win.",
    "set_prefs": "Turn automatic ù / chíu on or off.",
}


def _camel(slug: str) -> str:
    return "".join(part.capitalize() for part in slug.split("_"))


def _type_prop(value: str) -> dict:
    return {"type": "string", "enum": [value]}


def _union(name_of: dict[str, str], description: str) -> dict:
    return {
        "oneOf": [{"$ref": REF + n} for n in name_of.values()],
        "discriminator": {
            "propertyName": "type",
            "mapping": {t: REF + n for t, n in name_of.items()},
        },
        "description": description,
    }


def move_components() -> dict[str, dict]:
    """``<Type>Move`` (as the server says a move: legal moves, a hand event's move),
    ``<Type>MoveInput`` (the body of ``POST /hands/{id}/moves``) and the unions ``Move`` and
    ``MoveInput``."""
    out: dict[str, dict] = {}
    moves, inputs = {}, {}
    for mtype, fields in MOVE_FIELDS.items():
        required = MOVE_REQUIRED.get(mtype, [])
        name = f"{_camel(mtype)}Move"
        out[name] = {
            "type": "object",
            "description": MOVE_SUMMARY[mtype],
            "properties": {
                "type": _type_prop(mtype),
                **fields,
                "seat": {**SEAT, "description": "The acting seat."},
                "system": {
                    "type": "boolean",
                    "description": "Present (true) on a move the server made for the seat.",
                },
            },
            "required": ["type", *required, "seat"],
            "additionalProperties": False,
        }
        out[name + "Input"] = {
            "type": "object",
            "description": MOVE_SUMMARY[mtype],
            "properties": {
                "type": _type_prop(mtype),
                **fields,
                "seat": {**SEAT, "description": "Optional; must be the caller's own seat."},
                "expected_seq": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Refuse the move (409 stale_seq) unless the hand is at this "
                    "seq.",
                },
            },
            "required": ["type", *required],
            "additionalProperties": False,
        }
        moves[mtype], inputs[mtype] = name, name + "Input"
    out["Move"] = _union(moves, "A move in the rules core's JSON, by `type` (RULES.md §4).")
    out["MoveInput"] = _union(
        inputs,
        "One move, by `type`, plus an optional `expected_seq`; only the fields of its type.",
    )
    return out


def _effect(description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "object",
        "description": description,
        "properties": properties,
        "required": ["type", *required],
    }


HIDDEN = {
    "type": "boolean",
    "description": "Private to its seat until the end (never shown to a spectator).",
}
# The effects that are not a move (games/rules/engine.py, games/rules/replay.py).
EFFECT_COMPONENTS: dict[str, dict] = {
    "DealEffect": _effect(
        "The deal: the dealer and the stock; the caller's own dealt cards, every seat's and "
        "the deck once the hand has ended.",
        {
            "type": _type_prop("deal"),
            "dealer": SEAT,
            "stock_count": {"type": "integer"},
            "hand": {**CARDS, "description": "The caller's dealt cards (players only)."},
            "hands": {
                "type": "array",
                "items": CARDS,
                "description": "Every seat's dealt cards: after the end.",
            },
            "deck": {**CARDS, "description": "The whole deck in order: after the end."},
        },
        ["dealer", "stock_count"],
    ),
    "DrawnEffect": _effect(
        "The card a draw turned up.",
        {"type": _type_prop("drawn"), "seat": SEAT, "card": CARD},
        ["seat", "card"],
    ),
    "FaultEffect": _effect(
        "A fault (RULES.md §9) the move committed.",
        {
            "type": _type_prop("fault"),
            "seat": SEAT,
            "fault": {"type": "string", "description": "The fault's slug."},
            "bao": {"type": "boolean", "description": "The fault makes the seat báo."},
            "hidden": HIDDEN,
        },
        ["seat", "fault"],
    ),
    "BaoEffect": _effect(
        "The seat is báo: the server plays its turns to the end.",
        {"type": _type_prop("bao"), "seat": SEAT},
        ["seat"],
    ),
    "NhaiEffect": _effect(
        "Nhái: the seat ate a card matching a pair already on its mat.",
        {"type": _type_prop("nhai"), "seat": SEAT, "card": CARD, "points": {"type": "integer"}},
        ["seat", "card", "points"],
    ),
    "BoUEffect": _effect(
        "Bỏ ù: the seat let go a card it could have won on (private to it until the end).",
        {
            "type": _type_prop("bo_u"),
            "seat": SEAT,
            "card": CARD,
            "replaced_by": {
                **SEAT,
                "nullable": True,
                "description": "The seat whose win replaced the move, or null.",
            },
        },
        ["seat", "card", "replaced_by"],
    ),
    "ChiuEffect": _effect(
        "A chíu: the seat's own move, or (`auto`) made by its auto_chiu preference.",
        {
            "type": _type_prop("chiu"),
            "seat": SEAT,
            "card": CARD,
            "auto": {"type": "boolean"},
            "system": {"type": "boolean"},
        },
        ["seat", "card"],
    ),
    "WinEffect": _effect(
        "A win (ù).",
        {
            "type": _type_prop("win"),
            "seat": SEAT,
            "card": ref("CardCode", nullable=True),
            "source": {"type": "string", "description": "Where the winning card came from."},
        },
        ["seat", "card", "source"],
    ),
    "ClaimEffect": _effect(
        "Who got a card several seats could win on, and by which rule.",
        {
            "type": _type_prop("claim"),
            "seat": SEAT,
            "card": CARD,
            "rule": {"type": "string"},
            "replaced": {
                **SEAT,
                "nullable": True,
                "description": "The seat whose move the win replaced, or null.",
            },
            "pending": {"type": "boolean", "description": "Waits for the drawer."},
            "hidden": HIDDEN,
        },
        ["seat", "card", "rule"],
    ),
    "ClaimLostEffect": _effect(
        "A seat that could have won on the card lost it to another (private to it).",
        {
            "type": _type_prop("claim_lost"),
            "seat": SEAT,
            "card": CARD,
            "to": SEAT,
            "hidden": HIDDEN,
        },
        ["seat", "card", "to"],
    ),
    "HoaEffect": _effect("Hòa: the stock ran out; nobody pays.", {"type": _type_prop("hoa")}, []),
    "SystemEffect": _effect(
        "Why the server made this move for the seat.",
        {
            "type": _type_prop("system"),
            "seat": SEAT,
            "cause": {"type": "string", "enum": ["timeout", "bao", "left", "bot"]},
        },
        ["seat", "cause"],
    ),
}
EFFECT_TYPES = {
    "deal": "DealEffect",
    "drawn": "DrawnEffect",
    "fault": "FaultEffect",
    "bao": "BaoEffect",
    "nhai": "NhaiEffect",
    "bo_u": "BoUEffect",
    "win": "WinEffect",
    "claim": "ClaimEffect",
    "claim_lost": "ClaimLostEffect",
    "hoa": "HoaEffect",
    "system": "SystemEffect",
}


def effect_components() -> dict[str, dict]:
    """Each effect type's schema and the ``HandEffect`` union: the move itself (by its type;
    a chíu also as the automatic one) and what the server derived from it."""
    mapping = {
        mtype: ("ChiuEffect" if mtype == "chiu" else f"{_camel(mtype)}Move")
        for mtype in MOVE_FIELDS
    }
    mapping.update(EFFECT_TYPES)
    return {
        **EFFECT_COMPONENTS,
        "HandEffect": _union(mapping, "One effect of an event, by `type`."),
    }


_SCORE = {
    "type": "object",
    "properties": {k: {"type": "integer"} for k in ("base", "ga", "total")},
    "required": ["base", "ga", "total"],
}
_INTS = {"type": "array", "items": {"type": "integer"}}
QUAN_SEAT = {
    "type": "object",
    "properties": {
        "seat": SEAT,
        **{k: {"type": "integer"} for k in ("paid", "received", "fee", "net", "to_pot")},
    },
    "required": ["seat", "paid", "received", "fee", "net"],
}
POT_FLOWS = {
    "type": "object",
    "properties": {"in": {"type": "integer"}, "out": {"type": "integer"}},
    "required": ["in", "out"],
}
QUAN_PROPERTIES = {
    "seats": {"type": "array", "items": {"$ref": REF + "QuanSeat"}},
    "fees": {"type": "integer", "description": "Fees the house took, in Quan."},
    "fee_percent": {"type": "integer"},
    "pot": {"$ref": REF + "PotFlows"},
    "capped": {**_INTS, "description": "Seats whose payment was capped by their balance."},
    "dropped": _INTS,
    "practice": {"type": "boolean"},
}
RULESET_VALUE = {
    "description": "A ruleset option's value: a flag, a number, a name, or a table.",
    "anyOf": [
        {"type": "boolean"},
        {"type": "integer"},
        {"type": "string"},
        {"type": "object", "additionalProperties": True},
    ],
}
RESULT_COMPONENTS: dict[str, dict] = {
    "CardCode": {
        "type": "string",
        "enum": list(CODES),
        "description": "A kind code: 2V…9V, 2N…9N, 2S…9S or CC.",
    },
    **move_components(),
    **effect_components(),
    "Outcome": {
        "type": "object",
        "description": 'How the hand ended: `{"result": "u", "seat": n}` or `{"result": "hoa"}`.',
        "properties": {
            "result": {"type": "string", "enum": ["u", "u_lao", "hoa"]},
            "seat": {**SEAT, "description": "The winner (u) or the seat at fault (u_lao)."},
        },
        "required": ["result"],
    },
    "Score": _SCORE,
    "Declaration": {
        "type": "object",
        "description": "The winner's xướng against the true cước (RULES.md §8).",
        "properties": {
            "cuoc": CUOC_COUNTS,
            "auto": {"type": "boolean"},
            "verdict": {"type": "string", "enum": ["dung", "thieu", "sai"]},
            "true_cuoc": CUOC_COUNTS,
            "declared_score": {"$ref": REF + "Score"},
            "true_score": {"$ref": REF + "Score"},
            "equally_right": {
                "type": "array",
                "items": CUOC_COUNTS,
                "description": (
                    "Other readings of the win as right as `true_cuoc` (RULES.md §6: named hands"
                    " tied in điểm and dịch), each a whole cước map scoring `true_score`;"
                    " declaring any of them is đúng. Absent when there are none."
                ),
            },
        },
        "required": ["cuoc", "auto", "verdict", "true_cuoc", "declared_score", "true_score"],
    },
    "Transfer": {
        "type": "object",
        "properties": {
            "from": SEAT,
            "to": {
                "oneOf": [SEAT, {"type": "string", "enum": ["pot"]}],
                "description": "A seat or the pot (gà góp).",
            },
            "points": {"type": "integer"},
            "reason": {"type": "string"},
        },
        "required": ["from", "to", "points", "reason"],
    },
    "SettlementFacts": {
        "type": "object",
        "description": "Empty for a hòa.",
        "properties": {
            "winner": SEAT,
            "verdict": {"type": "string", "enum": ["dung", "thieu", "sai"]},
            "declared_score": {"type": "integer"},
            "true_score": {"type": "integer"},
            "winner_faults": {"type": "array", "items": {"type": "string"}},
            "penalty": {"type": "string", "nullable": True},
            "bao": _INTS,
            "takes_pot": {"type": "boolean"},
        },
    },
    "QuanSeat": QUAN_SEAT,
    "PotFlows": POT_FLOWS,
    "QuanSettlement": {
        "type": "object",
        "description": "The settlement booked in Quan.",
        "properties": {
            **QUAN_PROPERTIES,
            "balances": {**_INTS, "description": "Export only: the wallets it was booked against."},
            "pot_before": {"type": "integer", "description": "Export only."},
        },
        "required": ["seats", "fees", "fee_percent", "pot", "capped", "dropped"],
    },
    "Settlement": {
        "type": "object",
        "description": "The points settlement (RULES.md §10) and, once booked, its Quan.",
        "properties": {
            "result": {"type": "string", "enum": ["u", "u_lao", "hoa"]},
            "transfers": {"type": "array", "items": {"$ref": REF + "Transfer"}},
            "facts": {"$ref": REF + "SettlementFacts"},
            "thong_next": {**SEAT, "nullable": True},
            "quan": ref("QuanSettlement", nullable=True),
        },
        "required": ["result", "transfers", "facts", "thong_next"],
    },
    "SettledRecord": {
        "type": "object",
        "description": "The `settled` record: the Quan booked, and the ledger transaction.",
        "properties": {
            "type": _type_prop("settled"),
            **QUAN_PROPERTIES,
            "transaction": {"type": "integer", "nullable": True},
        },
        "required": ["type", "seats", "fees", "fee_percent", "pot", "practice", "transaction"],
    },
    "VoidedRecord": {
        "type": "object",
        "description": "The `voided` record: who voided the hand, why, and the reversal.",
        "properties": {
            "type": _type_prop("voided"),
            "by": {"type": "string"},
            "reason": {"type": "string"},
            "transaction": {"type": "integer", "nullable": True},
        },
        "required": ["type", "by", "reason"],
    },
    "HandRecord": _union(
        {"settled": "SettledRecord", "voided": "VoidedRecord"}, "A record after the end."
    ),
    "Analysis": {
        "type": "object",
        "description": "Basic mode: my hand grouped, the cards worth discarding, my waiting set.",
        "properties": {
            "chan": {"type": "array", "items": CARDS},
            "ca": {"type": "array", "items": CARDS},
            "ba_dau": {"type": "array", "items": CARDS},
            "que": CARDS,
            "chan_count": {"type": "integer"},
            "ca_count": {"type": "integer"},
            "trash": CARDS,
            "quick_select": ref("CardCode", nullable=True),
            "blocked": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Card code → the fault its discard would be.",
            },
            "forced": {"type": "boolean"},
            "waiting": CARDS,
            "eat_with": CARDS,
        },
    },
    "RulesetValue": RULESET_VALUE,
}
_BY_PLAYERS = {"type": "object", "additionalProperties": {"type": "integer"}}
RESULT_COMPONENTS["FeeSchedule"] = {
    "type": "object",
    "description": "A room's fees in percent of each seat's gain (RULES.md §11).",
    "properties": {
        "declared": {"type": "integer"},
        "auto": {"type": "integer"},
        "by_players": {**_BY_PLAYERS, "description": "Number of players → percent."},
        "xuong_sai": {**_BY_PLAYERS, "description": "Number of players → percent."},
    },
}
_OVERRIDES = {
    "type": "object",
    "additionalProperties": ref("RulesetValue"),
    "description": "Ruleset key → value (RULES.md §7).",
}

# (component, property) → the schema that replaces the serializer's untyped one; ``[]`` after the
# property: its items. The description the serializer gave is kept.
# The fields a feed entry's `data` may hold (games/live/kinds.py names which, per kind; a test
# checks every kind's fields are here).
FEED_DATA_FIELDS: dict[str, dict] = {
    "seat": {**SEAT, "description": "My seat in the hand (or the seat that changed)."},
    "dealer": SEAT,
    "seq": {"type": "integer", "description": "The hand's seq: send it as `expected_seq`."},
    "phase": {"type": "string"},
    "deadline": {"type": "string", "format": "date-time", "nullable": True},
    "card": CARD,
    "moves": {"type": "array", "items": {"type": "string", "enum": ["chiu", "u"]}},
    "winner": {**SEAT, "nullable": True},
    "quan": ref("QuanSeat", nullable=True, description="My seat's line of the settlement."),
    "change": {"type": "string", "enum": ["joined", "left", "ready"]},
    "user_id": {"type": "integer"},
    "username": {"type": "string"},
    "ready": {"type": "boolean"},
    "reason": {
        "type": "string",
        "enum": ["limit", "stake", "idle"],
        "nullable": True,
        "description": "Why the server stood the player up between hands (null: it left "
        "itself, or was banned): its own limits, 15 × stake it cannot cover, not ready in time.",
    },
    "limit": {
        "type": "string",
        "enum": [
            "loss_limit_day",
            "loss_limit_week",
            "loss_limit_month",
            "max_stake",
            "cool_off",
            "self_exclusion",
        ],
        "nullable": True,
        "description": "With `reason` limit: which of its own limits (GET /me/limits' names).",
    },
    "amount": {"type": "integer"},
    "day": {"type": "string", "format": "date"},
    "minutes_played": {"type": "integer", "description": "Minutes since the session began."},
    "net": {"type": "integer", "description": "Quan won in the session (negative: lost)."},
    "reminder_minutes": {"type": "integer"},
    "next_at": {"type": "string", "format": "date-time", "nullable": True},
    "challenge_id": {"type": "integer", "description": "GET /challenges/{id}."},
    "stake": {"type": "integer", "description": "Quan per point."},
    "room": {"type": "string", "description": "A room's slug."},
    "expires_at": {"type": "string", "format": "date-time"},
    "answer": {"type": "string", "enum": ["accepted", "declined"]},
    "table_id": {"type": "integer", "nullable": True, "description": "The private table."},
    "family": {"type": "string", "description": "The ruleset family (preset) of the rating."},
    "rating": {"type": "integer", "description": "My rating after the change."},
    "rating_change": {"type": "integer", "description": "How much the hand moved my rating."},
    "provisional": {"type": "boolean", "description": "Fewer rated hands than the threshold."},
    "voided": {"type": "boolean", "description": "The reversal of a voided hand's change."},
    "tournament_id": {"type": "integer", "description": "GET /tournaments/{id}."},
    "name": {"type": "string", "description": "The arena's name."},
    "ends_at": {"type": "string", "format": "date-time"},
    "status": {"type": "string", "enum": ["finished", "cancelled"]},
    "rank": {"type": "integer", "nullable": True, "description": "My final rank."},
    "score": {"type": "integer", "description": "My arena points, or my final score on a board."},
    "prize": {"type": "integer", "nullable": True, "description": "Quan I won."},
    "points": {
        "type": "integer",
        "description": "The arena points a voided hand had given me, taken off (0 after the "
        "payout).",
    },
    "payout_stands": {
        "type": "boolean",
        "description": "The void came after the arena's payout: nothing was taken off.",
    },
    "direction": {"type": "string", "enum": ["sent", "received"]},
    "season": {"type": "string", "description": "A week (`2026-W49`) or a month (`2026-12`)."},
    "board": {"type": "string", "description": "`quan`, `xp` or `rating:<family>`."},
}

TYPED_PROPERTIES: dict[tuple[str, str], dict] = {
    ("FeedEntry", "data"): {
        "type": "object",
        "description": "The kind's fields (docs/api.md, the player's feed): which of these an "
        "entry holds depends on its `kind`.",
        "properties": FEED_DATA_FIELDS,
        "additionalProperties": False,
    },
    ("LimitsOutput", "play_blocked"): {
        "type": "object",
        "nullable": True,
        "description": "Why I may not sit now, as the 409 a seat would get (its `code`, "
        "`detail` and the error's own fields), or null.",
        "properties": {"code": {"type": "string"}, "detail": {"type": "string"}},
        "required": ["code", "detail"],
        "additionalProperties": True,
    },
    ("HandEvent", "move"): ref("Move", nullable=True),
    ("HandEvent", "record"): ref("HandRecord", nullable=True),
    ("HandEvent", "effects"): {"type": "array", "items": ref("HandEffect")},
    ("HandView", "legal_moves"): {"type": "array", "items": ref("Move")},
    ("HandView", "analysis"): ref("Analysis", nullable=True),
    ("HandView", "declaration"): ref("Declaration", nullable=True),
    ("HandView", "outcome"): ref("Outcome", nullable=True),
    ("HandView", "settlement"): ref("Settlement", nullable=True),
    ("HandResult", "outcome"): ref("Outcome"),
    ("HandResult", "declaration"): ref("Declaration", nullable=True),
    ("HandResult", "settlement"): ref("Settlement", nullable=True),
    ("HandReplay", "declaration"): ref("Declaration", nullable=True),
    ("HandReplay", "outcome"): ref("Outcome", nullable=True),
    ("HandReplay", "settlement"): ref("Settlement", nullable=True),
    ("HandExport", "quan"): ref("QuanSettlement", nullable=True),
    ("ExportEvent", "payload"): {
        "type": "object",
        "description": "The payload as stored: the move (a `Move`) or the record (a "
        "`HandRecord`), with the schema version `v` it was stored in. At the deal: `v`, "
        "`deck_hash` (the deck it dealt) and `seats`, each seat in play order bound to its "
        "player and the ledger account its settlement moves (deals logged before either have "
        "neither).",
        "properties": {
            "type": {"type": "string"},
            "v": {"type": "integer"},
            "deck_hash": {"type": "string", "description": "At the deal only."},
            "seats": {
                "type": "array",
                "description": "At the deal: who sits where, inside the hash chain (`position`, "
                "`player`, `account`). In a `settled` record: each seat's Quan "
                "(`QuanSettlement`'s `seats`).",
                "items": {
                    "type": "object",
                    "additionalProperties": True,
                    "properties": {
                        "position": SEAT,
                        "player": {"type": "integer", "description": "The player's user id."},
                        "account": {
                            "type": "integer",
                            "nullable": True,
                            "description": "The wallet its settlement moves (null: practice).",
                        },
                    },
                },
            },
        },
        "additionalProperties": True,
    },
    ("ExportEvent", "effects"): {"type": "array", "items": ref("HandEffect")},
    ("ExportConfig", "ruleset"): _OVERRIDES,
    ("ExportRoom", "fees"): ref("FeeSchedule"),
    ("RoomOutput", "fees"): ref("FeeSchedule"),
    ("ExportLedgerEntry", "party"): {
        "nullable": True,
        "oneOf": [SEAT, {"type": "string", "enum": ["pot", "house"]}],
    },
    ("MissingRequirement", "needed"): {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
    ("MissingRequirement", "have"): {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
    ("Preset", "den_lang"): {
        "oneOf": [{"type": "string", "enum": ["declared"]}, {"type": "integer"}]
    },
    ("Preset", "overrides"): _OVERRIDES,
    ("Ruleset", "overrides"): _OVERRIDES,
    ("RulesetSpec", "overrides"): _OVERRIDES,
}


# Card codes the serializers give as plain strings: each a `CardCode`.
_CARD_NULL = ref("CardCode", nullable=True)
_DOORS = {"type": "array", "items": CARDS}
for _component, _prop, _schema in (
    ("HandView", "hand", CARDS),
    ("HandView", "doors", _DOORS),
    ("HandView", "stock", CARDS),
    ("HandReplay", "stock", CARDS),
    ("HandReplay", "doors", _DOORS),
    ("HandReplay", "deck", CARDS),
    ("HandExport", "deck", CARDS),
    ("Offer", "card", CARD),
    ("MatGroup", "cards", CARDS),
    ("MatGroup", "taken", CARD),
    ("Win", "card", _CARD_NULL),
    ("MissedWin", "card", CARD),
    ("ExportMissedWin", "card", CARD),
    ("PublicSeat", "hand", CARDS),
    ("PublicSeat", "dealt", CARDS),
    ("EvaluateOutput", "waiting", CARDS),
):
    TYPED_PROPERTIES[(_component, _prop)] = _schema
# The type of an event: the deal, a move's type, or a record's.
_EVENT_TYPE = {"type": "string", "enum": ["deal", *MOVE_FIELDS, "settled", "voided"]}
TYPED_PROPERTIES[("HandEvent", "type")] = _EVENT_TYPE
TYPED_PROPERTIES[("ExportEvent", "type")] = _EVENT_TYPE


def type_components(result: dict) -> dict:
    """Add the typed components and put them in place of the untyped properties."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.pop("LegalMove", None)  # the legal moves are `Move`s now
    for name, schema in RESULT_COMPONENTS.items():
        schemas[name] = schema
    for (component, prop), schema in TYPED_PROPERTIES.items():
        props = schemas.get(component, {}).get("properties", {})
        if prop not in props:
            continue  # a serializer renamed or dropped: the schema test names what is untyped
        old = props[prop]
        new = dict(schema)
        if "description" in old and "description" not in new:
            if "$ref" in new:
                new = {"allOf": [new]}
            new["description"] = old["description"]
        if old.get("readOnly"):
            new["readOnly"] = True
        props[prop] = new
    return result
