# Written by clients/python/unasync.py from _async_client.py: edit that file, then run
# `make py-client` (a test fails when this one is stale).
"""The Chắn API for one player: every operation of the server's schema, a bearer token,
problem+json errors (:class:`ApiError`), retries (:mod:`chan_client.retry`), iterators over pages,
feeds and streams that resume where they stopped.

This file is the source of both clients: :class:`ChanClient` here (``await`` each call) and
``ChanClient`` in ``_sync_client.py``, which ``clients/python/unasync.py`` writes from this one
(``make py-client``; a test fails when it is stale). Edit this file, never the other.

Every call is safe to send twice: moves carry an ``Idempotency-Key`` (a repeat is answered, not
applied again), reads are reads, and a repeated ``join``/``ready``/``leave``/``register`` is
refused with a 409 the caller can read (``already_seated``, ``hand_in_progress``, ``not_seated``,
``username_taken``), never applied twice.
"""

from __future__ import annotations

import random
import time
import secrets
import uuid
from collections.abc import Iterator, Callable, Mapping
from typing import Any, cast

import httpx

from chan_client.errors import ApiError, RetryLater
from chan_client.retry import RETRIED_STATUSES, RetryPolicy, Stats, parse_retry_after
from chan_client.streams import SseDecoder, StreamEvent, ndjson_event
from chan_client.types import (
    FeedPage,
    HandEventPage,
    HandView,
    Me,
    MoveResult,
    Page,
    ReadyResult,
    Table,
)

STREAM_TYPES = {"sse": "text/event-stream", "ndjson": "application/x-ndjson"}


def _hand_finished(event: StreamEvent) -> bool:
    """A hand's stream has nothing more to say after its settlement (or a void)."""
    kind = event.data.get("type") if isinstance(event.data, dict) else event.event
    return kind in ("settled", "voided")


