"""``/healthz`` (the process answers) and ``/readyz`` (its database, cache and broker answer).

A load balancer restarts a process whose ``/healthz`` fails and stops sending requests to one
whose ``/readyz`` fails. Each check is a round trip with a short timeout; a failure answers
``503`` problem+json naming what failed (``failed``) and every check's result (``checks``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from kombu import Connection

from core import errors


def database_check() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def cache_check() -> None:
    key, value = f"chan:readyz:{uuid.uuid4().hex}", str(time.time())
    cache.set(key, value, timeout=10)
    if cache.get(key) != value:
        raise RuntimeError("the cache did not keep a value")
    cache.delete(key)


def broker_check() -> None:
    url = settings.CELERY_BROKER_URL
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    with Connection(url, transport_options=options, connect_timeout=settings.READYZ_TIMEOUT) as c:
        c.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)


CHECKS: dict[str, Callable[[], None]] = {
    "database": database_check,
    "cache": cache_check,
    "broker": broker_check,
}


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up and answers; nothing else is checked."""
    return JsonResponse({"status": "ok"})


@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    """200 when every dependency answers, else 503 problem+json naming the ones that failed."""
    results: dict[str, str] = {}
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:  # any failure of a dependency is "not ready"
            results[name] = f"failed: {type(exc).__name__}"
        else:
            results[name] = "ok"
    failed = [name for name, result in results.items() if result != "ok"]
    if not failed:
        return JsonResponse({"status": "ok", "checks": results})
    from chan_api.problems import plain_problem

    return plain_problem(
        errors.DomainError(
            _("Not ready: %(failed)s unreachable."),
            code="service_unavailable",
            extra={"failed": failed, "checks": results},
            failed=", ".join(failed),
        )
    )
