"""Push streams: a hand's events (``GET /hands/{id}/events``) and a player's feed (``GET
/me/feed``) as Server-Sent Events (``Accept: text/event-stream``) or NDJSON (``Accept:
application/x-ndjson``) — a transport over the same subscription and renders as the long polls.

* Resuming: ``Last-Event-ID`` (SSE; or the query's ``after_seq`` / ``after``) is the seq of
  the last event the client has: the stream starts after it.
* Each event is the JSON of the page it would be in (``GET /hands/{id}/events``,
  ``GET /me/feed``), rendered by the same selectors for the same seat: a seat's stream shows
  what its events page shows, never another seat's cards. SSE frames carry ``id: <seq>``,
  ``event: <type or kind>`` and ``data: <JSON>``; an NDJSON line is the JSON itself.
* Heartbeats every ``HEARTBEAT_SECONDS`` (SSE: a ``: heartbeat`` comment; NDJSON:
  ``{"heartbeat": <unix time>}``), and the stream ends after ``STREAM_SECONDS`` (SSE clients
  reconnect by themselves with ``Last-Event-ID``), so that a waiting slot is not held forever.
  A stream takes one of the token's long-poll slots while it is open.
* The credential is judged again before anything is sent and at least every
  ``CHAN_TOKEN_CACHE_SECONDS`` (games.live.credentials). A stream the server ends says why in a
  last event (:func:`closing`; SSE: ``event: closed``, NDJSON: ``{"closed": <reason>}``): the
  token revoked or expired, the player banned, the scope missing, the hand ended (after its
  ``settled`` event), the stream's time up, the server stopping.

Under ASGI (``LongPollApp``) a stream holds no thread: the renders run in worker threads,
shared by every stream of the same seat at the same cursor (one render per seat per move, not
per stream). Under WSGI (Django's test client, ``runserver``) the stream sends what there is
now and ends.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from django.db import close_old_connections
from django.http import StreamingHttpResponse
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request

from core.threads import in_thread
from games.live.credentials import Credential, credential_refusal, recheck_seconds
from games.rules.records import SETTLED
from games.selectors.feed import feed_page
from games.selectors.hands import hand_events_for_seat, hand_get

if TYPE_CHECKING:
    from games.live.long_poll import LongPollApp, Pending
    from games.live.subscription import Subscription

HEARTBEAT_SECONDS = 15.0
STREAM_SECONDS = 600.0
SSE = "sse"
NDJSON = "ndjson"
CONTENT_TYPES = {SSE: "text/event-stream", NDJSON: "application/x-ndjson"}
_ACCEPTS = (b"text/event-stream", b"application/x-ndjson")


class EventStreamRenderer(JSONRenderer):
    """Lets DRF accept ``Accept: text/event-stream`` (the stream itself is not rendered by DRF;
    an error body is JSON)."""

    media_type = "text/event-stream"
    format = "sse"
    by_format_query = False  # asked for with Accept only (chan_api/negotiation.py)


class NdjsonRenderer(JSONRenderer):
    media_type = "application/x-ndjson"
    format = "ndjson"
    by_format_query = False


STREAM_RENDERERS = [EventStreamRenderer, NdjsonRenderer]


def stream_format(request: Request) -> str | None:
    """ "sse" or "ndjson" when the request asks for a stream (its Accept header), else None."""
    accept = request.headers.get("Accept", "")
    if "text/event-stream" in accept:
        return SSE
    if "application/x-ndjson" in accept:
        return NDJSON
    return None


def asks_for_stream(scope: dict[str, Any]) -> bool:
    for name, value in scope.get("headers", ()):
        if name == b"accept" and any(a in value for a in _ACCEPTS):
            return True
    return False


def resume_cursor(request: Request, query_value: int | None, start: int) -> int:
    """Where a stream starts: after ``Last-Event-ID`` when the client sends one (a number),
    else after the query's cursor, else ``start``."""
    header = request.headers.get("Last-Event-ID", "").strip()
    if header.isdigit() and len(header) <= 18:
        return int(header)
    return query_value if query_value is not None else start


