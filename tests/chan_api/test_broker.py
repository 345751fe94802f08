"""The broker transport's guard (chan_api/broker.py); the outage itself, with a real Redis
stopped and started again under a real worker and beat, is tests/faults/test_faults_redis.py."""

from __future__ import annotations

import os

import pytest
from django.conf import settings
from kombu import Connection

from chan_api.broker import Transport


def test_a_redis_broker_goes_through_the_guarded_transport() -> None:
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        assert not getattr(settings, "CELERY_BROKER_TRANSPORT", None)
        pytest.skip("the filesystem broker: nothing to guard")
    from chan_api.celery import app

    with app.connection_for_read() as conn:
        assert conn.transport_cls == "chan_api.broker:Transport"
        assert isinstance(conn.transport, Transport)


def test_a_channel_whose_transport_was_detached_answers_a_connection_error() -> None:
    # Given a channel on the guarded transport, on the suite's Redis,
    url = os.environ.get("CACHE_URL", "")
    if not url.startswith("redis://"):
        pytest.skip("no Redis (CACHE_URL)")
    conn = Connection(url, transport="chan_api.broker:Transport")
    transport = conn.transport
    channel = transport.create_channel(conn.connection)
    try:
        # when its transport is detached from the connection (what Connection.collect() does
        # when the broker is lost) and the channel asks for a new pool, as its close does to
        # hand its reserved messages back,
        channel._disconnect_pools()
        transport.client = None
        # then it answers an error kombu counts as a connection error, not an AttributeError;
        with pytest.raises(conn.connection_errors) as raised:
            channel.pool  # noqa: B018
        assert not isinstance(raised.value, AttributeError)
        # and so does a channel that was closed.
        channel.connection = None
        with pytest.raises(conn.connection_errors):
            channel.pool  # noqa: B018
    finally:
        conn.release()
