"""Write ``chan_client/_sync_client.py`` from ``chan_client/_async_client.py``.

The two clients are one source: the asynchronous one is written by hand, the synchronous one is
this file's mechanical translation of it (httpcore's unasync approach): ``async``/``await``
dropped, httpx's async names swapped for the sync ones, lines marked ``# unasync: drop`` left out.
``python unasync.py`` writes the file; ``python unasync.py --check`` exits 1 when it is stale.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "chan_client" / "_async_client.py"
TARGET = HERE / "chan_client" / "_sync_client.py"

SUBSTITUTIONS = [
    (r"\bAsyncChanClient\b", "ChanClient"),
    (r"\bhttpx\.AsyncClient\b", "httpx.Client"),
    (r"\bhttpx\.AsyncBaseTransport\b", "httpx.BaseTransport"),
    (r"\bAsyncIterator\b", "Iterator"),
    (r"Callable\[\[float\], Awaitable\[None\]\]", "Callable[[float], None]"),
    (r", Awaitable\b", ""),
    (r"\basyncio\.sleep\b", "time.sleep"),
    (r"\basync def\b", "def"),
    (r"\basync for\b", "for"),
    (r"\basync with\b", "with"),
    (r"\bawait ", ""),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
    (r"\baclose\b", "close"),
    (r"\baiter_lines\b", "iter_lines"),
    (r"\baread\b", "read"),
]

HEADER = (
    "# Written by clients/python/unasync.py from _async_client.py: edit that file, then run\n"
    "# `make py-client` (a test fails when this one is stale).\n"
)


def translate(source: str) -> str:
    lines = [line for line in source.splitlines() if not line.endswith("# unasync: drop")]
    text = "\n".join(lines) + "\n"
    for pattern, replacement in SUBSTITUTIONS:
        text = re.sub(pattern, replacement, text)
    # the sync client sleeps with time.sleep: import it where asyncio was
    text = text.replace("import random\n", "import random\nimport time\n", 1)
    # formatted as `ruff format` leaves it, so the lint step and the stale check agree
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(TARGET), "-"],
        input=HEADER + text,
        capture_output=True,
        text=True,
        check=True,
    )
    return formatted.stdout


def main(argv: list[str]) -> int:
    wanted = translate(SOURCE.read_text())
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text() != wanted:
            print(f"{TARGET} is stale: run `make py-client`", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(wanted)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
