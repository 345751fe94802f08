"""gunicorn's worker class (deploy/gunicorn.conf.py): uvicorn, without its proxy headers, on
the httptools protocol of chan_api/http_protocol.py.

uvicorn would rewrite the client's address from ``X-Forwarded-For`` whenever the peer is in
``forwarded_allow_ips`` (127.0.0.1 by default), so a local client's own header would be taken
as its address. Django decides instead, from the socket address and ``NUM_PROXIES``
(``chan_api.throttles.client_address``; ``X-Forwarded-Proto`` through
``SECURE_PROXY_SSL_HEADER`` when ``NUM_PROXIES`` is set).
"""

from __future__ import annotations

from typing import Any

from uvicorn_worker import UvicornWorker as _UvicornWorker

from chan_api.http_protocol import HttpToolsProtocol


class UvicornWorker(_UvicornWorker):
    CONFIG_KWARGS: dict[str, Any] = {
        **_UvicornWorker.CONFIG_KWARGS,
        "proxy_headers": False,
        # httptools, writing each answer's head and body in one write (chan_api/http_protocol.py)
        "http": HttpToolsProtocol,
    }
