"""A move answered without Django's middleware and DRF, when Django has just answered the same
client's move the same way.

``POST /api/v1/hands/{id}/moves`` is most of what a web worker does for Django: every move a
player makes. Through Django it pays the request's floor before and after the move's service:
about twenty middleware, the URL resolver, DRF's authentication, throttle, permissions and
content negotiation, and its renderer (docs/decisions/lean-move.md). What
they decide for one client's moves does not change from one move to the next: the same token,
the same headers, the same verdicts.

So, as :mod:`games.live.rearm` does for long polls: the first move of a client (a bearer
token, a set of headers) goes through Django, whose view marks its ``201`` (the view's name,
transport, charset, template name and the language the request was answered in, as
django-prometheus and ``LocaleMiddleware`` left them); the answer's headers, less those made per
request, are kept as a *template* under the request's headers (less ``Content-Length``,
``Idempotency-Key`` and ``X-Request-ID``) and its path's shape (any hand). The next move with
exactly those headers from the same address is answered here when everything Django would
check still holds:

* the token: authenticated in the thread hop below as DRF authenticates it (the token memory,
  accounts.token_cache, else the database; a ban; its use recorded once a minute), and the
  verdict the template's: the same personal token of the same player with the same scopes,
  hence the same permissions (a revoke or a ban is Django's 401 at once in the process that made
  it, within ``CHAN_TOKEN_CACHE_SECONDS`` in the others, as for Django's own reads);
* the body: at most ``DATA_UPLOAD_MAX_MEMORY_SIZE``, read no further than that and one byte
  (a larger one is Django's 413, chan_api/request_body.py), and parsed by the API's own parser
  (``StrictJSONParser``), under ``Content-Type: application/json`` exactly;
* one thread hop does the rest: the caller authenticated, the request counted in this
  process's throttle budget (:func:`chan_api.throttles.user_request_counted`; over the limit,
  Django answers the 429), then the move's service, :func:`games.services.hands.move_submit`, with the arguments the view
  gives it, in the language and the time zone Django's middleware would have activated, the
  request id bound for its log lines.

Anything else is Django's: another path or method, a query string, a ``Cookie``, an ``Accept``
with parameters (DRF indents), a body the parser refuses — and every refusal of the move itself
(its problem+json is Django's to write): the service's transaction has rolled back, the count
is given back, and the same request goes through Django with its body replayed. A failure that
is not a refusal (a bug, the database away) is answered here as Django answers it (its 500, its
503 with ``Retry-After``) and the move is not made again: it may have been committed.

What Django adds per request is made here the same way: the request id (the client's, if tame),
the ``RateLimit-*`` headers, ``Idempotent-Replayed`` on a replay, the request's log line and
django-prometheus's counters. tests/games/test_games_move_direct.py holds the two answers equal
header for header and body for body (on twin hands), and the two countings equal series for
series. ``MOVE_DIRECT=0`` turns it off.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from datetime import UTC
from types import SimpleNamespace
from typing import Any, NamedTuple

import structlog
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone, translation

from accounts.authentication import BearerTokenAuthentication
from accounts.models import ApiToken
from accounts.scopes import token_scopes
from accounts.token_cache import token_cache_entry
from chan_api.deprecations import deprecation_for
from chan_api.logs import request_id_var
from chan_api.middleware import (
    REQUEST_ID_HEADER,
    rate_limit_headers,
    request_id_for,
    request_line_outside,
)
from chan_api.parsers import StrictJSONParser
from chan_api.problems import problem_exception_handler, server_error
from chan_api.request_body import body_limit, body_read
from chan_api.request_metrics import request_counted, requested_with_xhr
from chan_api.throttles import LocalCount, user_request_counted
from core import metrics
from core.errors import DomainError
from core.threads import in_thread
from games.live.announce import HeldAnnouncements, announcements_held
from games.live.rearm import bearer_hash
from games.live.render import render_json
from games.live.subscription import hand_feed
from games.selectors.hands import hand_view_for_user
from games.services.hands import move_submit

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

SCOPE_FLAG = "chan.move_direct"  # set here: the view may mark its answer as a template
MARKER_HEADER = "X-Chan-Move-Template"
_MARKER = MARKER_HEADER.lower().encode("ascii")
_KEPT = 20_000  # templates, least recently used forgotten first
# The move's route (games/api/urls.py: ``hands/<id:hand_id>/moves``, an id of 1–18 digits).
_PATH_RE = re.compile(r"^/api/v1/hands/([0-9]{1,18})/moves$")
# What varies from one move to the next and is read here, not part of a template's key.
_UNKEYED = frozenset({b"content-length", b"idempotency-key", b"x-request-id"})
# Django's answer's headers made per request: not kept.
_PER_REQUEST = frozenset(
    {
        _MARKER,
        b"content-length",
        REQUEST_ID_HEADER.lower().encode("ascii"),
        b"idempotent-replayed",
        b"ratelimit-limit",
        b"ratelimit-remaining",
        b"ratelimit-reset",
        b"ratelimit-policy",
    }
)


def move_request_hash(hand_id: int, body: Any) -> str:
    """What an ``Idempotency-Key``'s record holds of the request: the hand and the body."""
    canonical = json.dumps(
        {"hand": hand_id, "body": body}, sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def enabled() -> bool:
    return bool(getattr(settings, "MOVE_DIRECT", True))


def move_template_mark(request: Any, response: Any, replayed: bool) -> None:
    """For the view: mark its answer as a template (the marker header: JSON of the view's
    name, the transport, the charset and the template name as django-prometheus reads them,
    and the active language), unless it may not be one — the request did not come through
    :class:`MoveDirectApp`, the answer is not a fresh ``201``, the caller did not use a
    personal token, the view is deprecated (its 410 comes on a date)."""
    scope = request.META.get("asgi.scope")  # chan_api.wsgi_threads keeps it in the environ
    if not (scope and scope.get(SCOPE_FLAG)) or response.status_code != 201 or replayed:
        return
    match = request.resolver_match
    view_name = (match.view_name if match else None) or "<unnamed view>"
    if not isinstance(request.auth, ApiToken) or deprecation_for(view_name) is not None:
        return
    response[MARKER_HEADER] = json.dumps(
        [
            view_name,
            "https" if request.is_secure() else "http",
            str(response.charset),
            # (a DRF Response has a template_name: None, which django-prometheus counts as "None")
            str(response.template_name),
            translation.get_language(),
        ]
    )


class _Template(NamedTuple):
    headers: Headers  # Django's answer's, less those made per request
    user_id: int  # who Django authenticated, with which personal token and scopes
    token_id: int
    scopes: frozenset[str] | None
    view_name: str
    transport: str
    charset: str
    template_name: str
    language: str | None


class _Answer(NamedTuple):
    status: int
    headers: Headers
    body: bytes
    after: Callable[[], None]  # once it is written: its log line, its counting, its announcements


def _key(scope: Scope) -> tuple[Any, ...] | None:
    """What a move must share with the one a template was made from; None when the request is
    not one this module answers."""
    if scope.get("type") != "http" or scope.get("method") != "POST":
        return None
    if not _PATH_RE.match(scope.get("path", "")) or scope.get("query_string"):
        return None
    headers = tuple(sorted((k, v) for k, v in scope.get("headers", ()) if k not in _UNKEYED))
    names = [k for k, _ in headers]
    if b"cookie" in names or (b"content-type", b"application/json") not in headers:
        return None
    if any(k == b"accept" and b";" in v for k, v in headers):
        return None  # DRF renders with the Accept's parameters (an indent)
    client = scope.get("client")
    return (scope.get("root_path", ""), scope.get("scheme"), client[0] if client else None, headers)


def _hand_id(scope: Scope) -> int:
    found = _PATH_RE.match(scope["path"])
    assert found is not None  # (:func:`_key` matched it)
    return int(found.group(1))


def _one_header(scope: Scope, name: bytes) -> str | None | bool:
    """The header's value; None when absent; False when sent more than once."""
    sent = [v for k, v in scope.get("headers", ()) if k == name]
    if len(sent) > 1:
        return False
    return sent[0].decode("latin-1") if sent else None


async def _body_read(receive: Receive, limit: int) -> tuple[bytes | None, Receive]:
    """The request's body (None past ``limit``: Django refuses it) and a ``receive`` that gives
    it again, then the client's own messages, to a pass through Django. Reading stops at
    ``limit + 1`` bytes, as Django's does (chan_api/request_body.py): a larger body is handed
    to Django as those bytes, and Django answers its 413 (the unread rest is the server's to
    drop)."""
    read = await body_read(receive, limit + 1)
    body, gone = read.body, read.gone
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return gone if gone is not None else await receive()

    return (body if read.ended and len(body) <= limit else None), replay


def _parsed(body: bytes) -> Any:
    """The body as DRF's ``request.data`` holds it (the API's parser), or a ``ValueError``."""
    if not body:
        raise ValueError("empty")  # DRF's data is then {}: Django's answer
    try:
        return StrictJSONParser().parse(io.BytesIO(body), "application/json", {})
    except Exception as exc:  # its ParseError: Django's 400
        raise ValueError("unparsed") from exc


class _Move(NamedTuple):
    """What the view gives the move's service, and the request's id and path."""

    hand_id: int
    body: Any  # as DRF's request.data
    idempotency_key: str | None
    request_id: str
    path: str


class _Submitted(NamedTuple):
    counted: LocalCount
    result: Any  # the service's StoredResponse; None when it failed
    failure: Any = None  # then the problem Django answers for its exception (a rendered response)
    exception: str | None = None  # and the exception's type, when Django's middleware sees it


def _failure(exc: Exception, path: str) -> Any:
    """Django's answer to a move that failed otherwise than by a refusal: its 503 for a database
    that did not answer (DRF's exception handler), else its 500 (``handler500``), logged as
    Django logs it. The move may have been committed before the failure (its commit, its
    hooks), so it is not made again through Django."""
    response = problem_exception_handler(exc, {})
    if response is None:  # (through Django's middleware: django-prometheus counts it)
        response = server_error(None)  # type: ignore[arg-type]  # (it reads the exception)
        response.chan_exception = type(exc).__name__  # type: ignore[attr-defined]
    else:
        response.renderer_context = {}
        response.render()
    logging.getLogger("django.request").error(
        "%s: %s",
        response.reason_phrase,
        path,
        exc_info=exc,
        extra={"status_code": response.status_code},
    )
    return response


def _authenticated(template: _Template, authorization: str) -> Any:
    """The caller authenticated as DRF authenticates it (``BearerTokenAuthentication``: the
    token memory, else the database; a ban; the token's use recorded once a minute), when the
    verdict is the template's — the same personal token of the same player with the same
    scopes, so the same permissions; else None (nothing counted: Django judges)."""
    try:
        found = BearerTokenAuthentication().authenticate(
            SimpleNamespace(META={"HTTP_AUTHORIZATION": authorization})  # type: ignore[arg-type]
        )
    except Exception:  # revoked, expired, banned (Django's 401), the database away (its 503)
        return None
    if found is None:
        return None
    user, token = found
    if not isinstance(token, ApiToken) or (token.pk, user.pk) != (
        template.token_id,
        template.user_id,
    ):
        return None
    return user if user.token_scopes == template.scopes else None


def _submitted(
    template: _Template, authorization: str, move: _Move, held: HeldAnnouncements
) -> _Submitted | None:
    """In a worker thread: the request counted by the throttle, then the move made as the view
    makes it, what its commit announces kept in ``held`` (released once it is answered). None,
    with nothing counted, when Django must answer (or refuse) instead."""
    close_old_connections()  # Django's request_started
    try:
        user = _authenticated(template, authorization)
        counted = user_request_counted(template.user_id) if user is not None else None
        if counted is None:
            return None
        with announcements_held(held):
            return _made(template, user, counted, move)
    finally:
        close_old_connections()  # Django's request_finished


def _made(template: _Template, user: Any, counted: LocalCount, move: _Move) -> _Submitted | None:
    """The move made as the view makes it (:func:`_submitted`)."""
    hand_id, body, request_id = move.hand_id, move.body, move.request_id
    move_json = dict(body) if isinstance(body, dict) else body
    expected_seq = move_json.pop("expected_seq", None) if isinstance(body, dict) else None
    reset = request_id_var.set(request_id)
    try:
        with (
            structlog.contextvars.bound_contextvars(request_id=request_id),
            translation.override(template.language),
            timezone.override(UTC),
        ):
            result = move_submit(
                hand_id=hand_id,
                user=user,
                move_json=move_json,
                expected_seq=expected_seq,
                idempotency_key=move.idempotency_key,
                request_hash=move_request_hash(hand_id, body),
                render=lambda hand, state: hand_view_for_user(hand=hand, user=user, state=state),
                encode=render_json,  # once, for the answer and the key's record
            )
            return _Submitted(counted, result)
    except DomainError:  # refused, its transaction rolled back: Django refuses it and answers
        counted.give_back()
        return None
    except Exception as exc:
        with structlog.contextvars.bound_contextvars(request_id=request_id):
            failure = _failure(exc, move.path)
            return _Submitted(counted, None, failure, getattr(failure, "chan_exception", None))
    finally:
        request_id_var.reset(reset)


# Answers written whose log line, counting and announcements are still to come (on the event
# loop, right after the write): a client may read its answer before they are done.
_unfinished = 0


def answers_unfinished() -> int:
    """How many answers this process wrote whose log line, counting and announcements are still
    to come (tests that read them wait for none)."""
    return _unfinished


class MoveDirectApp:
    """The ASGI application around Django's (``chan_api.asgi``): moves answered here from their
    client's template, every other request (and every move it cannot answer) passed on."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app
        self._kept: OrderedDict[tuple[Any, ...], _Template] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _key(scope) if scope["type"] == "http" and enabled() else None
        if key is None:
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        hand_feed().start_soon()  # (this process hears the others' moves: hand_move_heard)
        template = self._kept.get(key)
        if template is not None:
            body, receive = await _body_read(receive, body_limit())
            held = HeldAnnouncements()  # what the move's commit announces: once it is answered
            answer = None
            try:
                answer = await self._answer(scope, key, template, body, started, held)
            finally:
                if answer is None:  # Django answers it, or this failed, or it was cancelled
                    held.release()
            metrics.MOVES_DIRECT.labels(answered_by="direct" if answer else "django").inc()
            if answer is not None:
                global _unfinished
                _unfinished += 1
                try:
                    await send(
                        {
                            "type": "http.response.start",
                            "status": answer.status,
                            "headers": answer.headers,
                        }
                    )
                    await send({"type": "http.response.body", "body": answer.body})
                finally:
                    try:
                        answer.after()
                    finally:
                        _unfinished -= 1
                return
        marked: list[tuple[list[Any], Headers]] = []

        async def unmark(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message["headers"]
                marker = [v for k, v in headers if k.lower() == _MARKER]
                if marker:
                    headers = [(k, v) for k, v in headers if k.lower() != _MARKER]
                    marked.append((json.loads(marker[0]), headers))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app({**scope, SCOPE_FLAG: True}, receive, unmark)
        if marked:
            self._remember(scope, key, *marked[0])

    def _remember(
        self, scope: Scope, key: tuple[Any, ...], marker: list[Any], headers: Headers
    ) -> None:
        entry = token_cache_entry(bearer_hash(scope) or "")
        if entry is None or any(k.lower() == b"set-cookie" for k, _ in headers):
            return
        _, user, token = entry
        view_name, transport, charset, template_name, language = marker
        kept = [(k, v) for k, v in headers if k.lower() not in _PER_REQUEST]
        self._kept[key] = _Template(
            kept,
            int(user.pk),
            int(token.pk),
            token_scopes(token),
            view_name,
            transport,
            charset,
            template_name,
            language,
        )
        self._kept.move_to_end(key)
        while len(self._kept) > _KEPT:
            self._kept.popitem(last=False)

    async def _answer(
        self,
        scope: Scope,
        key: tuple[Any, ...],
        template: _Template,
        body: bytes | None,
        started: float,
        held: HeldAnnouncements,
    ) -> _Answer | None:
        authorization = _one_header(scope, b"authorization")
        idempotency_key = _one_header(scope, b"idempotency-key")
        sent_id = _one_header(scope, b"x-request-id")
        if not authorization or body is None or idempotency_key is False or sent_id is False:
            return None
        try:
            data = _parsed(body)
        except ValueError:
            return None
        request_id = request_id_for(sent_id or "")
        hand_id = _hand_id(scope)
        submitted = await in_thread(
            _submitted,
            template,
            authorization,
            _Move(hand_id, data, idempotency_key, request_id, scope["path"]),
            held,
        )
        if submitted is None:
            return None
        result, counted = submitted.result, submitted.counted
        if result is not None:
            status, content = result.status, result.encoded or render_json(result.body)
            headers = [*template.headers]
            if result.replayed:
                headers.append((b"Idempotent-Replayed", b"true"))
            seq = result.body.get("seq") if isinstance(result.body, dict) else None
        else:
            failure = submitted.failure
            status, content, seq = failure.status_code, failure.content, None
            headers = [(k, v) for k, v in template.headers if k.lower() != b"content-type"]
            headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in failure.items()]
        headers.append((REQUEST_ID_HEADER.encode("ascii"), request_id.encode("ascii")))
        if counted.quota is not None:
            headers += [
                (k.encode("ascii"), v.encode("ascii")) for k, v in rate_limit_headers(counted.quota)
            ]
        headers.append((b"Content-Length", str(len(content)).encode("ascii")))
        sent_length = _one_header(scope, b"content-length")
        request_bytes = (
            int(sent_length) if isinstance(sent_length, str) and sent_length.isdigit() else 0
        )
        template_name = template.template_name
        if result is None and not hasattr(submitted.failure, "template_name"):
            template_name = None  # (Django's handler500 answers a JsonResponse)
        seconds = time.perf_counter() - started  # (as Django's middleware: before it is written)

        def after() -> None:
            """Once the answer is written (the mover has it): its log line and its counting
            (0.13 ms a move), and what its commit announces to the others."""
            try:
                self._counted(
                    scope,
                    template,
                    request_id,
                    status,
                    hand_id,
                    seq,
                    request_bytes,
                    content,
                    seconds,
                    template_name,
                    submitted.exception,
                )
            finally:
                held.release()

        return _Answer(status, headers, content, after)

    @staticmethod
    def _counted(
        scope: Scope,
        template: _Template,
        request_id: str,
        status: int,
        hand_id: int,
        seq: Any,
        request_bytes: int,
        content: bytes,
        seconds: float,
        template_name: str | None,
        exception: str | None,
    ) -> None:
        """The request's log line and metrics, as Django's middleware makes them."""
        request_line_outside(
            request_id,
            method="POST",
            path=scope["path"],
            status=status,
            seconds=seconds,
            user_id=template.user_id,
            hand_id=hand_id,
            seq=seq if isinstance(seq, int) else None,
        )
        request_counted(
            method="POST",
            transport=template.transport,
            view_name=template.view_name,
            status=status,
            charset=template.charset,
            body_bytes=len(content),
            request_bytes=request_bytes,
            seconds=seconds,
            template_name=template_name,
            exception=exception,
            ajax=requested_with_xhr(scope.get("headers", ())),
        )
