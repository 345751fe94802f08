"""A request answered outside Django, counted in django-prometheus's request metrics as its two
middlewares (``PrometheusBeforeMiddleware``, ``PrometheusAfterMiddleware``) count one that goes
through Django: the same series, the same labels. For the long poll's re-arm
(games.live.rearm) and the move answered without Django (games.api.move_direct); their tests
hold the two countings equal series for series."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django_prometheus.middleware import Metrics

_METHODS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH"}
)


# Labelled children already looked up: (metric, label values) → child. prometheus_client's
# ``labels()`` takes a lock and checks its arguments on each call (2 % of a web worker's samples,
# a dozen per request); the children never change, and the labels' values are few (views,
# statuses, methods). Bounded all the same.
_CHILDREN_KEPT = 4096
_children: dict[tuple[Any, tuple[str, ...]], Any] = {}


def _child(metric: Any, *values: str) -> Any:
    key = (metric, values)  # the metric itself: a registry made again has new metrics
    child = _children.get(key)
    if child is None:
        if len(_children) >= _CHILDREN_KEPT:
            _children.clear()
        child = _children[key] = metric.labels(*values)
    return child


def requested_with_xhr(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether an ASGI request's headers say ``X-Requested-With: XMLHttpRequest`` (what
    django-prometheus counts as ajax)."""
    return any(k == b"x-requested-with" and v == b"XMLHttpRequest" for k, v in headers)


def request_counted(
    *,
    method: str,
    transport: str,
    view_name: str,
    status: int,
    charset: str,
    body_bytes: int,
    seconds: float,
    request_bytes: int = 0,
    template_name: str | None = None,
    ajax: bool = False,
    exception: str | None = None,
) -> None:
    """Count one request (``request_bytes``: its Content-Length) that was answered ``status``
    with ``body_bytes`` of body in ``seconds``, by the view named ``view_name``, as
    django-prometheus would.
    ``template_name``: ``str()`` of the response's ``template_name`` when it has one (a DRF
    ``Response`` has, and it is None: "None"); ``exception``: the type's name of an exception
    that went through the middleware (an answer of ``handler500``)."""
    m = Metrics.get_instance()
    label_method = method if method in _METHODS else "<invalid method>"
    m.requests_total.inc()
    _child(m.requests_by_method, label_method).inc()
    _child(m.requests_by_transport, transport).inc()
    if ajax:  # X-Requested-With: XMLHttpRequest
        m.requests_ajax.inc()
    m.requests_body_bytes.observe(request_bytes)  # the request's Content-Length
    # (positional label values: in the order each metric declares its labels)
    _child(m.requests_by_view_transport_method, view_name, transport, label_method).inc()
    status_label = str(status)
    _child(m.responses_by_status, status_label).inc()
    _child(m.responses_by_status_view_method, status_label, view_name, label_method).inc()
    if template_name is not None:
        _child(m.responses_by_templatename, template_name).inc()
    _child(m.responses_by_charset, charset).inc()
    m.responses_body_bytes.observe(body_bytes)
    _child(m.requests_latency_by_view_method, view_name, method).observe(seconds)
    m.responses_total.inc()
    m.requests_latency_before.observe(seconds)
    if exception is not None:  # (process_exception: counted, and its latency observed again)
        _child(m.exceptions_by_type, exception).inc()
        _child(m.exceptions_by_view, view_name).inc()
        _child(m.requests_latency_by_view_method, view_name, method).observe(seconds)
