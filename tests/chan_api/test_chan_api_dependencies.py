"""What the production stack imports is what `pip install .` installs.

A production install has the project's dependencies and theirs, nothing of the dev extra. A
module that only the dev virtualenv happens to have (pulled in by a test tool) imports in every
test and bench, and fails in production at start-up: kombu's Redis transport imports
``packaging``, which only ``kombu[redis]`` declares, and the Celery worker of a ``pip install .``
died on it while the suite passed. So the start-up imports of the web, the worker and the beat
run in a fresh interpreter where every distribution outside the closure of the project's
declared requirements (extras followed, the dev extra left out, read from the installed
metadata) cannot be imported, as in a production install; optional imports (structlog's
``rich``) must then fall back as they do there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "chan-server"
OWN_PACKAGES = {"chan_api", "core", "games", "accounts"}

# The start-up of each process of the Procfile, without serving: the web's configuration and
# application, the worker's app with its tasks and its broker's transport, the beat's app.
STARTUP = """
import importlib.abc, json, os, runpy, sys

HIDDEN = set(json.loads(os.environ["CHAN_TEST_HIDDEN"]))


class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r} (not declared)", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
import django
django.setup()
runpy.run_path("deploy/gunicorn.conf.py")
import gunicorn.app.wsgiapp, gunicorn.arbiter
import chan_api.uvicorn_worker, chan_api.asgi
from chan_api.celery import app
app.loader.import_default_modules()
app.connection_for_write().transport
import celery.apps.worker, celery.concurrency.thread
import chan_api.beat
import celery.apps.beat
print(json.dumps(sorted(sys.modules)))
"""


def requirement_closure(root: str) -> set[str]:
    """The installed distributions ``root`` requires, with their requirements, following the
    extras each requirement asks for; markers evaluated for this interpreter."""
    found: dict[str, set[str]] = {}
    todo: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    while todo:
        name, extras = todo.pop()
        key = canonicalize_name(name)
        known = found.get(key)
        if known is not None and extras <= known:
            continue
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # not installed here: nothing of it can be imported either
        found[key] = (known or set()) | extras
        for line in requires:
            req = Requirement(line)
            wanted = req.marker is None or any(
                req.marker.evaluate({"extra": extra}) for extra in {"", *extras}
            )
            if wanted:
                todo.append((req.name, frozenset(req.extras)))
    return set(found)


def undeclared_modules(closure: set[str]) -> set[str]:
    """The top-level modules installed here by distributions outside ``closure`` only."""
    return {
        top
        for top, dists in metadata.packages_distributions().items()
        if top not in OWN_PACKAGES and not {canonicalize_name(d) for d in dists} & closure
    }


def startup_modules(hidden: set[str]) -> list[str]:
    env = {
        "CHAN_TEST_HIDDEN": json.dumps(sorted(hidden)),
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "chan_api.settings",
        "SECRET_KEY": "dependencies-test",
        "CELERY_BROKER_URL": "redis://127.0.0.1:6379/15",
        "DEBUG": "0",
    }
    env.pop("PYTEST_VERSION", None)
    done = subprocess.run(
        [sys.executable, "-c", STARTUP],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_stack_starts_with_only_what_the_project_declares() -> None:
    closure = requirement_closure(PROJECT)
    hidden = undeclared_modules(closure)
    assert {"pytest", "schemathesis", "rich"} <= hidden  # the dev extra's, and what they bring
    loaded = {module.partition(".")[0] for module in startup_modules(hidden)}
    # It did start (startup_modules checks the exit status), and loaded what it needs from the
    # closure: the Redis transport with its packaging, the web's and the worker's servers.
    assert {"kombu", "redis", "packaging", "gunicorn", "uvicorn", "celery"} <= loaded


def test_the_closure_follows_extras_and_leaves_the_dev_extra_out() -> None:
    closure = requirement_closure(PROJECT)
    assert {"django", "celery", "kombu", "redis", "packaging"} <= closure  # celery[redis]
    assert "pytest" not in closure and "schemathesis" not in closure  # the dev extra
