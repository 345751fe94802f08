"""The arrows point one way (docs/STYLE: api -> services/selectors -> models + rules -> core):
the domain modules raise domain errors and never import the HTTP layer, a selector never imports
a write module, ``core`` imports nothing of ours; no state is ever unpickled from the database.

The domain modules are found by walking the packages, so a new module is guarded the day it is
added; only the entry points are left out by name (the API packages, the admin, management
commands, DRF's authentication class, migrations)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The layers above the domain: what speaks HTTP (and chan_api/, the glue: settings, URLs,
# entry points, the problem+json rendering).
HTTP_MODULES = ("rest_framework", "django.http", "chan_api", "games.api", "accounts.api")
# Entry points into the domain, allowed to speak HTTP (paths relative to ROOT, folders end "/").
ENTRY_POINTS = (
    "games/api/",
    "accounts/api/",
    # The live transports speak HTTP by nature (ASGI, SSE, NDJSON), and so do the response
    # bodies they share with the hand's reads (render: DRF's JSON bytes); the rest of
    # games/live/ (announce, subscription, kinds, waits) is held to the domain's rule.
    "games/live/long_poll.py",
    "games/live/rearm.py",  # a long poll's re-arm answered as the API's edge answers it
    "games/live/credentials.py",  # an open wait's credential judged again as DRF judges it
    "games/live/streams.py",
    "games/live/render.py",
    "games/admin.py",
    "accounts/admin.py",
    "accounts/limit_admin.py",
    "games/season_admin.py",
    "accounts/authentication.py",
    "games/apps.py",
    "accounts/apps.py",
    "games/management/",
    "accounts/management/",
)
# The write side: what a selector must not import.
WRITE_MODULES = (
    "games.services",
    "games.tasks",
    "games.clock",
    "accounts.services",
    "accounts.ledger",
)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str = "") -> set[str]:
    """Every module ``source`` imports, at the top or inside a function, relative imports
    resolved against ``module`` (the importing module's dotted name)."""
    names: set[str] = set()
    package = module.split(".")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level], *filter(None, [base])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _matches(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(f"{p}.") for p in prefixes)


def _under(path: Path, places: tuple[str, ...]) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    return any(rel.startswith(p) if p.endswith("/") else rel == p for p in places)


def _modules(*apps: str) -> list[Path]:
    return sorted(
        path
        for app in apps
        for path in (ROOT / app).rglob("*.py")
        if "migrations" not in path.parts and not _under(path, ENTRY_POINTS)
    )


DOMAIN_MODULES = _modules("core", "games", "accounts")
# The read side: a module named ...selectors, or one in a selectors package.
SELECTOR_MODULES = [
    p for p in DOMAIN_MODULES if p.stem.endswith("selectors") or "selectors" in p.parts[:-1]
]
CORE_MODULES = _modules("core")


def offending_imports(path: Path, forbidden: tuple[str, ...]) -> set[str]:
    imports = imported_modules(path.read_text(encoding="utf-8"), module_name(path))
    return {name for name in imports if _matches(name, forbidden)}


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_walk_finds_every_domain_module() -> None:
    found = {rel(p) for p in DOMAIN_MODULES}
    for module in (
        "accounts/ledger.py",
        "accounts/ledger_selectors.py",
        "accounts/selectors.py",
        "accounts/services.py",
        "games/live/subscription.py",
        "games/hand_store.py",
        "games/audit.py",
        "games/export.py",
        "games/clock.py",
        "games/tasks.py",
        "games/rule_errors.py",
        "games/services/hands.py",
        "games/selectors/hands.py",
        "games/selectors/tables.py",
        "games/selectors/rules.py",
        "games/selectors/rooms.py",
        "games/selectors/history.py",
        "games/selectors/players.py",
        "core/errors.py",
        "core/metrics.py",
    ):
        assert module in found
    assert not any(name.startswith(("games/api/", "accounts/api/")) for name in found)
    assert {rel(p) for p in SELECTOR_MODULES} >= {
        "accounts/selectors.py",
        "accounts/ledger_selectors.py",
        "games/selectors/hands.py",
        "games/selectors/players.py",
    }


@pytest.mark.parametrize("path", DOMAIN_MODULES, ids=rel)
def test_the_domain_layers_do_not_import_http(path: Path) -> None:
    assert offending_imports(path, HTTP_MODULES) == set()


@pytest.mark.parametrize("path", SELECTOR_MODULES, ids=rel)
def test_a_selector_imports_no_write_module(path: Path) -> None:
    assert offending_imports(path, WRITE_MODULES) == set()


@pytest.mark.parametrize("path", CORE_MODULES, ids=rel)
def test_core_imports_nothing_of_ours(path: Path) -> None:
    ours = offending_imports(path, ("core", "games", "accounts", "chan_api"))
    assert {name for name in ours if name.split(".")[0] != "core"} == set()


def test_the_guard_sees_a_wrong_arrow_wherever_the_import_is() -> None:
    """The checks above would fail: a selector importing a service inside a function, a service
    importing the API layer, a relative import of the write side."""
    selector = "def f():\n    from games.services.progression import hand_winner\n"
    assert _matches_any(imported_modules(selector, "games.selectors.players"), WRITE_MODULES)
    service = "from chan_api.problems import problem_response\n"
    assert _matches_any(imported_modules(service, "games.services.hands"), HTTP_MODULES)
    relative = "from ..services import tables\n"
    assert _matches_any(imported_modules(relative, "games.selectors.tables"), WRITE_MODULES)
    assert not _matches_any(imported_modules("import chan_api_extra\n"), HTTP_MODULES)


def _matches_any(names: set[str], prefixes: tuple[str, ...]) -> bool:
    return any(_matches(name, prefixes) for name in names)


def test_nothing_is_pickled() -> None:
    offenders = [
        rel(path)
        for app in ("core", "games", "accounts", "chan_api")
        for path in (ROOT / app).rglob("*.py")
        if {"pickle", "marshal", "shelve"} & imported_modules(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
