"""The arrows point one way: services, selectors, the hand store and the clock raise domain
errors and never import the HTTP layer; no state is ever unpickled from the database."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOMAIN_MODULES = [
    *sorted((ROOT / "games" / "services").glob("*.py")),
    ROOT / "games" / "selectors.py",
    ROOT / "games" / "hand_store.py",
    ROOT / "games" / "clock.py",
    ROOT / "games" / "tasks.py",
    ROOT / "accounts" / "services.py",
    ROOT / "accounts" / "selectors.py",
]
HTTP_MODULES = ("rest_framework", "django.http", "chan_api.problems", "games.api", "accounts.api")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", DOMAIN_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_domain_layers_do_not_import_http(path: Path) -> None:
    http = {m for m in imported_modules(path) if m.startswith(HTTP_MODULES)}
    assert http == set()


def test_nothing_is_pickled() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for app in ("games", "accounts", "chan_api")
        for path in (ROOT / app).rglob("*.py")
        if {"pickle", "marshal", "shelve"} & imported_modules(path)
    ]
    assert offenders == []
