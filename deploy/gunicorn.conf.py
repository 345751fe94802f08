"""gunicorn settings for production: ``gunicorn -c deploy/gunicorn.conf.py chan_api.wsgi``.

Threads serve long polls (GET /hands/{id}?wait=N) without a process per waiting client; the
database connection is released while a poll waits.
"""

import multiprocessing
import os

bind = os.environ.get("BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_WORKERS", multiprocessing.cpu_count() * 2 + 1))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "16"))
timeout = 60
graceful_timeout = 30
keepalive = 5
accesslog = "-"
errorlog = "-"

# Oversized request lines and headers are refused by gunicorn itself with a plain 400 before the
# application sees them (docs/operations: the app answers problem+json for everything it can see).
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190
