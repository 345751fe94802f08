"""Examples of the accounts and meta operations by operation id (see games/api/examples.py)."""

from __future__ import annotations

from typing import Any

EXAMPLES: dict[str, dict[str, Any]] = {
    "api_root": {
        "response": {
            "resources": {
                "register": "http://chan.example/api/v1/auth/register",
                "token": "chan_3q2Vw1kYbTzR8uN5mE0pLxHs7aJd4fGc",
                "check": "http://chan.example/api/v1/auth/check",
                "logout": "http://chan.example/api/v1/auth/logout",
                "tokens": "http://chan.example/api/v1/auth/tokens",
                "my_tokens": "http://chan.example/api/v1/me/tokens",
                "oauth_metadata": "http://chan.example/.well-known/oauth-authorization-server",
                "me": "http://chan.example/api/v1/me",
                "ledger": "http://chan.example/api/v1/me/ledger",
                "bonus": "http://chan.example/api/v1/me/bonus",
                "ledger_head": "http://chan.example/api/v1/ledger/head",
                "my_hands": "http://chan.example/api/v1/me/hands",
                "rooms": "http://chan.example/api/v1/rooms",
                "tables": "http://chan.example/api/v1/tables",
                "rules_presets": "http://chan.example/api/v1/rules/presets",
                "rules_score": "http://chan.example/api/v1/rules/score",
                "rules_evaluate": "http://chan.example/api/v1/rules/evaluate",
                "limits": "http://chan.example/api/v1/me/limits",
                "cool_off": "http://chan.example/api/v1/me/cool-off",
                "self_exclusion": "http://chan.example/api/v1/me/self-exclusion",
                "feed": "http://chan.example/api/v1/me/feed",
                "blocks": "http://chan.example/api/v1/me/blocks",
                "challenges": "http://chan.example/api/v1/challenges",
                "tournaments": "http://chan.example/api/v1/tournaments",
                "integrity_flags": "http://chan.example/api/v1/integrity/flags",
                "log_head": "http://chan.example/api/v1/log/head",
                "log_key": "http://chan.example/api/v1/log/key",
                "log_consistency": "http://chan.example/api/v1/log/proof/consistency",
                "log_inclusion": "http://chan.example/api/v1/log/proof/inclusion",
            },
            "templates": {
                "token_revoke": "http://chan.example/api/v1/auth/tokens/{token_id}",
                "my_token_revoke": "http://chan.example/api/v1/me/tokens/{token_id}",
                "player": "http://chan.example/api/v1/players/{username}",
                "player_hands": "http://chan.example/api/v1/players/{username}/hands",
                "room_quick_join": "http://chan.example/api/v1/rooms/{slug}/quick-join",
                "table": "http://chan.example/api/v1/tables/{table_id}",
                "table_join": "http://chan.example/api/v1/tables/{table_id}/join",
                "table_leave": "http://chan.example/api/v1/tables/{table_id}/leave",
                "table_ready": "http://chan.example/api/v1/tables/{table_id}/ready",
                "table_hand": "http://chan.example/api/v1/tables/{table_id}/hand",
                "table_hands": "http://chan.example/api/v1/tables/{table_id}/hands",
                "hand": "http://chan.example/api/v1/hands/{hand_id}",
                "hand_events": "http://chan.example/api/v1/hands/{hand_id}/events",
                "hand_moves": "http://chan.example/api/v1/hands/{hand_id}/moves",
                "hand_replay": "http://chan.example/api/v1/hands/{hand_id}/replay",
                "hand_export": "http://chan.example/api/v1/hands/{hand_id}/export",
                "leaderboard": "http://chan.example/api/v1/leaderboards/{board}",
                "challenge": "http://chan.example/api/v1/challenges/{challenge_id}",
                "tournament": "http://chan.example/api/v1/tournaments/{tournament_id}",
                "tournament_join": "http://chan.example/api/v1/tournaments/{tournament_id}/join",
                "tournament_leave": "http://chan.example/api/v1/tournaments/{tournament_id}/leave",
                "tournament_standings": (
                    "http://chan.example/api/v1/tournaments/{tournament_id}/standings"
                ),
                "challenge_accept": "http://chan.example/api/v1/challenges/{challenge_id}/accept",
                "challenge_decline": "http://chan.example/api/v1/challenges/{challenge_id}/decline",
                "challenge_cancel": "http://chan.example/api/v1/challenges/{challenge_id}/cancel",
                "block": "http://chan.example/api/v1/me/blocks/{username}",
                "integrity_flag": "http://chan.example/api/v1/integrity/flags/{flag_id}",
            },
            "schema": "http://chan.example/api/schema/",
            "docs": "http://chan.example/api/docs/",
            "redoc": "http://chan.example/api/redoc/",
        }
    },
    "auth_register": {
        "request": {
            "username": "lan",
            "password": "a-long-enough-Passw0rd!",
            "display_name": "Lan",
        },
        "response": {
            "token": "chan_3q2Vw1kYbTzR8uN5mE0pLxHs7aJd4fGc",
            "token_id": 8,
            "user": {
                "id": 6,
                "username": "lan",
                "display_name": "Lan",
                "balance": 50000,
                "held": 0,
                "available": 50000,
                "holds": [],
                "xp": 0,
                "level": 1,
                "next_level_xp": 10,
                "vip": 0,
                "vip_points": 0,
                "badge": False,
                "is_staff": False,
                "is_auditor": False,
                "rating": None,
                "ratings": [],
            },
        },
    },
    "auth_token_create": {
        "request": {"username": "lan", "password": "a-long-enough-Passw0rd!", "name": "laptop"},
        "response": {
            "token": "chan_3q2Vw1kYbTzR8uN5mE0pLxHs7aJd4fGc",
            "token_id": 10,
            "user": {
                "id": 6,
                "username": "lan",
                "display_name": "Lan",
                "balance": 50000,
                "held": 0,
                "available": 50000,
                "holds": [],
                "xp": 0,
                "level": 1,
                "next_level_xp": 10,
                "vip": 0,
                "vip_points": 0,
                "badge": False,
                "is_staff": False,
                "is_auditor": False,
                "rating": None,
                "ratings": [],
            },
        },
    },
    "auth_check": {
        "response": {"user_id": 6, "username": "lan", "now": "2026-12-01T15:38:40.116236Z"}
    },
    "auth_tokens_list": {
        "response": [
            {
                "id": 10,
                "name": "laptop",
                "key_prefix": "r-Eyywzl",
                "created_at": "2026-12-01T15:38:40.095931Z",
                "last_used_at": None,
                "revoked": False,
                "expires_at": "2026-12-31T15:38:40.095797Z",
                "expired": False,
                "scopes": ["read", "play", "ledger:read", "limits", "tokens"],
            },
            {
                "id": 8,
                "name": "registration",
                "key_prefix": "LkbpJJn_",
                "created_at": "2026-12-01T15:38:38.887150Z",
                "last_used_at": "2026-12-01T15:38:40.113584Z",
                "revoked": False,
                "expires_at": "2026-12-31T15:38:38.886894Z",
                "expired": False,
                "scopes": ["read", "play", "ledger:read", "limits", "tokens"],
            },
        ]
    },
    "auth_tokens_revoke": {"parameters": {"token_id": 10}},
    "auth_logout": {"parameters": {"Accept-Language": "vi"}},
    "me_retrieve": {
        "response": {
            "id": 6,
            "username": "lan",
            "display_name": "Lan",
            "balance": 50000,
            "held": 1500,
            "available": 48500,
            "holds": [
                {
                    "table_id": 3,
                    "table_name": "Chiếu Lan",
                    "stake": 100,
                    "amount": 1500,
                    "since": "2026-12-01T15:38:41.002113Z",
                }
            ],
            "xp": 0,
            "level": 1,
            "next_level_xp": 10,
            "vip": 0,
            "vip_points": 0,
            "badge": False,
            "is_staff": False,
            "is_auditor": False,
            "rating": {"family": "chan_van_van", "rating": 1630, "hands": 1, "provisional": True},
            "ratings": [
                {"family": "chan_van_van", "rating": 1630, "hands": 1, "provisional": True}
            ],
        }
    },
    "me_bonus_claim": {
        "response": {
            "transaction_id": 12,
            "amount": 10000,
            "balance": 60000,
            "claimed_at": "2026-12-01T15:38:40.163756Z",
            "next_claim_at": "2026-12-01T17:00:00Z",
        }
    },
    "me_ledger": {
        "response": {
            "results": [
                {
                    "id": 24,
                    "kind": "daily_bonus",
                    "amount": 10000,
                    "balance_after": 60000,
                    "created_at": "2026-12-01T15:38:40.163756Z",
                    "hand_id": None,
                    "table_id": None,
                    "memo": "Daily bonus 2026-12-01",
                    "transaction_id": 12,
                    "transaction_hash": "9b2f4c1e0d8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c",
                    "inclusion": None,
                },
                {
                    "id": 20,
                    "kind": "welcome_grant",
                    "amount": 50000,
                    "balance_after": 50000,
                    "created_at": "2026-12-01T15:38:38.872484Z",
                    "hand_id": None,
                    "table_id": None,
                    "memo": "Welcome grant",
                    "transaction_id": 10,
                    "transaction_hash": "1f3a5c7e9b0d2f4a6c8e0b1d3f5a7c9e1b3d5f7a9c0e2b4d6f8a0c2e4b6d8f0a",
                    "inclusion": None,
                },
            ],
            "next": None,
            "log_head": None,
        }
    },
    "ledger_head": {
        "response": {
            "tx_id": 13,
            "hash": "4907c84184f7efe30fb3780d7595ded5b486397aae71eb6e786b097770bd4042",
            "count": 13,
            "chains": [
                {
                    "chain": 0,
                    "tx_id": 9,
                    "hash": "2c1d0e5e8b7f4a3c9d6b1a0f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b",
                    "count": 9,
                },
                {
                    "chain": 5,
                    "tx_id": 13,
                    "hash": "4907c84184f7efe30fb3780d7595ded5b486397aae71eb6e786b097770bd4042",
                    "count": 4,
                },
            ],
        }
    },
}

