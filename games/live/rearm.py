"""A long poll's re-arm answered without Django.

A player waiting on a hand (chan-bot, every client that long-polls ``GET /hands/{id}?wait=N``)
sends the same request again as soon as each answer comes, with the new ``after_seq`` and
``If-None-Match``. Through Django each such re-arm cost about 1.2 ms of CPU and a thread hop
(middleware, DRF, the token, the throttle) to reach the same verdict: "nothing new, wait"
(docs/decisions/lean-move.md).

Here the first re-arm goes through Django as any request, and its pending answer is kept as a
*template*: its headers (CORS, ``Vary``, ``Content-Language``, the security and cache headers
…), the hand, the caller's seat, the token memory's entry it was authenticated from. The next
request with the same path, the same query's names and exactly the same headers (but
``If-None-Match`` and ``X-Request-ID``) from the same address is answered from the template
when everything Django would check still holds, and by Django otherwise. The same path but
for the hand's id: the client's waits on its next hands are answered from the template its
first wait made, once a read (below) has found the caller's seat in that hand (a hand it does
not play, or a settled one, is Django's to answer):

* the token: the token memory (accounts.token_cache) still holds the entry the template was
  made under, or one read since for the same token of the same player with the same scopes
  (a revoke or a ban forgets it at once in this process, within ``CHAN_TOKEN_CACHE_SECONDS``
  in the others, as for Django's own reads); the player is not banned, the token has not
  expired, and its use need not be recorded yet (``token_mark_used``: Django does that);
* one thread hop does the rest: the throttle counts the request in this process's budget, as
  Django's would (``chan_api.throttles.user_request_counted``: exchanged with the cache when
  due; over the limit, Django answers the 429); the hand's version is read (the query Django's
  view runs) and the token's waiting slot taken, when Django would wait: the caller still
  has the same seat, its ETag still matches, the hand is not settled and its seq is not past
  ``after_seq``;
* when the hand has moved on since (its seq past ``after_seq`` or the ETag stale: the other
  players moved between the last answer and this re-arm), Django would answer the new view at
  once: the same hop reads it where Django's view reads it (``games.live.render``, the views
  kept per seq and seat, rendered once by the wake-up) and it is answered here, when the
  request's ``Accept`` names no parameters (``; indent=…`` is rendered by DRF);
* otherwise (another seat, a settled hand, Django's own 304) the count is given back and
  Django answers.

What Django adds per request is made here the same way: the request id (the client's, if
tame), the ``RateLimit-*`` headers, the request's log line and django-prometheus's counters.
tests/games/test_games_long_poll_rearm.py holds the two answers equal header for header and
the two countings equal series for series. ``LONG_POLL_REARM=0`` turns it off.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple
from urllib.parse import parse_qsl

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from accounts.models import ApiToken
from accounts.scopes import token_scopes
from accounts.services import TOKEN_TOUCH_INTERVAL
from accounts.token_cache import token_cache_entry
from chan_api.deprecations import deprecation_for
from chan_api.middleware import (
    REQUEST_ID_HEADER,
    rate_limit_headers,
    request_id_for,
    request_line_outside,
)
from chan_api.request_metrics import request_counted, requested_with_xhr
from chan_api.throttles import LocalCount, user_request_counted
from core import metrics
from core.threads import in_thread
from games.hand_store import (
    hand_committed_playing,
    long_poll_slot_take,
    long_poll_slot_take_parked,
)
from games.live.render import Rendered, hand_view_rendered
from games.selectors.hands import HandVersion, hand_etag, hand_etag_for_user

_KEPT = 20_000  # templates, least recently used forgotten first
_MAX_SEQ = 2**31 - 1
_MAX_WAIT = 30
_NUMBER_RE = re.compile(r"^(?:0|[1-9][0-9]{0,9})$")
_ENTITY_TAG_RE = re.compile(r'(?:W/)?("[^"]*")')
# What varies from one re-arm to the next and is read here, not part of a template's key.
_UNKEYED = frozenset({b"if-none-match", b"x-request-id"})
# The pending answer's headers made per request (or replaced by the answer): not kept.
_PER_REQUEST = frozenset(
    {
        b"x-chan-long-poll",
        b"content-length",
        b"content-type",
        b"etag",
        REQUEST_ID_HEADER.lower().encode("ascii"),
        b"ratelimit-limit",
        b"ratelimit-remaining",
        b"ratelimit-reset",
        b"ratelimit-policy",
    }
)

Headers = list[tuple[bytes, bytes]]


def if_none_match_tags(header: str) -> list[str] | None:
    """The opaque tags of an ``If-None-Match`` value (``W/`` dropped: RFC 9110 weak comparison,
    since a compressing proxy weakens our ETags), ``["*"]`` for ``*``; None when it holds none."""
    header = header.strip()
    if header == "*":
        return ["*"]
    return _ENTITY_TAG_RE.findall(header) or None


def etag_matches(tags: list[str], etag: str) -> bool:
    return "*" in tags or etag in tags


def enabled() -> bool:
    return bool(getattr(settings, "LONG_POLL_REARM", True))


class _Query(NamedTuple):
    wait: int
    after_seq: int | None
    tags: list[str] | None
    request_id: str


class _Template(NamedTuple):
    headers: Headers  # Django's pending answer's, less those made per request
    hand: int
    seat: int | None  # None: the client's wait on another hand than the one it was made on,
    # whose seat a read finds (:func:`_checked`) before anything is answered from it
    entry: tuple[float, Any, Any]  # the token memory's (until, user, token) it was made under
    view_name: str
    transport: str
    charset: str
    template_name: str | None
    plain_accept: bool  # no parameters in Accept: Django answers the view's kept bytes
    # The seq at which a read last found that this seat's wait waits (the caller's seat, the
    # hand not settled): Django's pending answer, a read here, or a view of the hand still
    # being played sent to this client. None: never (a poll's template).
    waits_at: int | None = None
    judged: list[Any] | None = None  # Pending.credential: judged again before delivering

    @property
    def user_id(self) -> int:
        return int(self.entry[1].pk)

    @property
    def credential(self) -> str:
        return f"t{self.entry[2].pk}"  # accounts.authentication.credential_key


def _key(scope: dict[str, Any]) -> tuple[Any, ...] | None:
    """What a re-arm must share with the request a template was made from; None when the
    request is not one this module answers (not a GET, a query with other names)."""
    if scope.get("type") != "http" or scope.get("method") != "GET":
        return None
    names = tuple(sorted(name for name, _ in _query_pairs(scope)))
    if names not in (("after_seq", "wait"), ("wait",), ()):
        return None
    client = scope.get("client")
    headers = tuple(sorted((k, v) for k, v in scope.get("headers", ()) if k not in _UNKEYED))
    return (
        _path_shape(scope.get("path", ""))[0],
        scope.get("root_path", ""),
        scope.get("scheme"),
        client[0] if client else None,
        names,
        headers,
    )


# A hand's path (``hands/<id>``, an id as Django's converter reads it, no leading zero): the
# same client's waits on the next hands share the template its first made (their seat read).
_HAND_PATH_RE = re.compile(r"^(.*/hands/)([1-9][0-9]{0,17})$")


@lru_cache(maxsize=4096)  # (a re-arm reads it twice: for its key, then for its hand)
def _path_shape(path: str) -> tuple[str, int | None]:
    """A hand's path without its id, and the id; another path as it is, and None."""
    found = _HAND_PATH_RE.match(path)
    return (found.group(1), int(found.group(2))) if found else (path, None)


