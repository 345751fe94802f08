"""The rules core imports nothing from Django, DRF or Celery (STYLE.md)."""

from __future__ import annotations

import ast
import pathlib

FORBIDDEN = ("django", "rest_framework", "celery", "drf_spectacular", "psycopg", "accounts")
RULES_DIR = pathlib.Path(__file__).resolve().parents[2] / "games" / "rules"


def imported_modules(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_module_under_games_rules_imports_django() -> None:
    files = sorted(RULES_DIR.rglob("*.py"))
    assert files
    for path in files:
        bad = {m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN}
        assert not bad, f"{path.name} imports {bad}"


def test_the_games_package_init_imports_nothing_heavy() -> None:
    # games/rules is imported as games.rules, so games/__init__.py must stay import-free too
    init = RULES_DIR.parent / "__init__.py"
    assert not imported_modules(init)
