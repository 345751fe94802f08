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