def _query_pairs(scope: dict[str, Any]) -> list[tuple[str, str]]:
    return parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


def _number(text: str, highest: int) -> int | None:
    if not _NUMBER_RE.match(text):
        return None
    value = int(text)
    return value if value <= highest else None


def plain_conditional_get(scope: dict[str, Any]) -> bool:
    """Whether ``scope`` is a GET with no query and one ``If-None-Match``: a plain poll, which
    a template made from Django's 304 may answer (a wait is a re-arm)."""
    if scope.get("type") != "http" or scope.get("method") != "GET" or scope.get("query_string"):
        return False
    return sum(1 for k, _ in scope.get("headers", ()) if k == b"if-none-match") == 1


def _query(scope: dict[str, Any]) -> _Query | None:
    """The re-arm's wait, after_seq, If-None-Match and request id (a plain poll's wait is 0:
    it has no query but its If-None-Match); None where Django must judge (a value out of
    range or not plainly written: its 400 says why)."""
    params = dict(_query_pairs(scope))
    if params:
        wait = _number(params["wait"], _MAX_WAIT)
        after_seq = _number(params["after_seq"], _MAX_SEQ) if "after_seq" in params else None
        if not wait or ("after_seq" in params and after_seq is None):
            return None
    else:
        wait, after_seq = 0, None
    tags_sent = [v for k, v in scope.get("headers", ()) if k == b"if-none-match"]
    ids_sent = [v for k, v in scope.get("headers", ()) if k == b"x-request-id"]
    if len(tags_sent) > 1 or len(ids_sent) > 1:
        return None
    tags = if_none_match_tags(tags_sent[0].decode("latin-1")) if tags_sent else None
    if not wait and tags is None:
        return None  # a plain poll that no ETag matches: Django's view
    request_id = request_id_for(ids_sent[0].decode("latin-1") if ids_sent else "")
    return _Query(wait, after_seq, tags, request_id)


