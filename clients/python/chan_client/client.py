"""The HTTP client: one ``httpx.Client``, a bearer token, problem+json errors, retries.

Retries. A request answered 429 or 5xx, or whose connection failed, is sent again after a delay:
the server's ``Retry-After`` when it gives one (429 ``throttled``, 503 ``service_unavailable``),
else an exponential backoff with full jitter; at most ``RetryPolicy.attempts`` times in all, then
the last answer is raised as :class:`ApiError` (or the transport error re-raised). Every
endpoint this client calls is safe to send twice: moves carry an ``Idempotency-Key`` (a repeat
is answered, not applied again), reads are reads, and a repeated ``join``/``ready``/``leave``/
``register`` is refused with a 409 the caller can read (``already_seated``, ``hand_in_progress``,
``not_seated``, ``username_taken``), never applied twice.
"""

from __future__ import annotations

import email.utils
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import httpx

from chan_client.types import HandView, MoveResult, ReadyResult, Table

RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})


class ApiError(Exception):
    """A 4xx or 5xx answer: its status and, for problem+json, its stable ``code`` and ``detail``."""

    def __init__(self, response: httpx.Response) -> None:
        self.status = response.status_code
        self.headers = response.headers
        try:
            body = response.json()
        except ValueError:
            body = None
        self.body: dict[str, Any] = body if isinstance(body, dict) else {}
        self.code: str | None = self.body.get("code")
        self.detail: str = self.body.get("detail") or response.text[:200]
        super().__init__(f"{self.status} {self.code or ''}: {self.detail}".strip())


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait. ``max_delay`` caps every wait, a ``Retry-After`` too."""

    attempts: int = 8
    base_delay: float = 0.2
    max_delay: float = 30.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
        if retry_after is not None:
            # the server's figure, plus a little jitter so a crowd does not come back at once
            return min(self.max_delay, retry_after + rng.uniform(0, self.base_delay))
        return rng.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


@dataclass
class Stats:
    """What this client sent: requests (each attempt counts), retries, answers by status."""

    requests: int = 0
    retries: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    waited: float = 0.0  # seconds slept before retries


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class ChanClient:
    """The Chắn API for one player. ``token`` is set by :meth:`login` or :meth:`register`."""

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
        headers = {"Accept": "application/json", "User-Agent": "chan-client/0.1"}
        if language:
            headers["Accept-Language"] = language
        self.http = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )
        self.token = token
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.stats = Stats()
        self._sleep = sleep
        self._rng = rng or random.Random()

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> ChanClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------ transport

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        ok: tuple[int, ...] = (200, 201),
    ) -> httpx.Response:
        """Send with retries; return an answer whose status is in ``ok`` (or a 304), else raise
        :class:`ApiError`."""
        sent = dict(headers or {})
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        attempt = 0
        while True:
            attempt += 1
            self.stats.requests += 1
            try:
                response = self.http.request(
                    method,
                    path,
                    json=json,
                    params=params,
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
            if response.status_code in RETRIED_STATUSES and attempt < self.retry.attempts:
                self._wait(attempt, parse_retry_after(response.headers.get("Retry-After")))
                continue
            raise ApiError(response)

    def _wait(self, attempt: int, retry_after: float | None) -> None:
        delay = self.retry.delay(attempt, retry_after, self._rng)
        self.stats.retries += 1
        self.stats.waited += delay
        self._sleep(delay)

    # ------------------------------------------------------------------------------ accounts

    def register(self, username: str, password: str) -> str:
        body = self.request(
            "POST", "/api/v1/auth/register", json={"username": username, "password": password}
        ).json()
        self.token = body["token"]
        return self.token

    def login(self, username: str, password: str) -> str:
        body = self.request(
            "POST", "/api/v1/auth/token", json={"username": username, "password": password}
        ).json()
        self.token = body["token"]
        return self.token

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

    def check(self) -> dict[str, Any]:
        return self.request("GET", "/api/v1/auth/check").json()

    def me(self) -> dict[str, Any]:
        return self.request("GET", "/api/v1/me").json()

    # ------------------------------------------------------------------------------ tables

    def rooms(self) -> list[dict[str, Any]]:
        return self.request("GET", "/api/v1/rooms").json()

    def quick_join(self, room: str, *, stake: int | None = None) -> Table:
        body = {} if stake is None else {"stake": stake}
        return self.request("POST", f"/api/v1/rooms/{room}/quick-join", json=body).json()

    def create_table(self, *, name: str, stake: int, max_seats: int = 4, **extra: Any) -> Table:
        body = {"name": name, "stake": stake, "max_seats": max_seats, **extra}
        return self.request("POST", "/api/v1/tables", json=body).json()

    def table(self, table_id: int) -> Table:
        return self.request("GET", f"/api/v1/tables/{table_id}").json()

    def join(self, table_id: int, *, seat: int | None = None) -> Table:
        """Sit at the table; already sitting there (a retried join) is not an error."""
        body = {} if seat is None else {"seat": seat}
        try:
            return self.request("POST", f"/api/v1/tables/{table_id}/join", json=body).json()
        except ApiError as e:
            if e.code != "already_seated":
                raise
        return self.table(table_id)

    def ready(self, table_id: int, *, ready: bool = True) -> ReadyResult:
        return self.request(
            "POST", f"/api/v1/tables/{table_id}/ready", json={"ready": ready}
        ).json()

    def leave(self, table_id: int) -> None:
        self.request("POST", f"/api/v1/tables/{table_id}/leave", json={})

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
        params: dict[str, Any] = {}
        if wait:
            params["wait"] = wait
        if after_seq is not None:
            params["after_seq"] = after_seq
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
        return self.request(
            "POST",
            f"/api/v1/hands/{hand_id}/moves",
            json=body,
            headers={"Idempotency-Key": key},
        ).json()

    def events(self, hand_id: int, *, after_seq: int | None = None) -> dict[str, Any]:
        params = {} if after_seq is None else {"after_seq": after_seq}
        return self.request("GET", f"/api/v1/hands/{hand_id}/events", params=params).json()
