"""Long polls and streams that hold no thread and no database connection under ASGI:
``GET /hands/{id}?wait=N``, ``GET /hands/{id}/events?after_seq=S&wait=N``, ``GET
/me/feed?wait=N``, ``GET /tables/{id}?wait=N`` and ``GET /tables?wait=N``; and the streams
(``Accept: text/event-stream`` or ``application/x-ndjson``: ``games.live.streams``).

How a long poll runs (:class:`LongPollApp`, the ASGI application around Django's):

1. Django answers it as any request: middleware, authentication, throttles, the query's
   validation, the visibility checks, the ETag. Every error is Django's own problem+json.
2. When there is nothing new to say, the view does not wait: it takes the token's waiting slot
   and returns a *pending* response (:func:`long_poll_pending`: no body, the marker header
   ``X-Chan-Long-Poll``). Django then finishes the request: its thread ends and its database
   connection goes back.
3. This application keeps the pending response's headers (request id, CORS, ``Vary``,
   ``RateLimit-*`` …) and waits on the process's subscription (``games.live.subscription``:
   one Redis subscription per process) with no thread, next to thousands of others.
4. When the hand's seq passes ``after_seq`` it answers with the new view, rendered once per
   (hand, seq, seat) in this process and shared by every waiter of that seat (spectators share
   one); on the timeout, with the hand as it is then (304 when the client's ETag still
   matches). The body and headers are those the view itself would give. The renders run
   before the waiters wake (``HandFeed.prepare``), in worker threads while the event loop is
   idle; then each waiter only sends: thousands of answers leave in a burst.

   A *replayed* wait (the feed, a table, the lobby: answers that are one player's or cheap)
   is answered by Django itself once woken or timed out: the same request without ``wait``.
5. A seat's next poll on the same hand (its *re-arm*: the same request with a new
   ``after_seq``) skips step 1 when nothing Django checks has changed: it is answered from
   Django's pending answer to the last one, kept as a template (``games.live.rearm``), with one
   thread hop for the throttle's count, the hand's version and the waiting slot. When the
   hand moved on before the re-arm came, the same hop reads the new view, kept by the wake-up
   that rendered it, and it is sent at once, as Django would.

Under WSGI (Django's test client, ``runserver``) the scope flag is absent and the views wait in
their thread as before (``hand_store.hand_wait_for_seq``, ``games.live.waits``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode

from django.db import close_old_connections
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.authentication import credential_key
from accounts.models import ApiToken
from chan_api.request_body import body_drained
from core import metrics
from core.threads import in_thread
from games.api.serializers import HandEventPageSerializer
from games.hand_store import (
    long_poll_slot_park,
    long_poll_slot_take,
    long_poll_slots_due,
    long_poll_slots_free,
)
from games.live import rearm, streams
from games.live.credentials import credential_marked, credential_of, credential_refusal
from games.live.render import Rendered, hand_view_rendered, hand_views_rendered, render_json
from games.live.subscription import Subscription as HandFeed
from games.live.subscription import hand_feed
from games.selectors.feed import feed_page, feed_page_etag
from games.selectors.hands import hand_etag, hand_events_for_seat, hand_get

logger = logging.getLogger(__name__)

SCOPE_FLAG = "chan.long_poll"  # set by LongPollApp: the views may answer "pending"
POLL_FLAG = "chan.poll"  # set by LongPollApp on a plain conditional GET: a 304 may be a template
MARKER_HEADER = "X-Chan-Long-Poll"
_MARKER = MARKER_HEADER.lower().encode("ascii")
_REPLACED = {_MARKER, b"content-length", b"content-type", b"etag"}
_ANSWERS_KEPT = 1024

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Pending(NamedTuple):
    """What the view hands over to :class:`LongPollApp` (the marker header, as JSON)."""

    kind: str  # "hand" (the view, with an ETag), "events" (a page after after_seq), "feed" (a
    # player's page after after_seq, with an ETag), "replay" (Django answers once woken: a
    # table, the lobby) or "stream" (games.live.streams); "poll": not a wait but Django's 304
    # to a plain poll of a hand, a template for the next (poll_not_modified_marked)
    hand: int  # the hand's id ("hand", "events", a hand's stream); else 0
    seq: int  # the hand's seq when Django checked it
    after_seq: int
    seat: int | None  # whose view: None for a spectator's
    wait: int
    tags: list[str] | None = None  # the client's If-None-Match ("hand")
    limit: int = 100  # the page's size ("events")
    slot: str | None = None  # the waiting slot to free (hand_store.long_poll_slot_take)
    topic: str | None = None  # what to wait on when not the hand (games.live.announce)
    stream: str | None = None  # a stream's format: "sse" or "ndjson"
    user: int | None = None  # a feed's owner
    # [view name, transport, charset, template name or None], as django-prometheus labels the
    # pending answer: a seat's wait on a hand, authenticated by a personal token, whose next
    # re-arm may be answered without Django (games.live.rearm)
    rearm: list[str | None] | None = None
    # True: at its timeout the wait reads the hand rather than trust the subscription's seq: a
    # wait whose client's next re-arm may be judged with no read (games.live.rearm), so that
    # an announcement its announcer failed to send delays that client one wait, never two
    reads_at_timeout: bool = False
    # [user id, credential key, required scope]: who Django let in, judged again before
    # anything is delivered (games.live.credentials); None: nothing to judge (a replayed wait)
    credential: list[Any] | None = None

    @property
    def key(self) -> int | str:
        """The subscription's topic this waits on."""
        return self.topic if self.topic is not None else self.hand


