"""Every message the API speaks has its Vietnamese in locale/vi, and the committed .mo is the
compiled .po (``make messages`` keeps them in step)."""

from __future__ import annotations

import gettext
import re
from pathlib import Path

LOCALE = Path(__file__).resolve().parents[2] / "locale" / "vi" / "LC_MESSAGES"


def po_entries() -> dict[str, str]:
    text = (LOCALE / "django.po").read_text(encoding="utf-8")
    entries = {}
    for block in text.split("\n\n"):
        assert "#, fuzzy" not in block, block
        found = re.search(r'^msgid ((?:".*"\n)+)msgstr ((?:".*"\n?)+)', block + "\n", re.M)
        if not found:
            continue

        def join(quoted: str) -> str:
            parts = re.findall(r'"(.*)"', quoted)
            return "".join(
                p.encode().decode("unicode_escape").encode("latin-1").decode() for p in parts
            )

        msgid, msgstr = join(found.group(1)), join(found.group(2))
        context = re.search(r'^msgctxt "(.*)"$', block, re.M)
        if msgid:  # a message with a context (pgettext) is keyed "context\x04msgid", as in a .mo
            entries[f"{context.group(1)}\x04{msgid}" if context else msgid] = msgstr
    return entries


def test_every_message_has_its_vietnamese() -> None:
    entries = po_entries()
    assert len(entries) > 100
    assert [m for m, t in entries.items() if not t] == []


def test_the_compiled_catalog_is_the_po() -> None:
    with (LOCALE / "django.mo").open("rb") as mo:
        catalog = gettext.GNUTranslations(mo)

    def translated(key: str) -> str:
        context, _, msgid = key.rpartition("\x04")
        return catalog.pgettext(context, msgid) if context else catalog.gettext(msgid)

    assert {m: translated(m) for m in po_entries()} == po_entries()