# ------------------------------------------------------------------------------- framing


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def frame(fmt: str, seq: int, name: str, data: Any) -> bytes:
    if fmt == SSE:
        return f"id: {seq}\nevent: {name}\ndata: {_dumps(data)}\n\n".encode()
    return (_dumps(data) + "\n").encode()


def heartbeat(fmt: str) -> bytes:
    if fmt == SSE:
        return b": heartbeat\n\n"
    return (_dumps({"heartbeat": int(time.time())}) + "\n").encode()


def opening(fmt: str) -> bytes:
    return b"retry: 2000\n\n" if fmt == SSE else b""


# Why the server ended a stream (its last event): games.live.credentials' verdicts, and these.
HAND_ENDED = "hand_ended"  # its ``settled`` event was sent: nothing more comes but a void
STREAM_ENDED = "stream_ended"  # STREAM_SECONDS passed: reconnect to go on
SERVER_STOPPING = "server_stopping"  # reconnect (another process answers)


def closing(fmt: str, reason: str) -> bytes:
    """The last event of a stream the server ends, saying why (no ``id``: a reconnection
    resumes after the last event sent)."""
    data = _dumps({"closed": reason})
    if fmt == SSE:
        return f"event: closed\ndata: {data}\n\n".encode()
    return (data + "\n").encode()


# ------------------------------------------------------------------------------- renders


def render_chunk(
    source: str, ident: int, seat: int | None, cursor: int, fmt: str, *, release: bool = True
) -> tuple[bytes, int, bool, bool]:
    """The frames after ``cursor`` of a hand's events for ``seat`` (``source`` "events",
    ``ident`` the hand; cursor -1: from the deal) or of a player's feed ("feed", the user).
    Returns the bytes, the new cursor, whether there is more and whether they hold the hand's
    ``settled`` event (its stream ends after it). Runs in a worker thread."""
    try:
        if source == "events":
            from games.api.serializers import HandEventSerializer

            hand = hand_get(hand_id=ident)
            page = hand_events_for_seat(
                hand=hand, seat=seat, after_seq=None if cursor < 0 else cursor
            )
            events = HandEventSerializer(page["events"], many=True).data
            body = b"".join(frame(fmt, e["seq"], e["type"], e) for e in events)
            nxt = page["next_after_seq"]
            # (the hand settled and every event up to the end of its log in this page)
            settled = not page["has_more"] and (
                hand.settled_at is not None or any(e["type"] == SETTLED for e in events)
            )
            return body, cursor if nxt is None else nxt, page["has_more"], settled
        page = feed_page(user_id=ident, after=max(cursor, 0))
        body = b"".join(frame(fmt, e["seq"], e["kind"], e) for e in page["entries"])
        return body, page["next_after"], page["has_more"], False
    finally:
        if release:  # a worker thread of the event loop's: its connection as Django's threads
            close_old_connections()


def wsgi_stream(
    source: str, ident: int, seat: int | None, cursor: int, fmt: str
) -> StreamingHttpResponse:
    """Under WSGI: what there is now, then the end (no thread waits on a stream here)."""

    def chunks() -> Iterator[bytes]:
        yield opening(fmt)
        position, more = cursor, True
        while more:
            body, position, more, _ = render_chunk(
                source, ident, seat, position, fmt, release=False
            )
            yield body
        yield heartbeat(fmt)

    response = StreamingHttpResponse(chunks(), content_type=CONTENT_TYPES[fmt])
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


# ------------------------------------------------------------------------------- under ASGI


_TIMED_OUT = -2
_GONE = -3


def _settle(future: asyncio.Future[int], why: int) -> None:
    if not future.done():
        future.set_result(why)


