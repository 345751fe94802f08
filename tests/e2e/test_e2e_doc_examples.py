"""Every program the docs show runs as written, twice in a row, against a live server: each
```python and ```ts block of README.md, docs/*.md and clients/*/README.md that makes a client
(``ChanClient(``). The server's address is the only change: ``CHAN_URL`` is set, and a default
address written in the block is replaced by the live server's. (docs/examples/first_hand.sh, the
curl example, is run by test_e2e_worked_example.py.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients.test_clients_typescript import (
    TS,
    node,  # noqa: F401 (fixture)
    run,
)
from tests.e2e.test_e2e_worked_example import settler  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOCS += sorted((ROOT / "clients").glob("*/README.md"))
FENCE = re.compile(r"^```(python|ts)\n(.*?)^```$", re.M | re.S)
WRITTEN_ADDRESSES = ("http://127.0.0.1:8000", "https://chan.example")

pytestmark = pytest.mark.django_db(transaction=True)


def examples(language: str) -> list[pytest.param]:
    found = []
    for doc in DOCS:
        text = doc.read_text()
        for match in FENCE.finditer(text):
            if match.group(1) == language and "ChanClient(" in match.group(2):
                line = text[: match.start()].count("\n") + 1
                name = f"{doc.relative_to(ROOT)}:{line}"
                found.append(pytest.param(match.group(2), id=name))
    return found


def addressed(code: str, url: str) -> str:
    for written in WRITTEN_ADDRESSES:
        code = code.replace(written, url)
    return code


def test_the_examples_are_found() -> None:
    # the two clients' own examples at least (a change of fence or file would lose them)
    ids = [p.id for p in examples("python") + examples("ts")]
    assert any(i.startswith("clients/python/README.md") for i in ids), ids
    assert any(i.startswith("clients/typescript/README.md") for i in ids), ids


@pytest.mark.parametrize("code", examples("python"))
def test_a_python_example_runs_twice(code: str, live_server, settler) -> None:  # noqa: F811
    env = {**os.environ, "CHAN_URL": live_server.url}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "clients" / "python")])
    for attempt in (1, 2):
        done = subprocess.run(
            [sys.executable, "-c", addressed(code, live_server.url)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (attempt, done.stderr[-3000:])
        assert done.stdout.strip(), (attempt, "the example printed nothing")


@pytest.fixture(scope="module")
def ts_project(node, tmp_path_factory) -> Path:  # noqa: F811
    """A project that installed @chan/client from the checkout, as its README says."""
    built = run(node, "node_modules/typescript/bin/tsc", "-p", "tsconfig.json")
    assert built.returncode == 0, built.stdout + built.stderr
    project = tmp_path_factory.mktemp("ts-example")
    (project / "package.json").write_text(json.dumps({"type": "module", "private": True}))
    (project / "tsconfig.json").write_text(
        json.dumps(
            {
                "compilerOptions": {
                    "target": "ES2022",
                    "module": "NodeNext",
                    "moduleResolution": "NodeNext",
                    "types": ["node"],
                    "strict": True,
                    "outDir": "dist",
                    "skipLibCheck": True,
                },
                "include": ["example.ts"],
            }
        )
    )
    modules = project / "node_modules"
    (modules / "@chan").mkdir(parents=True)
    (modules / "@chan" / "client").symlink_to(TS)  # what `npm install <folder>` makes
    (modules / "@types").symlink_to(TS / "node_modules" / "@types")
    return project


@pytest.mark.parametrize("code", examples("ts"))
def test_a_typescript_example_runs_twice(code: str, node, ts_project, live_server, settler) -> None:  # noqa: F811
    (ts_project / "example.ts").write_text(addressed(code, live_server.url))
    tsc = str(TS / "node_modules" / "typescript" / "bin" / "tsc")
    compiled = subprocess.run(
        [node, tsc, "-p", "tsconfig.json"], cwd=ts_project, capture_output=True, text=True
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    for attempt in (1, 2):
        done = subprocess.run(
            [node, "dist/example.js"],
            cwd=ts_project,
            env={**os.environ, "CHAN_URL": live_server.url},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (attempt, done.stderr[-3000:])
        assert done.stdout.strip(), (attempt, "the example printed nothing")
