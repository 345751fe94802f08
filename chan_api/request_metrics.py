"""A request answered outside Django, counted in django-prometheus's request metrics as its two
middlewares (``PrometheusBeforeMiddleware``, ``PrometheusAfterMiddleware``) count one that goes
through Django: the same series, the same labels. For the long poll's re-arm
(games.live.rearm); a test holds the two countings equal series for series."""

from __future__ import annotations

from django_prometheus.middleware import Metrics

_METHODS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH"}
)


def request_counted(
    *,
    method: str,
    transport: str,
    view_name: str,
    status: int,
    charset: str,
    body_bytes: int,
    seconds: float,
    template_name: str | None = None,
    ajax: bool = False,
) -> None:
    """Count one request without a body that was answered ``status`` with ``body_bytes`` of
    body in ``seconds``, by the view named ``view_name``, as django-prometheus would.
    ``template_name``: ``str()`` of the response's ``template_name`` when it has one (a DRF
    ``Response`` has, and it is None: "None")."""
    m = Metrics.get_instance()
    label_method = method if method in _METHODS else "<invalid method>"
    m.requests_total.inc()
    m.requests_by_method.labels(method=label_method).inc()
    m.requests_by_transport.labels(transport=transport).inc()
    if ajax:  # X-Requested-With: XMLHttpRequest
        m.requests_ajax.inc()
    m.requests_body_bytes.observe(0)
    m.requests_by_view_transport_method.labels(
        view=view_name, transport=transport, method=label_method
    ).inc()
    status_label = str(status)
    m.responses_by_status.labels(status=status_label).inc()
    m.responses_by_status_view_method.labels(
        status=status_label, view=view_name, method=label_method
    ).inc()
    if template_name is not None:
        m.responses_by_templatename.labels(templatename=template_name).inc()
    m.responses_by_charset.labels(charset=charset).inc()
    m.responses_body_bytes.observe(body_bytes)
    m.requests_latency_by_view_method.labels(view=view_name, method=method).observe(seconds)
    m.responses_total.inc()
    m.requests_latency_before.observe(seconds)
