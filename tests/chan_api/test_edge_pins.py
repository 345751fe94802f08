"""Pins on what the edge repeats (docs/edge.md).

The edge answers some requests outside Django (games/api/move_direct.py: moves;
games/live/rearm.py: long-poll re-arms and plain polls; games/live/long_poll.py and
games/live/streams.py: waits and streams after Django's first verdict). It repeats, by hand,
what Django's middleware and DRF's defaults decide. A middleware added to ``MIDDLEWARE`` (a
maintenance mode, a ban check) or a DRF default changed would be silently skipped there: so
these values are pinned, and a change fails here until the edge has been reviewed to repeat the
new verdict and the pin is updated with it.

``core/pipeline.py`` uses psycopg's private names (its public pipeline sends ``BEGIN`` with a
Sync and waits for it, a round trip the private path saves): psycopg is pinned to the version
tested, and a test fails when the installed version is another or a private name is gone."""

from __future__ import annotations

import os
import re
import tomllib
from importlib import metadata
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]

REVIEW = (
    "{name} changed. The edge answers requests outside Django (games/api/move_direct.py, "
    "games/live/rearm.py, games/live/long_poll.py, games/live/streams.py) and must be reviewed "
    "to repeat the new verdict (docs/edge.md) before this pin is updated."
)

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "chan_api.middleware.RequestContextMiddleware",
    "chan_api.middleware.ProblemNotFoundMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "chan_api.middleware.UtcApiMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "chan_api.deprecations.DeprecationHeadersMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "chan_api.middleware.RateLimitHeadersMiddleware",
    "axes.middleware.AxesMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "chan_api.permissions.ScopePermission",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "chan_api.throttles.AnonThrottle",
        "chan_api.throttles.UserThrottle",
    ],
    # (the rates are the operator's, THROTTLE_ANON and THROTTLE_USER: the edge reads the same)
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("THROTTLE_ANON", "60/min"),
        "user": os.environ.get("THROTTLE_USER", "6000/min"),
    },
    "DEFAULT_PARSER_CLASSES": ["chan_api.parsers.StrictJSONParser"],
}

PSYCOPG_PRIVATE = ("_exec_command", "_communicate_gen", "_get_tx_start_command", "_autocommit")


def test_the_middleware_the_edge_repeats_is_pinned() -> None:
    assert list(settings.MIDDLEWARE) == MIDDLEWARE, REVIEW.format(name="settings.MIDDLEWARE")


def test_the_drf_defaults_the_edge_repeats_are_pinned() -> None:
    for name, pinned in REST_FRAMEWORK.items():
        found = settings.REST_FRAMEWORK.get(name)
        assert found == pinned, REVIEW.format(name=f"REST_FRAMEWORK[{name!r}]")


def _modules_using_psycopg_private_names() -> dict[str, list[str]]:
    used: dict[str, list[str]] = {}
    for package in ("chan_api", "core", "games", "accounts"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text()
            names = [n for n in PSYCOPG_PRIVATE if re.search(rf"\.{n}\b", text)]
            if names:
                used[str(path.relative_to(ROOT))] = names
    return used


def _psycopg_requirement() -> Requirement:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for line in pyproject["project"]["dependencies"]:
        requirement = Requirement(line)
        if requirement.name == "psycopg":
            return requirement
    raise AssertionError("psycopg is not a dependency")


def test_psycopg_private_names_are_used_only_under_an_exact_pin_of_the_tested_version() -> None:
    used = _modules_using_psycopg_private_names()
    if not used:
        return  # psycopg's public API only: any version its requirement allows
    # Used (core/pipeline.py): pyproject.toml pins psycopg exactly, to the version installed
    # here, which the suite tests; the next version fails here until it is tested and pinned.
    specifiers = list(_psycopg_requirement().specifier)
    assert len(specifiers) == 1 and specifiers[0].operator == "==", (
        f"{used} use psycopg's private names: pyproject.toml must pin psycopg exactly "
        f"(psycopg==X.Y.Z), not {specifiers}"
    )
    installed = metadata.version("psycopg")
    assert specifiers[0].version == installed, (
        f"pyproject.toml pins psycopg {specifiers[0].version}, {installed} is installed: "
        "test the private names' use (core/pipeline.py) on it before the pin moves"
    )


@pytest.mark.django_db
def test_the_psycopg_private_names_used_exist_in_the_installed_version() -> None:
    from django.db import connection

    connection.ensure_connection()
    raw = connection.connection
    assert callable(getattr(raw, "_exec_command", None))
    assert callable(getattr(raw, "_get_tx_start_command", None))
    assert isinstance(getattr(raw, "_autocommit", None), bool)
    assert callable(getattr(psycopg.Pipeline, "_communicate_gen", None))
    used = {name for names in _modules_using_psycopg_private_names().values() for name in names}
    assert used <= set(PSYCOPG_PRIVATE), used
