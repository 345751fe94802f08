"""Content negotiation: DRF's, except that ``?format=`` naming no representation an operation
offers is ``406 not_acceptable``, as an ``Accept`` header naming none already is (DRF answers
``404``, as if the URL did not exist, a status the operations do not list). ``?format=`` names a
rendered body only (``json``; the schema's ``yaml``): a stream is asked for with ``Accept``,
which is what the edge serving streams reads (games/live/streams.py)."""

from __future__ import annotations

from collections.abc import Iterable

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer


class ContentNegotiation(DefaultContentNegotiation):
    def filter_renderers(
        self, renderers: Iterable[BaseRenderer], format: str
    ) -> list[BaseRenderer]:
        renderers = list(renderers)
        kept = [
            renderer
            for renderer in renderers
            if renderer.format == format and getattr(renderer, "by_format_query", True)
        ]
        if not kept:
            raise NotAcceptable(available_renderers=renderers)
        return kept
