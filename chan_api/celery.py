"""The Celery application; tasks live in each app's ``tasks.py``.

Every task runs as a :class:`BoundedDeliveryTask`: tasks are acked late and a task whose worker
process dies is delivered again (``reject_on_worker_lost``), so a message that kills its worker
would be redelivered for ever. Each delivery is marked in the cache while it runs; a delivery
that finds the mark of an earlier one (which never finished: its process died) counts a crash,
and after ``CHAN_MAX_DELIVERIES`` crashes the message is logged, counted and dropped. The clock's
sweep re-arms whatever mattered (a turn, a deal, a settlement).
"""

from __future__ import annotations

import logging
import os
from typing import Any

from celery import Celery, Task

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chan_api.settings")
# Celery's Django fixup runs Django's system checks when a worker starts, which loads the URL
# conf and with it every view, DRF, the schema and the admin's pages: 7 MB of the worker's
# resident memory for modules no task uses (bench/load_bench.py's RSS goal). gunicorn runs no
# checks either; `manage.py migrate`, the release step before them (deploy/compose.yaml, make
# serve), runs them, and so does the suite (tests/chan_api/test_deploy.py).
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

logger = logging.getLogger(__name__)
RUNNING_TTL_SECONDS = 3 * 3600  # above the longest wait of a clock task (Redis visibility)


class BoundedDeliveryTask(Task):
    """A task that a poison message cannot keep redelivered (see the module docstring)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        task_id = self.request.id
        if task_id is None:  # called directly, not from a message
            return super().__call__(*args, **kwargs)
        if _crashes_so_far(task_id) >= _max_deliveries():
            logger.error(
                "task %s[%s] killed its worker %s times: dropped",
                self.name,
                task_id,
                _max_deliveries(),
            )
            _forget(task_id, dropped=True)
            from core import metrics

            metrics.task_dropped(task=self.name)
            return None
        _mark_running(task_id)
        try:
            return super().__call__(*args, **kwargs)
        finally:
            _forget(task_id)


def _max_deliveries() -> int:
    from django.conf import settings

    return int(getattr(settings, "CHAN_MAX_DELIVERIES", 3))


def _crashes_so_far(task_id: str) -> int:
    """How many earlier deliveries of this message died running (0 when the cache is down)."""
    from django.core.cache import cache

    try:
        if cache.get(f"celery:running:{task_id}") is None:
            return 0
        cache.add(f"celery:crashes:{task_id}", 0, timeout=RUNNING_TTL_SECONDS)
        return int(cache.incr(f"celery:crashes:{task_id}"))
    except Exception:
        logger.warning("task %s: the cache did not answer; delivery not counted", task_id)
        return 0


def _mark_running(task_id: str) -> None:
    from django.core.cache import cache

    try:
        cache.set(f"celery:running:{task_id}", 1, timeout=RUNNING_TTL_SECONDS)
    except Exception:
        logger.warning("task %s: the cache did not answer; delivery not marked", task_id)


def _forget(task_id: str, *, dropped: bool = False) -> None:
    from django.core.cache import cache

    try:
        cache.delete_many([f"celery:running:{task_id}", f"celery:crashes:{task_id}"])
        if dropped:
            cache.add("celery:dropped", 0, timeout=None)
            cache.incr("celery:dropped")
    except Exception:
        logger.warning("task %s: the cache did not answer", task_id)


app = Celery("chan_api", task_cls=BoundedDeliveryTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
