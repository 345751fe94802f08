"""Examples of the transparency log's operations by operation id (chan_api.schema puts them in
/api/schema/), from a log of five leaves."""

from __future__ import annotations

from typing import Any

EXAMPLES: dict[str, dict[str, Any]] = {
    "log_head": {
        "response": {
            "size": 5,
            "root": "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
            "timestamp": 1796688000000,
            "key_id": "9a0f3c6c1b7e4f0e2b5d8a61c3f27e4d5b6a7980c1d2e3f405162738495a6b7c",
            "signature": "m1d5Vq3n0K2yS8bWnq8o3Jx8Xn3Gm2q0bq2S1l7nZ3Nq0r9Yt6b0XgkqSgJH0d0c"
            "8S5bq9JmS2dQ1o8wQ0Fz0BA==",
        }
    },
    "log_key": {
        "response": {
            "key_id": "9a0f3c6c1b7e4f0e2b5d8a61c3f27e4d5b6a7980c1d2e3f405162738495a6b7c",
            "algorithm": "ed25519",
            "public_key": "GbJ1xS3x1y8b1n2yqkq5hW3g0l4jv8bFzq3n2wW6y2E=",
            "public_key_pem": "-----BEGIN PUBLIC KEY-----\n"
            "MCowBQYDK2VwAyEAGbJ1xS3x1y8b1n2yqkq5hW3g0l4jv8bFzq3n2wW6y2E=\n"
            "-----END PUBLIC KEY-----\n",
        }
    },
    "log_consistency": {
        "parameters": {"first": 2, "second": 5},
        "response": {
            "first": 2,
            "second": 5,
            "proof": [
                "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            ],
        },
    },
    "log_inclusion": {
        "parameters": {
            "leaf": "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "size": 5,
        },
        "response": {
            "leaf": "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "index": 1,
            "size": 5,
            "proof": [
                "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
                "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            ],
        },
    },
}