def bearer_hash(scope: dict[str, Any]) -> str | None:
    sent = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
    if len(sent) != 1:
        return None
    parts = sent[0].decode("latin-1").split()
    if len(parts) != 2 or parts[0].lower() != "bearer":
        return None
    return ApiToken.hash_key(parts[1])


def entry_live(entry: tuple[float, Any, Any]) -> bool:
    """Whether Django, reading this token memory entry now, would let the request through
    without writing anything (accounts.authentication)."""
    until, user, token = entry
    if time.monotonic() >= until or user.banned_at is not None:
        return False
    now = timezone.now()
    if token.expires_at is not None and token.expires_at <= now:
        return False
    used = token.last_used_at
    return used is not None and now - used < TOKEN_TOUCH_INTERVAL


def same_verdict(entry: tuple[float, Any, Any], was: tuple[float, Any, Any]) -> bool:
    """Whether a token memory entry made since ``was`` (the token read again when the last one
    expired) is one Django would judge the request by as it did: the same token of the same
    player with the same scopes (its expiry, its use and the ban are checked on every request
    by :func:`entry_live`)."""
    _, user, token = entry
    _, was_user, was_token = was
    return (
        token.pk == was_token.pk
        and user.pk == was_user.pk
        and token_scopes(token) == token_scopes(was_token)
    )


def entry_current(
    was: tuple[float, Any, Any], key_hash: str | None
) -> tuple[float, Any, Any] | None:
    """The token memory's entry for ``key_hash`` when Django would judge a request by it as it
    judged the one a template was made under ``was`` (the same entry, or one read since with
    the same verdict) and would write nothing for it; None: Django must judge."""
    entry = token_cache_entry(key_hash or "")
    if entry is None or not entry_live(entry):
        return None
    return entry if entry is was or same_verdict(entry, was) else None


def _checked(
    template: _Template, query: _Query
) -> tuple[HandVersion, int, str | None, LocalCount, Rendered | None] | None:
    """In a worker thread: the request counted by the throttle and the hand's version read;
    then, when Django's view would wait (``HandDetailApi.get``), the token's waiting slot
    taken, and when it would answer the new view at once, that view (its kept render). A
    plain poll (wait 0) is answered here only when Django's view would answer 304. None,
    with nothing counted or taken, when Django must answer (or fail) instead."""
    after_seq, tags = query.after_seq, query.tags
    counted = user_request_counted(template.user_id)
    if counted is None:
        return None
    try:
        version = hand_etag_for_user(hand_id=template.hand, user=template.entry[1])
        after = version.seq if after_seq is None else after_seq
        if not query.wait:  # a plain poll: Django's 304 while the seat's ETag holds
            same_seat = template.seat is not None and version.seat == template.seat
            if same_seat and tags and etag_matches(tags, version.etag):
                return version, after, None, counted, None
            counted.give_back()  # Django's view: the new one, or its error
            return None
        if version.seat is None or version.final:
            counted.give_back()  # Django counts it (and answers a spectator)
            return None
        if template.seat is not None and version.seat != template.seat:
            counted.give_back()
            return None
        stale = tags is not None and not etag_matches(tags, version.etag)
        if not stale and version.seq <= after:
            slot = long_poll_slot_take(token_id=template.credential)
            return version, after, slot, counted, None
        if (tags is not None and not stale) or not template.plain_accept:
            counted.give_back()  # Django's 304, or a view DRF renders with parameters
            return None
        rendered = hand_view_rendered(
            hand_id=template.hand,
            seat=version.seat,
            seq=version.seq,
            seats_version=version.seats_version,
        )
        return version, after, None, counted, rendered
    except Exception:  # a hand gone, a database away, too many waits: Django says it
        counted.give_back()
        return None
    finally:
        close_old_connections()


