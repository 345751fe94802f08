"""Where a third-party app may be sent back to: ``https``, or plain ``http`` to a loopback address
on any port for native apps (RFC 8252 §7.3), not to the name ``localhost``, which a resolver may
send elsewhere (§8.3); under ``DEBUG`` any ``http``. Authorization (accounts/api/oauth.py) and
the apps' admin form both hold redirect URIs to it."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1"})


def redirect_uri_allowed(uri: str) -> bool:
    """Whether an app may be sent to ``uri`` at all; matching the app's registered URIs is a
    separate check."""
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and (settings.DEBUG or host in LOOPBACK_HOSTS)
