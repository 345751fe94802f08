"""OpenAPI pieces for the games endpoints: documented problem+json error responses."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from chan_api.schema import COMMON_DESCRIPTIONS, ProblemSerializer, problem_responses_for

_DESCRIPTIONS = {
    400: COMMON_DESCRIPTIONS[400] + " Or a rules-core code such as `unknown_card`, "
    "`unknown_move_type`, `invalid_move`, `invalid_deck`, `invalid_ruleset`, `invalid_cuoc`, "
    "`fixed_deck_not_allowed`.",
    403: "`not_a_participant`, `not_your_seat`, `hand_not_ended` (replay), or `permission_denied`.",
    404: "`not_found` (no such table or hand) or `no_hand` (the table never dealt).",
    409: "Conflict: `stale_seq` (with the current `seq`), `not_your_turn`, `wrong_phase`, "
    "`hand_over`; for tables `seat_taken`, `table_full`, `already_seated`, `not_seated`, "
    "`hand_in_progress`, `table_closed`, `seat_leaving`.",
    422: "A rule refused the move: the fault's slug (RULES.md §9, basic mode) or the rules core's "
    "code (`card_not_in_hand`, `card_not_offered`, `not_a_pair`, `cannot_chiu`, `not_a_win`, "
    "…); or `idempotency_key_reused`.",
}


class MoveProblemSerializer(ProblemSerializer):
    """A problem+json body for a refused move; ``seq`` is the hand's current seq."""

    seq = serializers.IntegerField(required=False, help_text="The hand's current seq.")


def problem_responses(*statuses: int, move: bool = False) -> dict[tuple[int, str], OpenApiResponse]:
    """``responses=`` entries documenting problem+json errors for these statuses."""
    body = MoveProblemSerializer if move else ProblemSerializer
    return problem_responses_for(statuses, _DESCRIPTIONS, body)
