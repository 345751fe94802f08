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
    "available).",
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
    "last event)."
}
BAD_TABLE = {
    400: f"{_BAD_BODY}, `invalid_ruleset` (`errors` name the key, e.g. "
    "`ruleset.overrides.ga_points`), `invalid_seat`; the test-only `deck`/`dealer`: "
    "`fixed_deck_not_allowed`, `invalid_deck`, `unknown_card`, `invalid_cards` (`errors.deck`)."
}
BAD_SEAT = {400: f"{_BAD_BODY}, `invalid_seat` (no such seat at this table)."}
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
