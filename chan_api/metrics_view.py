"""``GET /metrics``: every metric of core/metrics.py in Prometheus' text format, summed over every
process in multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``), for allowed callers only."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)

from chan_api import multiproc
from chan_api.throttles import client_address
from core import errors


def metrics_text() -> bytes:
    """Every metric in Prometheus' text format: all processes' in multiprocess mode."""
    if multiproc.enabled():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(REGISTRY)


def metrics_allowed(request: HttpRequest) -> bool:
    """``METRICS_TOKEN`` as a bearer token, or a caller in ``METRICS_ALLOWED_IPS``."""
    token = settings.METRICS_TOKEN
    if token and request.headers.get("Authorization", "") == f"Bearer {token}":
        return True
    try:
        address = ipaddress.ip_address(client_address(request))
    except ValueError:
        return False
    return any(address in network for network in settings.METRICS_ALLOWED_NETWORKS)


def metrics_view(request: HttpRequest) -> HttpResponse:
    """``GET /metrics``: Prometheus' text format, for allowed callers only (403 problem+json)."""
    if not metrics_allowed(request):
        from chan_api.problems import plain_problem

        return plain_problem(errors.PermissionDenied())
    return HttpResponse(metrics_text(), content_type=CONTENT_TYPE_LATEST)
