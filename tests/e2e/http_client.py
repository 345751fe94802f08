"""A minimal HTTP/1.1 JSON client for the end-to-end tests: real sockets to a live server."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit


class HttpResponse:
    def __init__(self, status: int, headers: http.client.HTTPMessage, content: bytes) -> None:
        self.status_code = status
        self.headers = headers
        self.content = content

    def __getitem__(self, name: str) -> str:
        value = self.headers.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: str) -> bool:
        return name in self.headers

    def json(self) -> Any:
        return json.loads(self.content)


class HttpClient:
    """One keep-alive connection; ``token`` (once set) is sent as a bearer token."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        self.token: str | None = None

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> HttpResponse:
        sent = {"Accept": "application/json", **(headers or {})}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        try:
            self.conn.request(method, path, payload, sent)
        except (BrokenPipeError, ConnectionResetError):
            # The server closed the idle keep-alive connection before this request was sent
            # (its keep-alive timeout, while a slow step elsewhere ran): the request never
            # reached it, so it is sent once more on a new connection.
            self.conn.close()
            self.conn.request(method, path, payload, sent)
        response = self.conn.getresponse()
        return HttpResponse(response.status, response.headers, response.read())

    def get(self, path: str, **headers: str) -> HttpResponse:
        return self.request("GET", path, headers=headers)

    def post(self, path: str, body: Any = None) -> HttpResponse:
        return self.request("POST", path, {} if body is None else body)

    def close(self) -> None:
        self.conn.close()