# ------------------------------------------------------------------------------ the view's side


def long_poll_deferrable(request: Request) -> bool:
    """Whether the request came through :class:`LongPollApp`, which can wait without a thread."""
    scope = request.META.get("asgi.scope")  # chan_api.wsgi_threads keeps it in the environ
    return bool(scope and scope.get(SCOPE_FLAG))


def long_poll_pending(request: Request, pending: Pending) -> Response:
    """The pending response: take the token's waiting slot (429 beyond
    ``LONG_POLLS_PER_TOKEN``) and hand the wait over to :class:`LongPollApp`."""
    slot = long_poll_slot_take(token_id=credential_key(request.auth))
    response = Response(status=200)
    if pending.kind != "replay":  # (Django answers a replayed wait: it judges it again)
        pending = pending._replace(credential=credential_marked(request))
    if pending.kind == "hand" and pending.seat is not None and isinstance(request.auth, ApiToken):
        pending = pending._replace(rearm=_labels(request, response))
    response[MARKER_HEADER] = json.dumps(pending._replace(slot=slot)._asdict())
    response.chan_long_poll = True  # type: ignore[attr-defined]  # for the request's log line
    return response


def poll_not_modified_marked(
    request: Request, response: Response, *, hand: int, seat: int | None
) -> None:
    """Mark Django's 304 to a seat's plain poll of a hand (``GET /hands/{id}`` with
    ``If-None-Match``, no query) as the template of that client's next polls, which
    :class:`LongPollApp` then answers without Django while the ETag holds
    (``games.live.rearm``). Only for a request that came through it, from a personal token."""
    scope = request.META.get("asgi.scope")
    if not (scope and scope.get(POLL_FLAG)) or seat is None:
        return
    if not isinstance(request.auth, ApiToken):
        return
    pending = Pending("poll", hand, 0, 0, seat, 0, rearm=_labels(request, response))
    response[MARKER_HEADER] = json.dumps(pending._asdict())


def _labels(request: Request, response: Response) -> list[str | None]:
    """The view's name, the transport, the charset and the template's name, as
    django-prometheus labels ``response`` (``Pending.rearm``)."""
    match = request.resolver_match
    transport = "https" if request.is_secure() else "http"
    view_name = (match.view_name if match else None) or "<unnamed view>"
    # (a DRF Response has a template_name: None, which django-prometheus counts as "None")
    template = str(response.template_name) if hasattr(response, "template_name") else None
    return [view_name, transport, str(response.charset), template]


