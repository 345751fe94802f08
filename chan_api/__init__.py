"""Project glue: settings, URLs, the Celery app and the API's error handler.

The Celery app (chan_api.celery) is not imported here: every Django process loads it when its
apps are ready (``GamesConfig.ready``), before any task can be sent, and the Celery worker finds
it as ``chan_api.celery`` (``celery -A chan_api``). Importing it here made every import of a
``chan_api`` module load Celery, kombu and their dependencies — in gunicorn's master too, which
only reads deploy/gunicorn.conf.py (13 MB of its 39: docs/decisions/lean-stack-memory.md).
"""