def job(p: Pending, seq: int, cursor: int) -> tuple[tuple[Any, ...], Any]:
    """The key of a stream's chunk after ``cursor`` at the topic's ``seq`` (shared by every
    stream of the same seat and format at that cursor) and how to render it."""
    source = p.topic and "feed" or "events"
    ident = p.user if source == "feed" else p.hand
    key = ("stream", source, ident, p.seat, cursor, seq, p.stream)
    return key, lambda: render_chunk(source, ident, p.seat, cursor, p.stream or SSE)  # type: ignore[arg-type]


async def stream(
    p: Pending,
    start: dict[str, Any],
    receive: Any,
    send: Any,
    feed: Subscription,
    app: LongPollApp,
    credential: Credential | None = None,
) -> None:
    """Serve the stream ``p`` until the client goes, the server stops, STREAM_SECONDS pass,
    the hand's settlement is sent or ``credential`` is no longer good (then a last event says
    why: :func:`closing`)."""
    from games.live.long_poll import _REPLACED, _gauge

    fmt = p.stream or SSE
    headers = [(k, v) for k, v in start["headers"] if k.lower() not in _REPLACED]
    headers += [
        (b"Content-Type", CONTENT_TYPES[fmt].encode("ascii")),
        (b"Cache-Control", b"no-cache"),
        (b"X-Accel-Buffering", b"no"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": opening(fmt), "more_body": True})
    loop = asyncio.get_running_loop()
    epoch = feed.epoch
    ends_at = loop.time() + STREAM_SECONDS
    check_every = recheck_seconds()
    next_beat, next_check = loop.time() + HEARTBEAT_SECONDS, loop.time() + check_every
    gone = asyncio.ensure_future(receive())
    current: list[asyncio.Future[int]] = []
    gone.add_done_callback(lambda _: current and _settle(current[0], _GONE))
    cursor, seq = p.after_seq, p.seq
    reason: str | None = None
    _gauge.add(1)
    try:
        render, fresh = True, False
        while not gone.done() and not app._stopping:
            if render:
                key, work = job(p, seq, cursor)
                try:
                    if fresh:  # the subscription may have missed a move: read it now
                        body, cursor, more, settled = await in_thread(work)
                    else:  # rendered once for every stream of this seat at this cursor
                        body, cursor, more, settled = await app.answers.get(key, work)
                except Exception:
                    break  # the hand is gone, the database away: the client reconnects
                if body:
                    reason = await credential_refusal(credential)  # (before it is sent)
                    if reason is not None or gone.done():
                        break
                    next_check = loop.time() + check_every
                    await send({"type": "http.response.body", "body": body, "more_body": True})
                if settled:
                    reason = HAND_ENDED
                    break
                if more:
                    fresh = True
                    continue
            woken = feed.wait_future(p.key, cursor, p._replace(after_seq=cursor))
            current[:] = [woken]
            if gone.done():
                _settle(woken, _GONE)
            app._waiting.add(woken)
            due = min(next_beat, next_check, ends_at)
            timer = loop.call_later(max(0.0, due - loop.time()), _settle, woken, _TIMED_OUT)
            try:
                result = await woken
            finally:
                timer.cancel()
                app._waiting.discard(woken)
                feed.forget(p.key, woken)
            if result in (_GONE, -1):
                break
            if result == _TIMED_OUT:
                now = loop.time()
                if now >= ends_at:
                    reason = STREAM_ENDED
                    break
                if app._stopping:
                    break
                if now >= next_check:
                    reason = await credential_refusal(credential)
                    if reason is not None:
                        break
                    next_check = now + check_every
                render = fresh = False
                if now >= next_beat:
                    next_beat = now + HEARTBEAT_SECONDS
                    beat = heartbeat(fmt)
                    await send({"type": "http.response.body", "body": beat, "more_body": True})
                    known = feed.seq_if_known(p.key, cursor, epoch)
                    render = fresh = known is None or known > cursor
                continue
            seq, render, fresh = result, True, False
        if reason is None and app._stopping:
            reason = SERVER_STOPPING
        if not gone.done():
            if reason is not None:
                last = closing(fmt, reason)
                await send({"type": "http.response.body", "body": last, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        _gauge.add(-1)
        gone.cancel()