def _checked_unread(
    template: _Template, query: _Query, seq_known: Callable[[int], int | None] | None
) -> tuple[HandVersion, int, str | None, LocalCount, None] | None:
    """:func:`_checked` with no read and no round trip, in the event loop, for the common
    re-arm: the client asks to wait after the seq the subscription last heard of the hand
    (its ETag that seq's), and at that very seq a read found that this seat's wait waits
    (``_Template.waits_at``; a seat's hand changes only with its seq) or this process
    committed the hand still being played (the mover's own re-arm). The throttle counts it
    here unless its exchange with the cache is due, and the token's waiting slot is one its
    last poll parked. None: :func:`_checked` judges it, in a thread."""
    if not query.wait or seq_known is None or template.seat is None:
        return None
    seq = seq_known(template.hand)
    if seq is None or query.after_seq != seq:  # (without after_seq Django reads the seq)
        return None
    if seq != template.waits_at and not hand_committed_playing(template.hand, seq):
        return None
    etag = hand_etag(template.hand, seq)
    if query.tags is not None and not etag_matches(query.tags, etag):
        return None
    counted = user_request_counted(template.user_id, exchange=False)
    if counted is None:
        return None
    slot = long_poll_slot_take_parked(token_id=template.credential)
    if slot is None:
        counted.give_back()
        return None
    return HandVersion(etag, seq, False, template.seat), seq, slot, counted, None


class Rearm(NamedTuple):
    """A re-arm answered here: what to wait for and the answer's headers so far."""

    hand: int
    seq: int
    after_seq: int
    seat: int
    wait: int
    tags: list[str] | None
    slot: str | None
    headers: Headers
    now: Rendered | None  # the answer to send at once (the hand moved on); None: wait
    read: bool = True  # False: judged by what the subscription heard, with no read (as every
    # wait a template answers, it reads the hand at its timeout: Pending.reads_at_timeout)
    credential: list[Any] | None = None  # Pending.credential