class ChanClient:
    """The API for one player. ``token`` is set by :meth:`login` or :meth:`register`."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        language: str | None = None,
    ) -> None:
        headers = {"Accept": "application/json", "User-Agent": "chan-client/0.2"}
        if language:
            headers["Accept-Language"] = language
        self.http = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )
        self.token = token
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.stats = Stats()
        # The seed sent with the last ready at each table (the fair deal: to check the hand's
        # export against, docs/audit.md).
        self.client_seeds: dict[int, str] = {}
        self._sleep = sleep
        self._rng = rng or random.Random()

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> ChanClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------ transport

    def _headers(self, headers: Mapping[str, str] | None) -> dict[str, str]:
        sent = dict(headers or {})
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        return sent

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        ok: tuple[int, ...] = (200, 201, 204),
    ) -> httpx.Response:
        """Send with retries; return an answer whose status is in ``ok`` (or a 304), else raise
        :class:`ApiError` (a transport error is re-raised once the attempts are spent). A 429 or
        503 asking for a wait beyond ``RetryPolicy.max_delay`` raises :class:`RetryLater` at once."""
        sent = self._headers(headers)
        query = {k: v for k, v in (params or {}).items() if v is not None}
        attempt = 0
        while True:
            attempt += 1
            self.stats.requests += 1
            try:
                response = self.http.request(
                    method,
                    path,
                    json=json,
                    params=query,
                    headers=sent,
                    timeout=timeout or self.timeout,
                )
            except httpx.TransportError:
                self.stats.statuses[0] += 1
                if attempt >= self.retry.attempts:
                    raise
                self._wait(attempt, None)
                continue
            self.stats.statuses[response.status_code] += 1
            if response.status_code in ok or response.status_code == 304:
                return response
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            hopeless = retry_after is not None and retry_after > self.retry.max_delay
            if response.status_code in (429, 503) and hopeless:
                raise RetryLater(response, retry_after or 0.0)
            if response.status_code in RETRIED_STATUSES and attempt < self.retry.attempts:
                self._wait(attempt, retry_after)
                continue
            raise ApiError(response)

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.request(method, path, **kwargs)
        return None if response.status_code == 204 or not response.content else response.json()

    def _wait(self, attempt: int, retry_after: float | None) -> None:
        delay = self.retry.delay(attempt, retry_after, self._rng)
        self.stats.retries += 1
        self.stats.waited += delay
        self._sleep(delay)

    def paginate(
        self, path: str, *, params: Mapping[str, Any] | None = None, limit: int | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every item of a cursor-paged list (``{"results", "next"}``), newest first, page by
        page until ``next`` is null."""
        query = dict(params or {})
        if limit is not None:
            query["limit"] = limit
        while True:
            page = self._json("GET", path, params=query)
            for item in page["results"]:
                yield item
            if not page.get("next"):
                return
            query["cursor"] = page["next"]

    def stream(
        self,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        format: str = "sse",
        last_event_id: str | None = None,
        reconnects: int | None = None,
        stop: Callable[[StreamEvent], bool] | None = None,
    ) -> Iterator[StreamEvent]:
        """Read a push stream (``format`` ``"sse"`` or ``"ndjson"``) and yield its events.

        A connection that drops, or that the server closes (it closes a stream after a while
        to free its slot), is opened again (after the server's ``retry:`` or the policy's
        delay) with ``Last-Event-ID`` set to the last event seen, so nothing is skipped and
        nothing is repeated. It ends after an event for which ``stop`` is true, or when the
        server answers 204. ``reconnects`` caps the failed openings in a row (None: the retry
        policy's ``attempts``)."""
        accept = STREAM_TYPES[format]
        limit = self.retry.attempts if reconnects is None else reconnects
        failures = 0
        resume = last_event_id
        while True:
            headers = {"Accept": accept}
            if resume is not None:
                headers["Last-Event-ID"] = resume
            decoder = SseDecoder(last_event_id=resume)
            try:
                with self.http.stream(
                    "GET",
                    path,
                    params={k: v for k, v in (params or {}).items() if v is not None},
                    headers=self._headers(headers),
                    timeout=httpx.Timeout(self.timeout, read=None),
                ) as response:
                    self.stats.requests += 1
                    self.stats.statuses[response.status_code] += 1
                    if response.status_code == 204:
                        return
                    if response.status_code != 200:
                        response.read()
                        if response.status_code not in RETRIED_STATUSES:
                            raise ApiError(response)
                        raise httpx.RemoteProtocolError(f"status {response.status_code}")
                    for line in response.iter_lines():
                        event = decoder.feed(line) if format == "sse" else ndjson_event(line)
                        if event is None:
                            continue
                        failures = 0
                        if event.id is not None:
                            resume = event.id
                        yield event
                        if stop is not None and stop(event):
                            return
                # closed by the server: open it again from the last event
                self._sleep(decoder.retry_ms / 1000 if decoder.retry_ms else self.retry.base_delay)
            except (httpx.TransportError, httpx.RemoteProtocolError):
                failures += 1
                if failures > limit:
                    raise
                if decoder.retry_ms is not None:
                    self._sleep(decoder.retry_ms / 1000)
                else:
                    self._wait(failures, None)

    # ------------------------------------------------------------------------------ accounts

    def root(self) -> dict[str, Any]:
        return cast(dict[str, Any], self._json("GET", "/api/v1/"))

    def register(self, username: str, password: str) -> str:
        body = self._json(
            "POST", "/api/v1/auth/register", json={"username": username, "password": password}
        )
        self.token = body["token"]
        return cast(str, self.token)

    def login(self, username: str, password: str) -> str:
        body = self._json(
            "POST", "/api/v1/auth/token", json={"username": username, "password": password}
        )
        self.token = body["token"]
        return cast(str, self.token)

    def login_or_register(self, username: str, password: str) -> str:
        """Register; a player already registered logs in. Registering first means a new
        player's first contact is no failed login: the server locks an address out after a
        few failed logins (10 by default), which a crowd of new bots behind one address would
        reach. When the address may sign up no more accounts today (429 ``signup_limit``) an
        existing player still logs in, and an unknown one gets the ``signup_limit`` error."""
        try:
            return self.register(username, password)
        except ApiError as e:
            if e.code not in ("username_taken", "signup_limit"):
                raise
            refused = e
        try:
            return self.login(username, password)
        except ApiError as e:
            if refused.code == "signup_limit" and e.code == "invalid_credentials":
                raise refused from None
            raise

    def logout(self) -> None:
        """Revoke the token this client holds; it is forgotten here too."""
        self.request("POST", "/api/v1/auth/logout", json={})
        self.token = None

    def check(self) -> dict[str, Any]:
        return cast(dict[str, Any], self._json("GET", "/api/v1/auth/check"))

    def tokens(self) -> list[dict[str, Any]]:
        """My tokens (never their secrets), with their scopes."""
        return cast(list[dict[str, Any]], self._json("GET", "/api/v1/me/tokens"))

    def create_token(
        self, scopes: list[str], *, name: str = "", expires_in: int | None = None
    ) -> dict[str, Any]:
        """A new token with ``scopes`` (at most this client's); its secret is in the answer
        once (``token``), never again."""
        body: dict[str, Any] = {"scopes": scopes, "name": name}
        if expires_in is not None:
            body["expires_in"] = expires_in
        return cast(dict[str, Any], self._json("POST", "/api/v1/me/tokens", json=body))

    def revoke_token(self, token_id: int) -> None:
        self.request("DELETE", f"/api/v1/me/tokens/{token_id}")

    def legacy_tokens(self) -> list[dict[str, Any]]:
        """``GET /auth/tokens``: deprecated (Sunset 2027-06-01), use :meth:`tokens`."""
        return cast(list[dict[str, Any]], self._json("GET", "/api/v1/auth/tokens"))

    def legacy_revoke_token(self, token_id: int) -> None:
        """``DELETE /auth/tokens/{id}``: deprecated (Sunset 2027-06-01), use :meth:`revoke_token`."""
        self.request("DELETE", f"/api/v1/auth/tokens/{token_id}")

    def me(self) -> Me:
        return cast(Me, self._json("GET", "/api/v1/me"))

    def claim_bonus(self) -> dict[str, Any]:
        return cast(dict[str, Any], self._json("POST", "/api/v1/me/bonus", json={}))

    def my_hands(self, *, cursor: str | None = None, limit: int | None = None) -> Page:
        """One page of my finished hands; :meth:`paginate` walks them all."""
        params = {"cursor": cursor, "limit": limit}
        return cast(Page, self._json("GET", "/api/v1/me/hands", params=params))

    def my_ledger(
        self, *, cursor: str | None = None, limit: int | None = None, proofs: bool = False
    ) -> Page:
        """One page of my Quan statement, newest first; ``proofs``: with the transparency log's
        signed head and each line's inclusion proof under it."""
        params = {"cursor": cursor, "limit": limit, "proofs": "true" if proofs else None}
        return cast(Page, self._json("GET", "/api/v1/me/ledger", params=params))

    def feed(
        self, *, after: int = 0, wait: int | None = None, limit: int | None = None
    ) -> FeedPage:
        """One page of my feed after ``after`` (``next_after`` is the next cursor); ``wait``
        (≤ 30 s) long-polls while there is nothing new."""
        params = {"after": after, "wait": wait or None, "limit": limit}
        return cast(
            FeedPage,
            self._json("GET", "/api/v1/me/feed", params=params, timeout=self.timeout + (wait or 0)),
        )

    def feed_entries(self, *, after: int = 0, wait: int = 25) -> Iterator[dict[str, Any]]:
        """Every entry of my feed after ``after``, forever: long polls one after the other, the
        cursor kept, so a reconnect (or a retried request) neither skips nor repeats one. Break
        out of the loop to stop."""
        cursor = after
        while True:
            page = self.feed(after=cursor, wait=wait)
            for entry in page["entries"]:
                yield entry
            cursor = page["next_after"]

    def feed_stream(self, *, after: int = 0, format: str = "sse") -> Iterator[StreamEvent]:
        """My feed pushed as it happens (SSE or NDJSON), resumed after a drop."""
        for event in self.stream(
            "/api/v1/me/feed", format=format, last_event_id=str(after) if after else None
        ):
            yield event

    def limits(self) -> dict[str, Any]:
        """The limits I set myself, those pending, my losses per period, a cool-off or
        self-exclusion in force, and why I may not sit now (``play_blocked``)."""
        return cast(dict[str, Any], self._json("GET", "/api/v1/me/limits"))

    def set_limits(self, **limits: int | None) -> dict[str, Any]:
        """Change any of ``loss_limit_day``/``_week``/``_month``, ``max_stake``,
        ``reminder_minutes`` (None removes one). Tightening applies at once, loosening after 24 h."""
        return cast(dict[str, Any], self._json("PUT", "/api/v1/me/limits", json=limits))

    def cool_off(self, days: int) -> dict[str, Any]:
        """Stop myself playing for 1 to 42 days, starting now; it cannot be shortened."""
        return cast(dict[str, Any], self._json("POST", "/api/v1/me/cool-off", json={"days": days}))

    def self_exclude(self, days: int | None) -> dict[str, Any]:
        """Exclude myself for 183 days or more (None: for good); it cannot be shortened."""
        return cast(
            dict[str, Any],
            self._json("POST", "/api/v1/me/self-exclusion", json={"days": days}),
        )

    def ledger_head(self) -> dict[str, Any]:
        return cast(dict[str, Any], self._json("GET", "/api/v1/ledger/head"))

    def log_head(self) -> dict[str, Any]:
        """The transparency log's latest signed tree head (``size``, ``root``, ``signature`` …)."""
        return cast(dict[str, Any], self._json("GET", "/api/v1/log/head"))

    def log_key(self) -> dict[str, Any]:
        """The public key the log's heads are signed with."""
        return cast(dict[str, Any], self._json("GET", "/api/v1/log/key"))

    def log_consistency(self, first: int, second: int) -> dict[str, Any]:
        """The proof that the log of ``first`` leaves is a prefix of the log of ``second``."""
        params = {"first": first, "second": second}
        return cast(
            dict[str, Any], self._json("GET", "/api/v1/log/proof/consistency", params=params)
        )

    def log_inclusion(self, leaf: str, size: int) -> dict[str, Any]:
        """The proof that leaf hash ``leaf`` (hex) is in the log of ``size`` leaves."""
        params = {"leaf": leaf, "size": size}
        return cast(dict[str, Any], self._json("GET", "/api/v1/log/proof/inclusion", params=params))

    def player(self, username: str) -> dict[str, Any]:
        return cast(dict[str, Any], self._json("GET", f"/api/v1/players/{username}"))

    def player_hands(
        self, username: str, *, cursor: str | None = None, limit: int | None = None
    ) -> Page:
        params = {"cursor": cursor, "limit": limit}
        return cast(Page, self._json("GET", f"/api/v1/players/{username}/hands", params=params))

    def leaderboard(
        self,
        board: str,
        *,
        family: str | None = None,
        room: str | None = None,
        season: str | None = None,
        around_me: bool = False,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """A leaderboard (``rating``, ``quan`` or ``xp``): top ``limit``, or the page around me;
        ``season`` a week ``2026-W49`` or a month ``2026-12``; pass ``next`` as ``cursor``."""
        params = {
            "family": family,
            "room": room,
            "season": season,
            "around": "me" if around_me else None,
            "cursor": cursor,
            "limit": limit,
        }
        return cast(
            dict[str, Any], self._json("GET", f"/api/v1/leaderboards/{board}", params=params)
        )

    # ------------------------------------------------------------------------------ tables

    def rooms(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self._json("GET", "/api/v1/rooms"))

    def quick_join(self, room: str, *, stake: int | None = None) -> Table:
        body = {} if stake is None else {"stake": stake}
        return cast(Table, self._json("POST", f"/api/v1/rooms/{room}/quick-join", json=body))

    def tables(
        self,
        *,
        room: str | None = None,
        stake: int | None = None,
        status: str | None = None,
        open_seats: bool | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> Page:
        """One page of the lobby."""
        params = {
            "room": room,
            "stake": stake,
            "status": status,
            "open_seats": None if open_seats is None else str(open_seats).lower(),
            "cursor": cursor,
            "limit": limit,
        }
        return cast(Page, self._json("GET", "/api/v1/tables", params=params))

    def create_table(self, *, name: str, stake: int, max_seats: int = 4, **extra: Any) -> Table:
        body = {"name": name, "stake": stake, "max_seats": max_seats, **extra}
        return cast(Table, self._json("POST", "/api/v1/tables", json=body))

    def table(self, table_id: int) -> Table:
        return cast(Table, self._json("GET", f"/api/v1/tables/{table_id}"))

    def table_hand(self, table_id: int) -> int | None:
        """The id of the table's hand in play (the server answers 302 to it), or None."""
        response = self.request("GET", f"/api/v1/tables/{table_id}/hand", ok=(302,))
        location = response.headers.get("Location", "")
        tail = location.rstrip("/").rsplit("/", 1)[-1]
        return int(tail) if tail.isdigit() else None

    def table_hands(self, table_id: int) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self._json("GET", f"/api/v1/tables/{table_id}/hands"))

    def join(self, table_id: int, *, seat: int | None = None, code: str | None = None) -> Table:
        """Sit at the table (a private one with its invite ``code``); already sitting there (a
        retried join) is not an error."""
        body: dict[str, Any] = {} if seat is None else {"seat": seat}
        if code is not None:
            body["code"] = code
        try:
            return cast(Table, self._json("POST", f"/api/v1/tables/{table_id}/join", json=body))
        except ApiError as e:
            if e.code != "already_seated":
                raise
        return self.table(table_id)

    def ready(
        self, table_id: int, *, ready: bool = True, client_seed: str | None = None
    ) -> ReadyResult:
        """Say ready (or not) for the next hand. Ready, it sends this seat's own seed for the
        fair deal (docs/audit.md): ``client_seed``, or by default a fresh 32-byte random hex
        one (``secrets.token_hex``); pass ``""`` to give none. The seed sent is kept in
        ``client_seeds[table_id]``, to check the hand's export against."""
        body: dict[str, Any] = {"ready": ready}
        if ready:
            body["client_seed"] = secrets.token_hex(32) if client_seed is None else client_seed
        result = cast(
            ReadyResult,
            self._json("POST", f"/api/v1/tables/{table_id}/ready", json=body),
        )
        if ready:
            self.client_seeds[table_id] = body["client_seed"]
        return result

    def leave(self, table_id: int) -> None:
        self.request("POST", f"/api/v1/tables/{table_id}/leave", json={})

    # ------------------------------------------------------------------ tables among friends

    def challenges(
        self, *, box: str | None = None, status: str | None = None
    ) -> list[dict[str, Any]]:
        """My challenges, newest first: ``box`` ``sent`` or ``received``; ``status``."""
        params = {k: v for k, v in (("box", box), ("status", status)) if v is not None}
        return cast(list[dict[str, Any]], self._json("GET", "/api/v1/challenges", params=params))

    def challenge(
        self, username: str, *, stake: int, room: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        """Challenge ``username`` to a private table at ``stake`` (``max_seats``, ``mode``)."""
        body: dict[str, Any] = {"username": username, "stake": stake, **extra}
        if room is not None:
            body["room"] = room
        return cast(dict[str, Any], self._json("POST", "/api/v1/challenges", json=body))

    def challenge_detail(self, challenge_id: int) -> dict[str, Any]:
        return cast(dict[str, Any], self._json("GET", f"/api/v1/challenges/{challenge_id}"))

    def accept_challenge(self, challenge_id: int) -> dict[str, Any]:
        """Accept: a private table opens with both of us seated (its id in ``table_id``)."""
        return cast(
            dict[str, Any],
            self._json("POST", f"/api/v1/challenges/{challenge_id}/accept"),
        )

    def decline_challenge(self, challenge_id: int) -> dict[str, Any]:
        return cast(
            dict[str, Any],
            self._json("POST", f"/api/v1/challenges/{challenge_id}/decline"),
        )

    def cancel_challenge(self, challenge_id: int) -> dict[str, Any]:
        """Withdraw a challenge I sent, before it is answered (status ``cancelled``)."""
        return cast(
            dict[str, Any],
            self._json("POST", f"/api/v1/challenges/{challenge_id}/cancel"),
        )

    def blocks(self) -> list[dict[str, Any]]:
        """The players I block."""
        return cast(list[dict[str, Any]], self._json("GET", "/api/v1/me/blocks"))

    def block(self, username: str) -> dict[str, Any]:
        """Block ``username``: no quick-join seats us together, no challenge from them, no
        seat at my private tables."""
        return cast(dict[str, Any], self._json("PUT", f"/api/v1/me/blocks/{username}"))

    def unblock(self, username: str) -> None:
        self.request("DELETE", f"/api/v1/me/blocks/{username}")

    # ------------------------------------------------------------------------------ arenas

    def tournaments(self, *, status: str | None = None) -> list[dict[str, Any]]:
        """The arenas, latest start first; ``status`` scheduled, running, finished, cancelled."""
        params = {} if status is None else {"status": status}
        return cast(list[dict[str, Any]], self._json("GET", "/api/v1/tournaments", params=params))

    def create_tournament(self, **terms: Any) -> dict[str, Any]:
        """Schedule an arena (staff only): ``name``, ``stake``, ``starts_at``, ``ends_at`` (ISO
        8601), ``entry_fee``, ``payout`` (percent by rank), ``room``, ``table_size`` …"""
        return cast(dict[str, Any], self._json("POST", "/api/v1/tournaments", json=terms))

    def tournament(self, tournament_id: int) -> dict[str, Any]:
        return cast(dict[str, Any], self._json("GET", f"/api/v1/tournaments/{tournament_id}"))

    def join_tournament(self, tournament_id: int) -> dict[str, Any]:
        """Enter an arena (its entry fee held), or come back after withdrawing."""
        return cast(
            dict[str, Any],
            self._json("POST", f"/api/v1/tournaments/{tournament_id}/join"),
        )

    def leave_tournament(self, tournament_id: int) -> dict[str, Any]:
        """Before its start: leave (the fee released); while it runs: withdraw."""
        return cast(
            dict[str, Any],
            self._json("POST", f"/api/v1/tournaments/{tournament_id}/leave"),
        )

    def standings(self, tournament_id: int, *, wait: int | None = None) -> dict[str, Any]:
        """An arena's standings (``wait``: long-poll up to that many seconds for a change)."""
        params = {} if wait is None else {"wait": wait}
        return cast(
            dict[str, Any],
            self._json("GET", f"/api/v1/tournaments/{tournament_id}/standings", params=params),
        )

    # ------------------------------------------------------------------------------ hands

    def hand(
        self,
        hand_id: int,
        *,
        wait: int | None = None,
        after_seq: int | None = None,
        etag: str | None = None,
    ) -> tuple[HandView | None, str | None]:
        """My view of the hand and its ``ETag``; ``(None, etag)`` for a 304 (nothing new).

        ``wait`` (≤ 30 s) long-polls until the hand's seq exceeds ``after_seq``."""
        params = {"wait": wait or None, "after_seq": after_seq}
        headers = {"If-None-Match": etag} if etag else None
        response = self.request(
            "GET",
            f"/api/v1/hands/{hand_id}",
            params=params,
            headers=headers,
            timeout=self.timeout + (wait or 0),
        )
        if response.status_code == 304:
            return None, etag
        return cast(HandView, response.json()), response.headers.get("ETag")

    def move(
        self,
        hand_id: int,
        move: Mapping[str, Any],
        *,
        expected_seq: int | None = None,
        idempotency_key: str | None = None,
    ) -> MoveResult:
        """Submit one move; a fresh ``Idempotency-Key`` unless given, so retries are safe."""
        body = dict(move)
        if expected_seq is not None:
            body["expected_seq"] = expected_seq
        key = idempotency_key or uuid.uuid4().hex
        return cast(
            MoveResult,
            self._json(
                "POST",
                f"/api/v1/hands/{hand_id}/moves",
                json=body,
                headers={"Idempotency-Key": key},
            ),
        )

    def events(
        self,
        hand_id: int,
        *,
        after_seq: int | None = None,
        limit: int | None = None,
        wait: int | None = None,
    ) -> HandEventPage:
        """One page of the hand's events after ``after_seq`` (as my seat may see them)."""
        params = {"after_seq": after_seq, "limit": limit, "wait": wait or None}
        return cast(
            HandEventPage,
            self._json(
                "GET",
                f"/api/v1/hands/{hand_id}/events",
                params=params,
                timeout=self.timeout + (wait or 0),
            ),
        )

    def all_events(
        self, hand_id: int, *, after_seq: int | None = None, wait: int = 25
    ) -> Iterator[dict[str, Any]]:
        """Every event of the hand from ``after_seq`` on, long-polling for new ones. It stops
        after ``settled`` or ``voided``, or once the hand has ended and a long poll of ``wait``
        seconds brought nothing more (a settlement still to come is then not waited for)."""
        cursor = after_seq
        while True:
            page = self.events(hand_id, after_seq=cursor, wait=wait)
            for event in page["events"]:
                yield event
            if page["events"]:
                cursor = page["events"][-1]["seq"]
                if page["events"][-1].get("type") in ("settled", "voided"):
                    return
                continue
            view, _etag = self.hand(hand_id)
            if view is not None and view.get("status") == "ended":
                return

    def hand_stream(
        self, hand_id: int, *, after_seq: int | None = None, format: str = "sse"
    ) -> Iterator[StreamEvent]:
        """The hand's events pushed as they happen (SSE or NDJSON), resumed after a drop."""
        resume = None if after_seq is None else str(after_seq)
        for event in self.stream(
            f"/api/v1/hands/{hand_id}/events",
            format=format,
            last_event_id=resume,
            stop=_hand_finished,
        ):
            yield event

    def export_hand(self, hand_id: int) -> dict[str, Any]:
        """The ended hand's whole record, as auditors read it."""
        return cast(dict[str, Any], self._json("GET", f"/api/v1/hands/{hand_id}/export"))

    def replay(self, hand_id: int, *, seq: int | None = None) -> dict[str, Any]:
        """The hand as it stood at ``seq`` (the end when omitted), from my seat."""
        return cast(
            dict[str, Any],
            self._json("GET", f"/api/v1/hands/{hand_id}/replay", params={"seq": seq}),
        )

    # ------------------------------------------------------------------------------ audit

    def integrity_flags(
        self,
        *,
        status: str | None = None,
        signal: str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> Page:
        """One page of the integrity scan's flags, newest first (auditors; ``audit:read``)."""
        params = {"status": status, "signal": signal, "cursor": cursor, "limit": limit}
        return cast(Page, self._json("GET", "/api/v1/integrity/flags", params=params))

    def integrity_flag(self, flag_id: int) -> dict[str, Any]:
        """One flag with its review history (auditors)."""
        return cast(dict[str, Any], self._json("GET", f"/api/v1/integrity/flags/{flag_id}"))

    # ------------------------------------------------------------------------------ rules

    def presets(self) -> list[dict[str, Any]]:
        return cast(list[dict[str, Any]], self._json("GET", "/api/v1/rules/presets"))

    def evaluate(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Is this hand a win, and which cước: the calculator (no hand, no seat)."""
        return cast(dict[str, Any], self._json("POST", "/api/v1/rules/evaluate", json=dict(body)))

    def score(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The points and Quan of a win under a ruleset: the calculator."""
        return cast(dict[str, Any], self._json("POST", "/api/v1/rules/score", json=dict(body)))
