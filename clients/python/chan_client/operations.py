"""Which client method speaks each operation of the server's schema (by ``operationId``).

A test compares this table with ``/api/schema/``: an operation the server gains without a
method here, or a method left for an operation it dropped, fails it; so does a name below that
one of the two clients lacks.
"""

from __future__ import annotations

OPERATIONS: dict[str, str] = {
    "api_root": "root",
    "auth_check": "check",
    "auth_logout": "logout",
    "auth_register": "register",
    "auth_token_create": "login",
    "auth_tokens_list": "legacy_tokens",
    "auth_tokens_revoke": "legacy_revoke_token",
    "me_tokens_list": "tokens",
    "me_tokens_create": "create_token",
    "me_tokens_revoke": "revoke_token",
    "hands_retrieve": "hand",
    "hands_events": "events",
    "hands_export": "export_hand",
    "hands_moves_create": "move",
    "hands_replay": "replay",
    "ledger_head": "ledger_head",
    "me_retrieve": "me",
    "me_bonus_claim": "claim_bonus",
    "me_hands": "my_hands",
    "me_ledger": "my_ledger",
    "me_feed": "feed",
    "me_limits_retrieve": "limits",
    "me_limits_update": "set_limits",
    "me_cool_off": "cool_off",
    "me_self_exclusion": "self_exclude",
    "players_retrieve": "player",
    "leaderboards_retrieve": "leaderboard",
    "players_hands": "player_hands",
    "rooms_list": "rooms",
    "rooms_quick_join": "quick_join",
    "rules_evaluate": "evaluate",
    "rules_presets": "presets",
    "rules_score": "score",
    "tables_list": "tables",
    "tables_create": "create_table",
    "tables_retrieve": "table",
    "tables_hand": "table_hand",
    "tables_hands": "table_hands",
    "tables_join": "join",
    "tables_leave": "leave",
    "tables_ready": "ready",
}
