"""``Hand.result`` is read through one typed accessor (``Hand.outcome_result()``, a
``games.rules.results.HandResult``): no module of games/ or accounts/ walks its JSON by hand
(``hand.result["outcome"]``, ``(hand.result or {}).get(...)``, ``result.get("settlement")``).
The rules core's own JSON (games/rules/, e.g. an export document) and the migrations' frozen
code are not ``Hand.result`` and are left out."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("games", "accounts", "core", "chan_api")
LEFT_OUT = ("games/rules/", "/migrations/")
# A stored result's parts that no other JSON of games/ names (a view has "settlement" too).
# A lookup into the JSON in a query (``result__isnull`` looks at the column, not into it).
JSON_PATH = re.compile(r"result__(?!isnull$)")
# A JSON lookup in a query, used as a prefilter only (the typed accessor decides): allowed here.
QUERY_PREFILTERS = {"games/selectors/players.py": 1}


def _is_result(node: ast.AST) -> bool:
    """``x.result`` or a name ``result`` / ``stored`` holding a stored result."""
    return (isinstance(node, ast.Attribute) and node.attr == "result") or (
        isinstance(node, ast.Name) and node.id == "result"
    )


def _key(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def dict_path_reads(source: str) -> list[tuple[int, str]]:
    """The lines of ``source`` that read a stored result as a dict, each with what was read."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Subscript)
            and (_is_result(node.value) or _key(node.slice) in ("outcome", "declaration"))
            or (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and (
                    _is_result(node.func.value)
                    or (node.args and _key(node.args[0]) in ("outcome", "declaration"))
                )
            )
        ):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            if _is_result(node.values[0]):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if JSON_PATH.search(node.value):  # a JSON path in a query: F("result__outcome")
                found.append((node.lineno, node.value))
        elif isinstance(node, ast.keyword) and node.arg and JSON_PATH.search(node.arg):
            found.append((getattr(node, "lineno", 0), node.arg))
    return found


def offenders(root: Path) -> dict[str, list[tuple[int, str]]]:
    out = {}
    for package in SCANNED:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if any(part in f"/{rel}" for part in LEFT_OUT):
                continue
            reads = dict_path_reads(path.read_text(encoding="utf-8"))
            if len(reads) > QUERY_PREFILTERS.get(rel, 0):
                out[rel] = reads
    return out


def test_no_module_walks_a_hands_result_by_hand() -> None:
    assert offenders(ROOT) == {}


def test_the_guard_sees_each_shape_of_a_dict_path_read() -> None:
    shapes = [
        'hand.result["outcome"]["seat"]',
        '(hand.result or {}).get("settlement")',
        'result.get("declaration") or {}',
        'outcome = payload["outcome"]',
        'Hand.objects.filter(result__outcome__result="u")',
        'seat = doc.get("outcome")',
    ]
    for shape in shapes:
        assert dict_path_reads(shape), shape
    fine = ["hand.outcome_result().winner", 'view["seats"]', '{"result": hand.result}']
    for shape in fine:
        assert not dict_path_reads(shape), shape
