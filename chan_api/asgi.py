"""ASGI entry point: ``gunicorn -c deploy/gunicorn.conf.py chan_api.asgi:application`` (uvicorn
workers); ``manage.py run_dev`` serves it too.

What a web worker serves (:func:`serving_stack`):

* :class:`games.live.long_poll.LongPollApp` on the outside: long polls wait in the event loop,
  holding no thread and no database connection, woken by the process's hand feed;
* inside it, Django's WSGI application (``chan_api.wsgi``: its charset-proof request class)
  in a pool of ``WEB_THREADS`` threads (:class:`chan_api.wsgi_threads.WsgiInThreads`), one hop
  per request. Django's own ASGI handler served half the requests per second (docs/decisions/).

The pool's threads live as long as the process, so they keep persistent database connections
(``CONN_MAX_AGE``) as ``gthread``'s threads did; ``DB_POOL=1`` may add psycopg's pool.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")


def serving_stack() -> Any:
    from django.conf import settings

    from chan_api.request_body import body_limit
    from chan_api.wsgi import application as django_application  # sets Django up
    from chan_api.wsgi_threads import WsgiInThreads
    from games.api.move_direct import MoveDirectApp
    from games.live.long_poll import LongPollApp

    max_body = body_limit() + 1  # (Django refuses a larger body: its 413)
    django_app = WsgiInThreads(
        django_application,
        threads=settings.WEB_THREADS,
        max_body=max_body,
        on_startup=process_settle,
    )
    return LongPollApp(MoveDirectApp(django_app))


def process_settle() -> None:
    """At the server's startup (ASGI lifespan), once per process: load the URLconf (and with it
    every view, serializer and model), then move every object alive now out of the garbage
    collector's reach (``gc.freeze``) and let it run less often. Those objects live as long
    as the process; a request's garbage is freed by reference counting, the collector is only
    for cycles. Measured with 5,000 waiting long polls (bench/longpoll_bench.py): a full
    collection during a wake-up scanned every one of them and took 175 ms; now there is none.
    Not at import: a process that imports this module to test it keeps its collector."""
    import gc

    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018  # imports the views
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


GC_THRESHOLDS = (50_000, 20, 20)  # Python's defaults: (700, 10, 10)


application = serving_stack()
