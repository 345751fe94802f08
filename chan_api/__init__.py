"""Project glue: settings, URLs, the Celery app and the API's error handler."""

from chan_api.celery import app as celery_app

__all__ = ["celery_app"]