# ---------------------------------------------------------------------------------- answers


def _hand_answer(hand_id: int, seat: int | None) -> Rendered:
    """The hand's view for ``seat`` as it is now, with its ETag (as ``HandDetailApi`` renders
    them, and kept for its reads: games.live.render). Runs in a worker thread of the event
    loop's executor, which keeps its connection for ``CONN_MAX_AGE`` as Django's own threads
    do."""
    try:
        return hand_view_rendered(hand_id=hand_id, seat=seat)
    finally:
        close_old_connections()


def _hand_answers(hand_id: int, seq: int, seats: list[int]) -> dict[int | None, Rendered]:
    """:func:`_hand_answer` for several seats of one hand, woken at ``seq``: one read of the
    hand (none if this process committed that seq), one state."""
    try:
        return hand_views_rendered(hand_id=hand_id, seats=seats, seq=seq)
    finally:
        close_old_connections()


def _feed_answer(user_id: int, after: int, limit: int) -> tuple[str, bytes]:
    """The player's feed page after ``after`` and its ETag, as ``MeFeedApi`` renders them."""
    try:
        page = feed_page(user_id=user_id, after=after, limit=limit)
        return feed_page_etag(user_id, page, after, limit), render_json(page)
    finally:
        close_old_connections()


def _events_answer(hand_id: int, seat: int | None, after_seq: int, limit: int) -> bytes:
    try:
        hand = hand_get(hand_id=hand_id)
        page = hand_events_for_seat(hand=hand, seat=seat, after_seq=after_seq, limit=limit)
        return render_json(HandEventPageSerializer(page).data)
    finally:
        close_old_connections()


class _Answers:
    """Answers rendered after a wake-up, shared by every waiter that needs the same one (the
    first renders it in a worker thread; the others await the same future)."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[Any, ...], asyncio.Future[Any]] = OrderedDict()

    def future(self, key: tuple[Any, ...], render: Callable[[], Any]) -> asyncio.Future[Any]:
        """The answer for ``key``: rendered already, being rendered, or started now (again, if
        the last try failed)."""
        if not self._to_render(key):
            return self._kept[key]
        future = asyncio.ensure_future(in_thread(render))
        future.add_done_callback(_log_failed_render)
        self._kept[key] = future
        self._trim()
        return future

    def _to_render(self, key: tuple[Any, ...]) -> bool:
        """Whether ``key``'s answer is neither rendered nor being rendered (or its try failed)."""
        found = self._kept.get(key)
        return found is None or (found.done() and found.exception() is not None)

    def _trim(self) -> None:
        while len(self._kept) > _ANSWERS_KEPT:
            self._kept.popitem(last=False)

    def futures_together(
        self, keys: dict[tuple[Any, ...], Any], render_all: Callable[[list[Any]], dict[Any, Any]]
    ) -> list[asyncio.Future[Any]]:
        """The answers for ``keys`` (key → what ``render_all`` names it by: a seat), those not
        rendered nor being rendered started now in one job: ``render_all(names)`` returns each
        name's answer. If the job fails, each of its answers fails with its exception (logged
        once); the next waiter that needs one renders it again."""
        missing = {key: name for key, name in keys.items() if self._to_render(key)}
        if missing:
            loop = asyncio.get_running_loop()
            parts = {key: loop.create_future() for key in missing}
            names = list(missing.values())
            job = asyncio.ensure_future(in_thread(render_all, names))
            job.add_done_callback(_log_failed_render)
            job.add_done_callback(lambda done: _share(done, parts, missing))
            for key, part in parts.items():
                part.add_done_callback(_retrieved)
                self._kept[key] = part
        found = [self._kept[key] for key in keys]  # before the oldest go: one of them may
        self._trim()
        return found

    async def get(self, key: tuple[Any, ...], render: Callable[[], Any]) -> Any:
        future = self.future(key, render)
        if future.done():  # prepared before the wake-up: the common case
            return future.result()
        return await asyncio.shield(future)


