"""The live endpoints' thin views: the player's feed (page, long poll, streams), and what the
tables' views need to answer with an ETag, 304 and ``?wait=N`` (``table_conditional``).
The waiting itself is ``games.live``'s."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import scopes
from accounts.authentication import credential_key
from chan_api.schema import COMMON_HEADERS
from games.api.live_serializers import FeedPageSerializer, FeedQuerySerializer
from games.api.schema import ETAG, IF_NONE_MATCH, problem_responses
from games.hand_store import long_poll_slot
from games.live.announce import feed_topic
from games.live.long_poll import Pending, long_poll_deferrable, long_poll_pending
from games.live.streams import STREAM_RENDERERS, resume_cursor, stream_format, wsgi_stream
from games.live.waits import change_wait, feed_wait
from games.selectors.feed import feed_head, feed_page, feed_page_etag
from games.services.feed import feed_bonus_check, feed_reality_check

LAST_EVENT_ID = OpenApiParameter(
    "Last-Event-ID",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="A stream resumes after this seq (what the last event's `id` said).",
)


def if_none_match(request: Request) -> list[str] | None:
    from games.api.views import _if_none_match

    return _if_none_match(request)


def _matches(tags: list[str] | None, etag: str) -> bool:
    return tags is not None and ("*" in tags or etag in tags)


def _conditional_headers(response: Response, etag: str) -> Response:
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Authorization"
    return response


def content_etag(prefix: str, body: Any) -> str:
    digest = hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode()
    ).hexdigest()
    return f'"{prefix}-{digest[:24]}"'


def table_conditional(
    request: Request, *, wait: int, topic: str, prefix: str, render: Callable[[], Any]
) -> Response:
    """Answer ``render()``'s JSON with a content ETag (304 when ``If-None-Match`` holds it);
    with ``wait`` and a matching tag, wait for the topic's announcement first (under ASGI
    without a thread: the request is answered again once woken, or at the timeout)."""
    tags = if_none_match(request)
    since = time.time_ns() // 1000  # before the read: a change committed after it wakes us
    body = render()
    etag = content_etag(prefix, body)
    if wait and _matches(tags, etag):
        if long_poll_deferrable(request):
            pending = Pending("replay", 0, since, since, None, wait, topic=topic)
            return _conditional_headers(long_poll_pending(request, pending), etag)
        with long_poll_slot(token_id=credential_key(request.auth)):
            change_wait(etag=lambda: content_etag(prefix, render()), seen=etag, timeout=wait)
        body = render()
        etag = content_etag(prefix, body)
    if _matches(tags, etag):
        return _conditional_headers(Response(status=304), etag)
    return _conditional_headers(Response(body), etag)


class MeFeedApi(APIView):
    required_scope = scopes.READ
    renderer_classes = [JSONRenderer, *STREAM_RENDERERS]

    @extend_schema(
        operation_id="me_feed",
        tags=["me"],
        summary="My feed: what concerns me across all my tables, in order (cursor; ETag; "
        "?wait=N; streams)",
        description=(
            "Entries after `after` in seq order (1, 2, 3 … per player): a hand dealt to me, my "
            "turn (hand, seq, deadline), a claim window open to me, a hand ended, settled (my "
            "Quan) or voided, seats changing at my tables, a daily bonus to claim. Follow "
            "`next_after`. `?wait=N` (≤ 30 s) long-polls while there is nothing after `after` "
            "(at most 10 long polls or streams wait at once per token). Strong `ETag`; "
            "`If-None-Match` → 304. With `Accept: text/event-stream` or "
            "`application/x-ndjson` the feed is a stream instead (`Last-Event-ID` resumes, "
            "heartbeats every 15 s)."
        ),
        parameters=[
            FeedQuerySerializer,
            IF_NONE_MATCH,
            LAST_EVENT_ID,
            ETAG,
            *COMMON_HEADERS,
        ],
        responses={
            200: FeedPageSerializer,
            304: OpenApiResponse(description="Not modified (the ETag still matches)."),
            **problem_responses(400, 429),
        },
    )
    def get(self, request: Request) -> Response:
        query = dict(_valid(FeedQuerySerializer, request))
        user_id = request.user.pk
        feed_bonus_check(user=request.user)
        feed_reality_check(user=request.user)
        fmt = stream_format(request)
        if fmt is not None:
            cursor = resume_cursor(request, query["after"] or None, 0)
            if long_poll_deferrable(request):
                pending = Pending(
                    "stream",
                    0,
                    cursor,
                    cursor,
                    None,
                    0,
                    topic=feed_topic(user_id),
                    stream=fmt,
                    user=user_id,
                )
                return long_poll_pending(request, pending)
            return wsgi_stream("feed", user_id, None, cursor, fmt)  # type: ignore[return-value]
        after, limit, wait = query["after"], query["limit"], query["wait"]
        if wait:
            head = feed_head(user_id=user_id)
            if head <= after:
                if long_poll_deferrable(request):  # under ASGI: wait without this thread
                    pending = Pending(
                        "feed",
                        0,
                        head,
                        after,
                        None,
                        wait,
                        tags=if_none_match(request),
                        limit=limit,
                        topic=feed_topic(user_id),
                        user=user_id,
                    )
                    return _conditional_headers(long_poll_pending(request, pending), "")
                with long_poll_slot(token_id=credential_key(request.auth)):
                    feed_wait(user_id=user_id, after=after, timeout=wait)
        page = feed_page(user_id=user_id, after=after, limit=limit)
        etag = feed_page_etag(user_id, page, after, limit)
        if _matches(if_none_match(request), etag):
            return _conditional_headers(Response(status=304), etag)
        return _conditional_headers(Response(page), etag)


def _valid(serializer_class: type, request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