class Rearms:
    """The templates of one process's re-arms (one per client and hand, as it polls)."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[Any, ...], _Template] = OrderedDict()

    def remember(
        self,
        scope: dict[str, Any],
        rearm: list[str | None],
        hand: int,
        seat: int,
        headers: Headers,
        waits_at: int | None = None,
        credential: list[Any] | None = None,
    ) -> None:
        """Keep Django's pending answer to ``scope`` (its ``headers``; a wait on ``hand`` for
        ``seat``, at the hand's seq ``waits_at``) or its 304 to a plain poll as a template.
        ``rearm`` is what the view marked it with (``Pending.rearm``: the view's name, the
        transport, the charset and the template's name, as django-prometheus reads them)."""
        key = _key(scope)
        key_hash = bearer_hash(scope)
        if key is None or key_hash is None:
            return
        view_name, transport, charset, template_name = rearm
        if view_name is None or transport is None or charset is None:
            return
        entry = token_cache_entry(key_hash)
        if entry is None or deprecation_for(view_name) is not None:
            return
        kept = [(k, v) for k, v in headers if k.lower() not in _PER_REQUEST]
        accepts = [v for k, v in scope.get("headers", ()) if k == b"accept"]
        plain_accept = all(b";" not in v for v in accepts)
        self._kept[key] = _Template(
            kept,
            hand,
            seat,
            entry,
            view_name,
            transport,
            charset,
            template_name,
            plain_accept,
            waits_at,
            credential,
        )
        self._kept.move_to_end(key)
        while len(self._kept) > _KEPT:
            self._kept.popitem(last=False)

    def shown(self, scope: dict[str, Any], hand: int, seat: int, rendered: Rendered) -> None:
        """A view of ``hand`` was sent to ``scope``'s client for ``seat`` (a wake-up's answer,
        or its timeout's read): if the hand was still being played at its seq, that client's
        next wait there waits."""
        key = _key(scope) if rendered.playing else None
        if key is not None:
            self._waits_at(key, hand, seat, rendered.seq)

    def _waits_at(self, key: tuple[Any, ...], hand: int, seat: int, seq: int) -> None:
        """Record on the template kept now under ``key`` (still the same client's wait on
        ``hand`` for ``seat``: it may have been replaced or dropped meanwhile) that
        its wait at ``seq`` waits."""
        template = self._kept.get(key)
        if template is not None and (template.hand, template.seat) == (hand, seat):
            self._kept[key] = template._replace(waits_at=seq)

    async def answer(
        self, scope: dict[str, Any], seq_known: Callable[[int], int | None] | None = None
    ) -> Rearm | None:
        """The re-arm of ``scope`` answered from its template, or None: Django answers it.
        ``seq_known``: what the process's subscription heard of a hand's seq
        (``Subscription.seq_known``), for a re-arm judged with no read at all."""
        started = time.perf_counter()
        key = _key(scope)
        if key is None:
            return None
        template = self._kept.get(key)
        if template is None:
            return None
        found = await self._answer(scope, key, template, started, seq_known)
        counter = metrics.LONG_POLL_REARMS if key[4] else metrics.HAND_POLLS  # (the names)
        by = "django" if found is None else "event_loop" if found.read else "event_loop_no_read"
        counter.labels(answered_by=by).inc()
        return found

    async def _answer(
        self,
        scope: dict[str, Any],
        key: tuple[Any, ...],
        template: _Template,
        started: float,
        seq_known: Callable[[int], int | None] | None,
    ) -> Rearm | None:
        query = _query(scope)
        if query is None:
            return None
        entry = entry_current(template.entry, bearer_hash(scope))
        if entry is None:
            self._kept.pop(key, None)  # Django makes the next one
            return None
        if entry is not template.entry:  # the token read again, as it was
            template = template._replace(entry=entry)
            self._kept[key] = template
        hand = _path_shape(scope["path"])[1]
        if hand is not None and hand != template.hand:  # the same client's wait on another hand
            template = template._replace(hand=hand, seat=None, waits_at=None)
        checked = _checked_unread(template, query, seq_known)
        read = checked is None
        if checked is None:
            checked = await in_thread(_checked, template, query)
        if checked is None:
            return None
        version, after_seq, slot, counted, now = checked
        seat = version.seat if template.seat is None else template.seat
        assert seat is not None  # (:func:`_checked` answers no other seat's wait)
        if template.seat is None:  # the read found the caller's seat in that hand
            template = template._replace(seat=seat)
            self._kept[key] = template
            self._kept.move_to_end(key)
        if query.wait and read and (now is None or now.playing):  # a read found it waits there
            waits_at = version.seq if now is None else now.seq
            self._waits_at(key, template.hand, seat, waits_at)
        headers = [
            *template.headers,
            (REQUEST_ID_HEADER.encode("ascii"), query.request_id.encode()),
        ]
        if counted.quota is not None:
            headers += [
                (k.encode("ascii"), v.encode("ascii")) for k, v in rate_limit_headers(counted.quota)
            ]
        seconds = time.perf_counter() - started
        self._counted(scope, template, query.request_id, seconds, now, polled=not query.wait)
        return Rearm(
            template.hand,
            version.seq,
            after_seq,
            seat,
            query.wait,
            query.tags,
            slot,
            headers,
            now,
            read,
            template.judged,
        )

    @staticmethod
    def _counted(
        scope: dict[str, Any],
        template: _Template,
        request_id: str,
        seconds: float,
        now: Rendered | None,
        *,
        polled: bool,
    ) -> None:
        """The request's log line and metrics, as Django's middleware makes them: for the
        pending answer (``now`` None), a plain poll's 304 (``polled``), or for the view's kept
        bytes, an ``HttpResponse`` (no template name, the default charset)."""
        status = 304 if polled else 200
        request_line_outside(
            request_id,
            method="GET",
            path=scope["path"],
            status=status,
            seconds=seconds,
            user_id=template.user_id,
            hand_id=template.hand,
            long_poll=now is None and not polled,
            seq=None if now is None else now.seq,
        )
        request_counted(
            method="GET",
            transport=template.transport,
            view_name=template.view_name,
            status=status,
            charset=template.charset if now is None else settings.DEFAULT_CHARSET,
            body_bytes=0 if now is None else len(now.body),
            seconds=seconds,
            template_name=template.template_name if now is None else None,
            ajax=requested_with_xhr(scope.get("headers", ())),
        )
