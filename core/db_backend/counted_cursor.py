"""Cursors that count their statements in django-prometheus's database metrics, as its own
``ExportingCursorWrapper`` does — the same series, the same labels — at a fraction of the cost.

django-prometheus's wrapper looks up each labelled child on every statement
(``execute_total.labels(alias, vendor)``, ``query_duration_seconds.labels(**labels)``), copies a
dict for its exception counter and enters two context managers: ``labels()`` alone was 2 % of a
web worker's samples under bench/load_bench.py, for some ten statements a move. A connection's
alias and vendor never change, so the children are looked up once, when the cursor class is
made (once per connection), and an exception's child when it first happens.
"""

from __future__ import annotations

from time import perf_counter
from typing import Any

from django_prometheus.db import (
    errors_total,
    execute_many_total,
    execute_total,
    query_duration_seconds,
)


def counted_cursor_class(cursor_class: type, alias: str, vendor: str) -> type:
    """A subclass of ``cursor_class`` whose ``execute`` and ``executemany`` are counted in
    ``django_db_execute_total``, ``django_db_execute_many_total``,
    ``django_db_query_duration_seconds`` and, when they raise, ``django_db_errors_total``."""
    executed = execute_total.labels(alias, vendor)
    executed_many = execute_many_total.labels(alias, vendor)
    duration = query_duration_seconds.labels(alias, vendor)

    def failed(exc: BaseException) -> None:
        errors_total.labels(alias, vendor, type(exc).__name__).inc()

    class CountedCursor(cursor_class):  # type: ignore[valid-type, misc]
        def execute(self, *args: Any, **kwargs: Any) -> Any:
            executed.inc()
            start = perf_counter()
            try:
                return super().execute(*args, **kwargs)
            except BaseException as exc:
                failed(exc)
                raise
            finally:
                duration.observe(max(perf_counter() - start, 0))

        def executemany(self, query: Any, param_list: Any, *args: Any, **kwargs: Any) -> Any:
            executed.inc(len(param_list))
            executed_many.inc(len(param_list))
            start = perf_counter()
            try:
                return super().executemany(query, param_list, *args, **kwargs)
            except BaseException as exc:
                failed(exc)
                raise
            finally:
                duration.observe(max(perf_counter() - start, 0))

    CountedCursor.__name__ = CountedCursor.__qualname__ = f"Counted{cursor_class.__name__}"
    return CountedCursor