def _share(
    job: asyncio.Future[Any],
    parts: dict[tuple[Any, ...], asyncio.Future[Any]],
    names: dict[tuple[Any, ...], Any],
) -> None:
    """Hand each answer of a finished job (:meth:`_Answers.futures_together`) to its future."""
    for key, part in parts.items():
        if part.done():
            continue
        if job.cancelled():
            part.cancel()
        elif job.exception() is not None:
            part.set_exception(job.exception())  # type: ignore[arg-type]
        else:
            part.set_result(job.result()[names[key]])


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark a shared failure as seen: the job that failed logged it already."""
    if not future.cancelled():
        future.exception()


def _log_failed_render(future: asyncio.Future[Any]) -> None:
    """A render that failed: logged here, once, whether or not a waiter reads it (the next
    waiter that needs it renders it again)."""
    if not future.cancelled() and future.exception() is not None:
        logger.warning("a long poll's answer could not be rendered", exc_info=future.exception())


class _Answer(NamedTuple):
    status: int
    body: bytes
    etag: str | None = None
    view: Rendered | None = None  # the hand's view it answers with (or whose ETag is the 304's)


def _job(p: Pending, seq: int) -> tuple[tuple[Any, ...], Callable[[], Any]]:
    """The key of ``p``'s answer at ``seq`` (the same for every waiter of the same seat and
    page) and how to render it."""
    if p.kind == "feed":
        key = ("feed", p.user, seq, p.after_seq, p.limit)
        return key, lambda: _feed_answer(p.user or 0, p.after_seq, p.limit)
    if p.kind == "events":
        key = ("events", p.hand, seq, p.seat, p.after_seq, p.limit)
        return key, lambda: _events_answer(p.hand, p.seat, p.after_seq, p.limit)
    return ("hand", p.hand, seq, p.seat), lambda: _hand_answer(p.hand, p.seat)


async def _answer(pending: Pending, seq: int | None, answers: _Answers) -> _Answer:
    """The answer at the hand's ``seq``, rendered once per process for every waiter of the same
    seat (and page); at an unknown seq (the feed may have missed an announcement), rendered
    for this waiter from the hand as it is now."""
    p = pending
    if p.kind == "hand" and seq is not None and p.tags is not None:
        unchanged = hand_etag(p.hand, seq)
        if rearm.etag_matches(p.tags, unchanged):
            return _Answer(304, b"", unchanged)  # a timeout: nothing to render
    key, render = _job(p, -1 if seq is None else seq)
    if seq is None:
        result = await in_thread(render)
    else:
        result = await answers.get(key, render)
    if p.kind == "events":
        return _Answer(200, result)
    view = result if isinstance(result, Rendered) else None
    etag, body = (result.etag, result.body) if view is not None else result
    if p.tags is not None and rearm.etag_matches(p.tags, etag):
        return _Answer(304, b"", etag, view)
    return _Answer(200, body, etag, view)


# --------------------------------------------------------------------------- the ASGI side


_TIMED_OUT = -2  # what a waiter's future holds when no seq woke it (a seq is >= 0, -1: gone)
_GONE = -3


def _settle(future: asyncio.Future[int], why: int) -> None:
    if not future.done():
        future.set_result(why)


class _WaitingGauge:
    """The process's count of waiting long polls, written to ``chan_long_polls_waiting`` at most
    every GAUGE_SECONDS rather than twice per poll (a multiprocess gauge's write takes a lock
    and the process's id: thousands of them in a row delayed the last answers of a wake-up)."""

    GAUGE_SECONDS = 0.1

    def __init__(self) -> None:
        self.count = 0
        self._due: asyncio.AbstractEventLoop | None = None  # the loop a write is due on

    def add(self, n: int) -> None:
        self.count += n
        loop = asyncio.get_running_loop()
        if self._due is not loop:  # (a write due on a loop closed since would never come)
            self._due = loop
            loop.call_later(self.GAUGE_SECONDS, self._write)

    def _write(self) -> None:
        self._due = None
        metrics.LONG_POLLS_WAITING.set(self.count)


_gauge = _WaitingGauge()


def _unreplaced(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The pending answer's headers but those the answer replaces."""
    return [(k, v) for k, v in headers if k.lower() not in _REPLACED]


async def _send_answer(send: Send, kept: list[tuple[bytes, bytes]], answer: _Answer) -> None:
    """Send ``answer`` with the pending answer's headers it keeps (:func:`_unreplaced`; a
    re-arm's never held the others)."""
    headers = [*kept]
    if answer.etag is not None:
        headers.append((b"ETag", answer.etag.encode("ascii")))
    if answer.status == 200:
        headers.append((b"Content-Type", b"application/json"))
    headers.append((b"Content-Length", str(len(answer.body)).encode("ascii")))
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})


