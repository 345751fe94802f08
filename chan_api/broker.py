"""The Redis broker transport of every Celery process (``CELERY_BROKER_TRANSPORT``): kombu's own,
with one guard that keeps a worker alive through a broker outage.

When the worker loses the broker, Celery's consumer first collects the broken connection
(``Connection.collect()``, which detaches the transport from it) and then closes it. That close
closes the connection's default channel a second time if the first attempt was cut short by the
outage, and a channel that still holds reserved messages (tasks acked late, wake-ups waiting for
their ETA) tries to hand them back: it builds a new connection pool from the transport's
connection parameters, which are gone. kombu then raises ``AttributeError`` (``'NoneType'
object has no attribute 'hostname'``), which is no connection error, so the worker stops with
"Unrecoverable error" instead of reconnecting.

Here a channel whose transport was detached (or that was closed) answers that it has no connection, as it would if
Redis refused it: kombu counts it a connection error, the close goes on and the worker
reconnects. The reserved messages stay in Redis's unacknowledged set and are delivered again
after the visibility timeout; what cannot wait (a turn's deadline, a deal, a settlement) the
clock's sweep re-arms within seconds of the worker being back.
"""

from __future__ import annotations

from typing import Any

import redis
from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        transport = self.connection  # None once this channel was closed
        if transport is None or transport.client is None:  # detached by Connection.collect()
            raise redis.exceptions.ConnectionError("the broker connection was closed")
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
