"""A monitor of the transparency log anyone can run (docs/audit.md), without Django:
``python -m games.rules.verify monitor --url URL --state FILE [EXPORT …]``.

It fetches the log's key and latest signed head (``/api/v1/log/key``, ``/api/v1/log/head``),
checks the head's Ed25519 signature (``games.rules.log_entries``), then holds it to the head
saved in FILE by the previous run: the same key, a timestamp and a size that do not go back, and
RFC 9162's consistency proof from the saved tree to the new one (``games.rules.merkle``). Each
export given (``GET /api/v1/hands/{id}/export``) must have its hand's head, and its settlement
transaction, in the new tree (inclusion proofs fetched for them). Then it saves the new head in
FILE and prints ``consistent``; at the first inconsistency it prints it, keeps FILE as it was
and exits 1 (2 when the server cannot be asked). The bearer token is ``--token`` or
``CHAN_TOKEN``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from games.rules.log_entries import hand_leaf_hash, key_id, ledger_leaf_hash, tree_head_message
from games.rules.merkle import verify_consistency, verify_inclusion

Fetch = Callable[[str, Mapping[str, Any]], Any]


class Inconsistent(Exception):
    """What the monitor found wrong, in words."""


class Unreachable(Exception):
    pass


def http_fetch(url: str, token: str | None) -> Fetch:
    """GET ``url`` + path with the query, as JSON (the stdlib's urllib)."""

    def fetch(path: str, query: Mapping[str, Any]) -> Any:
        target = url.rstrip("/") + path + ("?" + urllib.parse.urlencode(query) if query else "")
        request = urllib.request.Request(target, headers={"Accept": "application/json"})
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.load(response)
        except urllib.error.HTTPError as exc:
            body = exc.read().decode(errors="replace")
            if exc.code in (400, 404):
                try:
                    problem = json.loads(body)
                except ValueError:
                    problem = {"code": body[:200]}
                raise Inconsistent(f"{path} answered {exc.code} {problem.get('code')}") from exc
            raise Unreachable(f"{target}: HTTP {exc.code}") from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise Unreachable(f"{target}: {exc}") from exc

    return fetch


def _hex(value: Any, what: str) -> bytes:
    try:
        raw = bytes.fromhex(value)
    except (TypeError, ValueError) as exc:
        raise Inconsistent(f"{what} is not hex") from exc
    if len(raw) != 32:
        raise Inconsistent(f"{what} is not 32 bytes")
    return raw


def _signed_head(fetch: Fetch, saved: Mapping[str, Any] | None) -> tuple[dict[str, Any], str]:
    """The log's head, its signature checked, and the key (base64) it checked with."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key = fetch("/api/v1/log/key", {})
    head = fetch("/api/v1/log/head", {})
    raw = base64.b64decode(key["public_key"])
    if key_id(raw) != key["key_id"]:
        raise Inconsistent("the log's key id is not the SHA-256 of its public key")
    if saved is not None and saved.get("key_id") != key["key_id"]:
        raise Inconsistent(f"the log's key changed: {saved.get('key_id')} → {key['key_id']}")
    if head["key_id"] != key["key_id"]:
        raise Inconsistent("the head is signed by another key than the log's")
    message = tree_head_message(
        size=head["size"],
        root=_hex(head["root"], "the head's root"),
        timestamp_ms=head["timestamp"],
    )
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(base64.b64decode(head["signature"]), message)
    except (InvalidSignature, ValueError) as exc:
        raise Inconsistent(f"the head of size {head['size']} has a bad signature") from exc
    return head, key["public_key"]


def _check_consistent(fetch: Fetch, saved: Mapping[str, Any], head: Mapping[str, Any]) -> None:
    first, second = saved["size"], head["size"]
    if head["timestamp"] < saved["timestamp"]:
        raise Inconsistent("the head's timestamp is older than the saved head's")
    if second < first:
        raise Inconsistent(f"the log shrank: {first} leaves saved, {second} now")
    old_root, new_root = _hex(saved["root"], "the saved root"), _hex(head["root"], "the root")
    proof: list[bytes] = []
    if 0 < first < second:
        answer = fetch("/api/v1/log/proof/consistency", {"first": first, "second": second})
        proof = [_hex(p, "a consistency proof's hash") for p in answer["proof"]]
    if not verify_consistency(first, second, old_root, new_root, proof):
        raise Inconsistent(
            f"no consistency: the saved tree of {first} leaves (root {saved['root']}) is not a "
            f"prefix of the tree of {second} leaves (root {head['root']})"
        )


def _check_included(fetch: Fetch, head: Mapping[str, Any], leaf: bytes, what: str) -> None:
    try:
        answer = fetch("/api/v1/log/proof/inclusion", {"leaf": leaf.hex(), "size": head["size"]})
    except Inconsistent as exc:
        raise Inconsistent(f"{what} is not in the log of {head['size']} leaves ({exc})") from exc
    proof = [_hex(p, "an inclusion proof's hash") for p in answer["proof"]]
    if not verify_inclusion(answer["index"], head["size"], leaf, proof, _hex(head["root"], "root")):
        raise Inconsistent(f"{what}'s inclusion proof does not lead to the head's root")


def _check_export(fetch: Fetch, head: Mapping[str, Any], name: str, doc: Mapping[str, Any]) -> None:
    events = doc.get("events") or []
    if not events:
        raise Inconsistent(f"{name}: the export has no events")
    last = events[-1]
    hand = hand_leaf_hash(hand_id=doc["hand_id"], seq=last["seq"], head=last["hash"])
    _check_included(fetch, head, hand, f"{name}: hand {doc['hand_id']}'s head at seq {last['seq']}")
    tx = doc.get("ledger")
    if tx is not None:
        leaf = ledger_leaf_hash(tx_id=tx["id"], tx_hash=tx["hash"])
        _check_included(fetch, head, leaf, f"{name}: ledger transaction {tx['id']}")


def monitor(fetch: Fetch, state: Path, exports: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """One run (see the module docstring): the new head, once saved; raises
    :class:`Inconsistent` (FILE untouched) or :class:`Unreachable`."""
    saved = json.loads(state.read_text()) if state.exists() and state.stat().st_size else None
    head, public_key = _signed_head(fetch, saved)
    if saved is not None:
        _check_consistent(fetch, saved, head)
    for name, doc in exports.items():
        _check_export(fetch, head, name, doc)
    kept = {**head, "public_key": public_key}
    scratch = state.with_name(state.name + ".new")
    scratch.write_text(json.dumps(kept, indent=2, sort_keys=True) + "\n")
    scratch.replace(state)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m games.rules.verify monitor", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--url", required=True, help="the server, e.g. https://chan.example")
    parser.add_argument("--state", required=True, type=Path, help="the saved head (JSON)")
    parser.add_argument("--token", default=os.environ.get("CHAN_TOKEN"), help="a bearer token")
    parser.add_argument("exports", nargs="*", help="hand exports whose inclusion to check")
    args = parser.parse_args(argv)
    exports = {}
    for name in args.exports:
        try:
            exports[name] = json.loads(Path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"cannot read {name}: {exc}")
            return 2
    try:
        head = monitor(http_fetch(args.url, args.token), args.state, exports)
    except Inconsistent as exc:
        print(f"inconsistent: {exc}")
        return 1
    except Unreachable as exc:
        print(f"cannot reach the log: {exc}")
        return 2
    except (KeyError, TypeError) as exc:
        print(f"inconsistent: the log answered without {exc}")
        return 1
    print(f"consistent: size {head['size']} root {head['root']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