_NO_LIMIT = {"value": None, "pending": None}
_LIMITS_VIEW = {
    "loss_limit_day": {"value": 20000, "pending": None},
    "loss_limit_week": {
        "value": 50000,
        "pending": {"value": 80000, "effective_at": "2026-12-02T16:00:00Z"},
    },
    "loss_limit_month": _NO_LIMIT,
    "max_stake": {"value": 1000, "pending": None},
    "reminder_minutes": {"value": 60, "pending": None},
    "losses": {"day": 1200, "week": 4300, "month": 4300},
    "cool_off": None,
    "self_exclusion": None,
    "play_blocked": None,
    "now": "2026-12-01T16:00:00Z",
}
_COOL_OFF = {
    "kind": "cool_off",
    "days": 7,
    "starts_at": "2026-12-01T16:00:00Z",
    "ends_at": "2026-12-08T16:00:00Z",
    "permanent": False,
}
LIMITS_EXAMPLES: dict[str, dict[str, Any]] = {
    "me_limits_retrieve": {"response": _LIMITS_VIEW},
    "me_limits_update": {
        "request": {"loss_limit_day": 20000, "loss_limit_week": 80000},
        "response": _LIMITS_VIEW,
    },
    "me_cool_off": {"request": {"days": 7}, "response": _COOL_OFF},
    "me_self_exclusion": {
        "request": {"days": None},
        "response": {
            "kind": "self_exclusion",
            "days": None,
            "starts_at": "2026-12-01T16:00:00Z",
            "ends_at": None,
            "permanent": True,
        },
    },
}
EXAMPLES.update(LIMITS_EXAMPLES)

_MY_TOKEN = {
    "id": 11,
    "name": "my bot",
    "key_prefix": "q8Zr2LmA",
    "created_at": "2026-12-01T15:40:02.117304Z",
    "last_used_at": None,
    "revoked": False,
    "expires_at": "2026-12-08T15:40:02.117201Z",
    "expired": False,
    "scopes": ["read", "bot:play"],
}
EXAMPLES.update(
    {
        "me_tokens_list": {"response": [_MY_TOKEN]},
        "me_tokens_create": {
            "request": {"scopes": ["read", "bot:play"], "name": "my bot", "expires_in": 604800},
            "response": {**_MY_TOKEN, "token": "q8Zr2LmA7fKx0pVd3sTgW9yBnE5hJcQu"},
        },
        "me_tokens_revoke": {"parameters": {"token_id": 11}},
    }
)