def _marker(headers: list[tuple[bytes, bytes]]) -> Pending | None:
    for name, value in headers:
        if name.lower() == _MARKER:
            return Pending(**json.loads(value))
    return None


def _without_wait(scope: Scope) -> Scope:
    query = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"))]
    kept = urlencode([(k, v) for k, v in query if k != "wait"]).encode("latin-1")
    return {**scope, "query_string": kept}


async def _request_read(receive: Receive) -> None:
    """Read the request's (empty) body, as Django would, keeping none of it (what comes next
    is the client's disconnect, which the wait listens for)."""
    await body_drained(receive)


def _replayed_body(receive: Receive) -> Receive:
    """``receive`` for a second pass through Django: the (empty) body again, then the client's
    own messages (its disconnect)."""
    first = True

    async def replay() -> Message:
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": b"", "more_body": False}
        return await receive()

    return replay


class LongPollApp:
    """The ASGI application: Django's, with long polls that wait here (module docstring)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app
        self.answers = _Answers()
        self.rearms = rearm.Rearms()
        self._freeing: asyncio.Task[None] | None = None
        self._waiting: set[asyncio.Future[int]] = set()
        self._stopping = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            self._answer_early_on_exit_signals()
        if not (
            scope["type"] == "http"
            and scope["method"] == "GET"
            and (b"wait=" in scope.get("query_string", b"") or streams.asks_for_stream(scope))
        ):
            if rearm.enabled() and rearm.plain_conditional_get(scope):
                return await self._poll(scope, receive, send)
            return await self.app(scope, receive, send)
        feed = hand_feed()
        await feed.start()  # subscribed before Django reads the seq: no announcement is missed
        epoch = feed.epoch  # (and if one is missed from now on, the epoch moves)
        if rearm.enabled():
            found = await self.rearms.answer(scope, feed.seq_known)
            if found is not None:
                await _request_read(receive)  # (as Django does: what comes next is a disconnect)
                if found.now is not None:  # the hand moved on: its new view, at once
                    now = _Answer(200, found.now.body, found.now.etag)
                    return await _send_answer(send, found.headers, now)
                pending = Pending(
                    "hand",
                    found.hand,
                    found.seq,
                    found.after_seq,
                    found.seat,
                    found.wait,
                    tags=found.tags,
                    slot=found.slot,
                    reads_at_timeout=True,
                    credential=found.credential,
                )
                start = {"type": "http.response.start", "status": 200, "headers": found.headers}
                return await self._wait_and_answer(
                    scope, pending, start, receive, send, feed, epoch
                )
        held: list[tuple[Pending, Message]] = []

        async def hold_pending(message: Message) -> None:
            if message["type"] == "http.response.start":
                pending = _marker(message["headers"])
                if pending is not None:
                    held.append((pending, message))
                    return
            if not held:
                await send(message)

        await self.app({**scope, SCOPE_FLAG: True}, receive, hold_pending)
        if held:
            pending, start = held[0]
            if pending.rearm is not None and pending.seat is not None and rearm.enabled():
                pending = pending._replace(reads_at_timeout=True)
                self.rearms.remember(
                    scope,
                    pending.rearm,
                    pending.hand,
                    pending.seat,
                    start["headers"],
                    waits_at=pending.seq,  # (Django's view found that it waits there)
                    credential=pending.credential,
                )
            await self._wait_and_answer(scope, pending, start, receive, send, feed, epoch)

    async def _poll(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A plain conditional GET (``If-None-Match``, no query): a seat's poll of a hand whose
        last 304 Django marked as a template is answered here while its ETag holds (one
        thread hop: the throttle's count and the hand's version, ``games.live.rearm``);
        every other one, and a template's first, by Django."""
        found = await self.rearms.answer(scope)
        if found is not None:
            await _request_read(receive)  # (as Django does: what comes next is a disconnect)
            unchanged = _Answer(304, b"", hand_etag(found.hand, found.seq))
            return await _send_answer(send, found.headers, unchanged)

        async def template_kept(message: Message) -> None:
            if message["type"] == "http.response.start":
                sent: list[tuple[bytes, bytes]] = message["headers"]
                marked = _marker(sent)
                if marked is not None:
                    headers = [(k, v) for k, v in sent if k.lower() != _MARKER]
                    message = {**message, "headers": headers}
                    if marked.rearm is not None and marked.seat is not None:
                        self.rearms.remember(scope, marked.rearm, marked.hand, marked.seat, headers)
            await send(message)

        await self.app({**scope, POLL_FLAG: True}, receive, template_kept)

    async def _prepare(self, hand_id: int, seq: int, pendings: list[Pending]) -> None:
        """Render the answers an announcement's waiters will need, before they wake
        (``HandFeed.prepare``): one per seat and page, in worker threads, at the same time."""
        started = time.perf_counter()
        # The seats' views of the hand: one job (one read of the hand, one state) for every
        # seat waiting here; a spectator's view (which a table may stop allowing) on its own.
        seats_of = {
            ("hand", p.hand, seq, p.seat): p.seat
            for p in pendings
            if p.kind == "hand" and p.seat is not None
        }
        jobs = dict(
            _job(p, seq)
            for p in pendings
            if p.kind in ("events", "feed") or (p.kind == "hand" and p.seat is None)
        )
        jobs.update(streams.job(p, seq, p.after_seq) for p in pendings if p.kind == "stream")
        if not jobs and not seats_of:
            return  # (replayed waits: Django answers each)
        futures = [self.answers.future(key, render) for key, render in jobs.items()]
        if seats_of:
            render_all = functools.partial(_hand_answers, hand_id, seq)
            futures += self.answers.futures_together(seats_of, render_all)
        await asyncio.wait(futures)
        logger.info(
            "hand %s at seq %s: waking %s long polls (%s answers rendered in %.0f ms)",
            hand_id,
            seq,
            len(pendings),
            len(jobs) + len(seats_of),
            (time.perf_counter() - started) * 1000,
        )

    async def _wait_and_answer(
        self,
        scope: Scope,
        pending: Pending,
        start: Message,
        receive: Receive,
        send: Send,
        feed: HandFeed,
        epoch: int,
    ) -> None:
        # The answer's headers but those it replaces, made now rather than after the wake-up,
        # when thousands of answers queue behind one another.
        kept = _unreplaced(start["headers"])
        if feed.prepare is None:
            feed.prepare = self._prepare
        # One future says why the wait ends: the feed's seq, the timeout or the client gone.
        credential = credential_of(scope, pending.credential)
        if pending.kind == "stream":
            try:
                await streams.stream(pending, start, receive, send, feed, self, credential)
            finally:
                if pending.slot is not None:
                    self._free_slot(pending.slot)
            return
        woken = feed.wait_future(pending.key, pending.after_seq, pending)
        self._waiting.add(woken)
        _gauge.add(1)
        gone: asyncio.Future[Message] | None = None
        timer: asyncio.TimerHandle | None = None
        try:
            if self._stopping:
                _settle(woken, _TIMED_OUT)
            gone = asyncio.ensure_future(receive())  # http.disconnect when the client goes
            gone.add_done_callback(lambda _: _settle(woken, _GONE))
            timer = asyncio.get_running_loop().call_later(pending.wait, _settle, woken, _TIMED_OUT)
            seq: int | None = await woken
            if seq == _GONE:
                return  # nobody to answer
            if pending.kind == "replay":  # Django answers: the request again, without wait
                return await self.app(_without_wait(scope), _replayed_body(receive), send)
            if seq == _TIMED_OUT:  # the seq is the same unless the feed missed something
                # (or unless an announcement was never sent: read it where a template may judge
                # the next wait with no read; not while the server stops, when every waiter
                # times out at once and polls again elsewhere)
                trusted = not pending.reads_at_timeout or self._stopping
                seq = feed.seq_if_known(pending.key, pending.seq, epoch) if trusted else None
            if await credential_refusal(credential) is not None:
                # Revoked, expired, banned or lacking the scope since Django let it in: Django
                # answers (its 401 or 403), as it would to this request now.
                return await self.app(_without_wait(scope), _replayed_body(receive), send)
            try:
                if seq == -1:
                    raise LookupError("the hand is gone")
                answer = await _answer(pending, seq, self.answers)
            except Exception:
                # Whatever went wrong (a hand gone, a database away) Django says it, as it
                # would to a poll without wait: its problem+json, status and headers.
                logger.warning(
                    "long poll on hand %s: answered by Django", pending.hand, exc_info=True
                )
                return await self.app(_without_wait(scope), _replayed_body(receive), send)
            await _send_answer(send, kept, answer)
            if answer.view is not None and pending.seat is not None and pending.kind == "hand":
                self.rearms.shown(scope, pending.hand, pending.seat, answer.view)
        finally:
            _gauge.add(-1)
            if timer is not None:
                timer.cancel()
            self._waiting.discard(woken)
            feed.forget(pending.key, woken)
            if gone is not None:
                gone.cancel()
            if pending.slot is not None:
                self._free_slot(pending.slot)

    def _answer_early_on_exit_signals(self) -> None:
        """When the server is told to stop (SIGTERM from gunicorn on a deploy, SIGINT), answer
        every waiting poll at once, as on its timeout, and every poll that arrives meanwhile:
        the server would otherwise wait for them up to their 30 s, its whole graceful timeout,
        and could be killed before they are answered. The server's own handler runs next.
        Only in the main thread, where the server's handlers are (a test's server in another
        thread has none)."""
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            server_handler = signal.getsignal(signum)
            if not callable(server_handler) or getattr(server_handler, "chan_long_polls", False):
                continue  # the default or ignored (nobody stops here), or ours already

            def on_signal(signum: int, frame: Any, server_handler: Any = server_handler) -> None:
                try:
                    loop.call_soon_threadsafe(self._answer_all)
                except RuntimeError:
                    pass  # the loop is closed: nobody waits any more
                finally:
                    server_handler(signum, frame)

            on_signal.chan_long_polls = True  # type: ignore[attr-defined]
            signal.signal(signum, on_signal)

    def _answer_all(self) -> None:
        self._stopping = True
        for woken in list(self._waiting):
            _settle(woken, _TIMED_OUT)

    def _free_slot(self, slot: str) -> None:
        """Park an ended poll's waiting slot for the same token's next poll
        (``games.hand_store.SLOT_PARK_SECONDS``); those no poll took are freed in batches, in a
        worker thread, after the answers are sent."""
        long_poll_slot_park(slot)
        if self._freeing is None or self._freeing.done():
            self._freeing = asyncio.ensure_future(self._free_slots())

    async def _free_slots(self) -> None:
        while True:
            slots, wait = long_poll_slots_due()
            if slots:
                try:
                    await in_thread(long_poll_slots_free, slots)
                except Exception:
                    logger.warning("could not free %s long-poll slots", len(slots), exc_info=True)
            if wait is None:
                return
            # (at least 20 ms: after the other answers of the same wake-up, no thread then)
            await asyncio.sleep(max(wait, 0.02))
