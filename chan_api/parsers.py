"""A JSON parser that refuses what the API could not echo back: lone UTF-16 surrogates.

``json`` accepts ``"\\ud800"`` and yields a str that cannot be encoded as UTF-8; an error
message quoting it (an unknown field, an unknown cước slug) would then fail to render (a 500).
"""

from __future__ import annotations

import json
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class StrictJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        data = super().parse(stream, media_type, parser_context)
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ParseError("JSON strings must not contain lone surrogates.") from exc
        return data
