"""The settings' defaults are production-safe; development and the test suite opt in.

Each case imports ``chan_api.settings`` in a fresh interpreter with a clean environment (only
``PATH``, plus a scratch ``CHAN_VAR_DIR``), as a server started with nothing set would — except
for ``DATABASE_URL``, which names a server never contacted: the embedded PostgreSQL is not what
these cases are about (tests/chan_api/test_embedded_db.py is), and each scratch directory would
otherwise start one that outlives the case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from chan_api.asgi import GC_THRESHOLDS

ROOT = Path(__file__).resolve().parents[2]
PRINT_SETTINGS = (
    "import json, chan_api.settings as s; print(json.dumps({k: getattr(s, k) for k in "
    "('DEBUG', 'SECRET_KEY', 'ALLOWED_HOSTS', 'CHAN_ALLOW_FIXED_DECK', 'CHAN_PUBLIC_API_DOCS', "
    "'SPECTACULAR_SETTINGS')}))"
)
RECORD_KEY = "k1:" + "A" * 43 + "="  # 32 zero bytes
PRINT_RECORD_KEY = "import chan_api.settings as s; print(s.CHAN_RECORD_KEY)"
PRINT_DATABASE = (
    "import json, {module}; from django.conf import settings; "
    "print(json.dumps(settings.DATABASES['default']))"
)


def settings_with(
    tmp_path: Path, script: str = PRINT_SETTINGS, **env: str
) -> subprocess.CompletedProcess[str]:
    clean = {
        "PATH": os.environ.get("PATH", ""),
        "CHAN_VAR_DIR": str(tmp_path),
        "DATABASE_URL": "postgres://nobody@db.invalid/none",
        "CHAN_RECORD_KEY": RECORD_KEY,  # required like SECRET_KEY; its own cases below
        **env,
    }
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def loaded(tmp_path: Path, script: str = PRINT_SETTINGS, **env: str) -> dict:
    result = settings_with(tmp_path, script, **env)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


def test_with_no_environment_the_settings_refuse_to_load_without_a_secret_key(tmp_path) -> None:
    result = settings_with(tmp_path)
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr
    assert "DEBUG=1" in result.stderr  # and say how to run locally


def test_production_defaults_debug_off_no_fixed_decks_localhost_only(tmp_path) -> None:
    s = loaded(tmp_path, SECRET_KEY="a-production-secret")
    assert {k: v for k, v in s.items() if k != "SPECTACULAR_SETTINGS"} == {
        "DEBUG": False,
        "SECRET_KEY": "a-production-secret",
        "ALLOWED_HOSTS": ["localhost", "127.0.0.1", "[::1]"],
        "CHAN_ALLOW_FIXED_DECK": False,
        "CHAN_PUBLIC_API_DOCS": False,
    }


def test_debug_brings_a_dev_key_and_fixed_decks(tmp_path) -> None:
    s = loaded(tmp_path, DEBUG="1")
    assert s["DEBUG"] is True and s["CHAN_ALLOW_FIXED_DECK"] is True
    assert s["SECRET_KEY"].startswith("dev-only-")
    assert s["ALLOWED_HOSTS"] == ["localhost", "127.0.0.1", "[::1]"]


def test_under_pytest_debug_stays_off_with_a_test_key_and_fixed_decks(tmp_path) -> None:
    s = loaded(tmp_path, PYTEST_VERSION="9")
    assert s["DEBUG"] is False and s["CHAN_ALLOW_FIXED_DECK"] is True
    assert s["SECRET_KEY"].startswith("test-only-")


@pytest.mark.parametrize(
    ("env", "allowed"),
    [
        ({"DEBUG": "1", "CHAN_ALLOW_FIXED_DECK": "0"}, False),
        ({"DEBUG": "0", "SECRET_KEY": "k", "CHAN_ALLOW_FIXED_DECK": "1"}, True),
        ({"DEBUG": "0", "SECRET_KEY": "k"}, False),
        ({"DEBUG": "", "SECRET_KEY": "k"}, False),
    ],
)
def test_the_fixed_deck_option_follows_debug_unless_set(tmp_path, env, allowed) -> None:
    assert loaded(tmp_path, **env)["CHAN_ALLOW_FIXED_DECK"] is allowed


@pytest.mark.parametrize(
    ("value", "hosts"),
    [
        ("chan.example.org, api.chan.example.org", ["chan.example.org", "api.chan.example.org"]),
        ("*", ["*"]),
        ("", ["localhost", "127.0.0.1", "[::1]"]),
    ],
)
def test_allowed_hosts_come_from_the_environment(tmp_path, value, hosts) -> None:
    assert loaded(tmp_path, SECRET_KEY="k", ALLOWED_HOSTS=value)["ALLOWED_HOSTS"] == hosts


def test_production_refuses_to_start_without_a_readable_record_key(tmp_path) -> None:
    result = settings_with(tmp_path, SECRET_KEY="k", CHAN_RECORD_KEY="")
    assert result.returncode != 0
    assert "CHAN_RECORD_KEY must be set when DEBUG is off" in result.stderr
    secret = "k1:" + "c2VjcmV0" * 2  # base64, but 12 bytes
    result = settings_with(tmp_path, SECRET_KEY="k", CHAN_RECORD_KEY=secret)
    assert result.returncode != 0
    assert "CHAN_RECORD_KEY: key k1 is not 32 bytes" in result.stderr
    assert "c2VjcmV0" not in result.stderr  # the key's material is never shown
    rotated = f"{RECORD_KEY.replace('k1', 'k2')},{RECORD_KEY}"
    assert loaded_text(tmp_path, SECRET_KEY="k", CHAN_RECORD_KEY=rotated) == rotated


def loaded_text(tmp_path: Path, **env: str) -> str:
    result = settings_with(tmp_path, PRINT_RECORD_KEY, **env)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.splitlines()[-1]


def test_debug_keeps_a_record_key_made_at_its_first_start(tmp_path) -> None:
    first = loaded_text(tmp_path, DEBUG="1", CHAN_RECORD_KEY="")
    assert first.startswith("dev:")
    assert (tmp_path / "record-key").read_text() == first
    assert (tmp_path / "record-key").stat().st_mode & 0o077 == 0
    assert loaded_text(tmp_path, DEBUG="1", CHAN_RECORD_KEY="") == first


def test_under_pytest_a_record_key_is_made_for_the_run(tmp_path) -> None:
    made = loaded_text(tmp_path, PYTEST_VERSION="9", CHAN_RECORD_KEY="")
    assert made.startswith("test:") and not (tmp_path / "record-key").exists()
    assert (
        os.environ["CHAN_RECORD_KEY"] == settings.CHAN_RECORD_KEY
    )  # what this run's processes share


def test_this_suite_runs_with_debug_off_and_fixed_decks_on() -> None:
    assert settings.DEBUG is False
    assert settings.CHAN_ALLOW_FIXED_DECK is True


def test_the_connection_pool_is_off_unless_asked_and_replaces_persistent_connections(
    tmp_path,
) -> None:
    script = PRINT_DATABASE.format(module="django")
    plain = loaded(tmp_path, script, SECRET_KEY="k", DJANGO_SETTINGS_MODULE="chan_api.settings")
    assert plain["CONN_MAX_AGE"] == 60 and "pool" not in plain.get("OPTIONS", {})

    pooled = loaded(
        tmp_path,
        script,
        SECRET_KEY="k",
        DJANGO_SETTINGS_MODULE="chan_api.settings",
        DB_POOL="1",
        DB_POOL_MAX="4",
    )

    assert pooled["CONN_MAX_AGE"] == 0
    assert pooled["OPTIONS"]["pool"] == {"min_size": 2, "max_size": 4, "timeout": 10.0}


def test_server_binding_and_prepared_statements_but_none_behind_pgbouncer(tmp_path) -> None:
    script = PRINT_DATABASE.format(module="django")
    env = {"SECRET_KEY": "k", "DJANGO_SETTINGS_MODULE": "chan_api.settings"}
    plain = loaded(tmp_path, script, **env)
    assert not plain.get("DISABLE_SERVER_SIDE_CURSORS")
    assert plain["OPTIONS"]["server_side_binding"] is True
    assert plain["OPTIONS"]["prepare_threshold"] == 5
    unprepared = loaded(tmp_path, script, **env, DB_PREPARE_THRESHOLD="off")
    assert unprepared["OPTIONS"]["prepare_threshold"] is None
    bad = settings_with(tmp_path, script, **env, DB_PREPARE_THRESHOLD="often")
    assert bad.returncode != 0 and "DB_PREPARE_THRESHOLD" in bad.stderr

    pooled = loaded(tmp_path, script, **env, DATABASE_POOLER="pgbouncer")

    assert pooled["DISABLE_SERVER_SIDE_CURSORS"] is True
    assert pooled["OPTIONS"]["prepare_threshold"] is None
    assert pooled["OPTIONS"]["server_side_binding"] is True  # PgBouncer passes the protocol on
    refused = settings_with(tmp_path, script, **env, DATABASE_POOLER="pgpool")
    assert refused.returncode != 0 and "DATABASE_POOLER" in refused.stderr


def test_a_replica_is_an_alias_of_its_own_read_only_by_the_router(tmp_path) -> None:
    script = (
        "import json, django; from django.conf import settings; "
        "print(json.dumps({'replica': settings.DATABASES.get('replica'), "
        "'routers': settings.DATABASE_ROUTERS}))"
    )
    env = {"SECRET_KEY": "k", "DJANGO_SETTINGS_MODULE": "chan_api.settings"}
    assert loaded(tmp_path, script, **env)["replica"] is None

    out = loaded(tmp_path, script, **env, DATABASE_REPLICA_URL="postgres://r@replica.invalid/none")

    assert out["routers"] == ["core.db_router.LaggingReadsRouter"]
    assert out["replica"]["HOST"] == "replica.invalid"
    assert out["replica"]["TEST"] == {"MIRROR": "default"}
    assert out["replica"]["OPTIONS"]["connect_timeout"] == 2


def test_the_asgi_entry_keeps_a_persistent_connection_per_thread(tmp_path) -> None:
    # Django runs in a fixed pool of long-lived threads there (chan_api/wsgi_threads.py)
    script = PRINT_DATABASE.format(module="chan_api.asgi")

    database = loaded(tmp_path, script, SECRET_KEY="k")

    assert database["CONN_MAX_AGE"] == 60 and "pool" not in database.get("OPTIONS", {})


LIFESPAN = """
import asyncio, gc, json
import chan_api.asgi as entry
imported = gc.get_freeze_count()
async def main():
    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent = []
    async def receive():
        return messages.pop(0)
    async def send(message):
        sent.append(message["type"])
    await entry.application({"type": "lifespan"}, receive, send)
    return sent
sent = asyncio.run(main())
print(json.dumps([imported, gc.get_freeze_count(), gc.get_threshold(), sent]))
"""


def test_a_web_process_freezes_what_it_loaded_at_startup_not_at_import(tmp_path) -> None:
    # Importing the entry point leaves the collector alone (a test process imports it);
    imported, frozen, thresholds, sent = loaded(tmp_path, LIFESPAN, SECRET_KEY="k")
    assert imported == 0
    # the server's startup loads the views and puts everything alive then out of its reach.
    assert frozen > 50_000, frozen
    assert tuple(thresholds) == GC_THRESHOLDS
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


ACCESS_LOG = """
import json, logging, logging.config, runpy
conf = runpy.run_path("deploy/gunicorn.conf.py")
logging.config.dictConfig(conf["logconfig_dict"])  # as gunicorn does
conf["post_worker_init"](None)
access = logging.getLogger("uvicorn.access")
print(json.dumps([access.hasHandlers(), logging.getLogger("uvicorn.error").hasHandlers()]))
"""


@pytest.mark.parametrize(("env", "formatted"), [({}, False), ({"GUNICORN_ACCESS_LOG": "-"}, True)])
def test_uvicorn_formats_access_lines_only_when_the_access_log_is_on(
    tmp_path, env, formatted
) -> None:
    # (uvicorn formats a line's arguments whenever its logger has handlers, whatever the level)
    access, errors = loaded(tmp_path, ACCESS_LOG, SECRET_KEY="k", **env)
    assert access is formatted
    assert errors


def test_run_dev_refuses_to_serve_with_debug_off() -> None:
    with pytest.raises(CommandError, match="DEBUG=1"):
        call_command("run_dev", "--no-worker")


def test_a_database_other_than_postgresql_is_refused(tmp_path) -> None:
    result = settings_with(tmp_path, SECRET_KEY="k", DATABASE_URL="sqlite:///db.sqlite3")
    assert result.returncode != 0
    assert "DATABASE_URL must name a PostgreSQL database" in result.stderr


def test_the_schema_is_private_in_production_unless_made_public(tmp_path) -> None:
    private = loaded(tmp_path, SECRET_KEY="k")
    public = loaded(tmp_path, SECRET_KEY="k", CHAN_PUBLIC_API_DOCS="1")
    debug = loaded(tmp_path, DEBUG="1")
    assert private["CHAN_PUBLIC_API_DOCS"] is False
    assert private["SPECTACULAR_SETTINGS"]["SERVE_PERMISSIONS"] == [
        "chan_api.schema.DocsPermission"
    ]
    assert public["CHAN_PUBLIC_API_DOCS"] is True and debug["CHAN_PUBLIC_API_DOCS"] is True


def test_a_failing_startup_hook_is_logged_and_the_server_starts_anyway(caplog) -> None:
    import asyncio

    from chan_api.wsgi_threads import WsgiInThreads

    def boom() -> None:
        raise RuntimeError("no URLconf")

    app = WsgiInThreads(lambda environ, start: [], threads=1, max_body=10, on_startup=boom)
    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[str] = []

    async def receive() -> dict:
        return messages.pop(0)

    async def send(message: dict) -> None:
        sent.append(message["type"])

    asyncio.run(app({"type": "lifespan"}, receive, send))
    # (uvicorn would otherwise take the exception for "lifespan unsupported" and say nothing)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    (record,) = [r for r in caplog.records if r.name == "chan_api.wsgi_threads"]
    assert "startup hook failed" in record.getMessage() and "no URLconf" in record.exc_text


def test_oauth_is_configured_in_production_as_in_this_suite(tmp_path) -> None:
    # the OAuth tests (loopback redirects included) run what a server with DEBUG off runs
    script = "import json, chan_api.settings as s; print(json.dumps(s.OAUTH2_PROVIDER))"
    production = loaded(tmp_path, script, SECRET_KEY="a-production-secret")
    assert production == json.loads(json.dumps(settings.OAUTH2_PROVIDER))
    assert "http" in production["ALLOWED_REDIRECT_URI_SCHEMES"]  # to loopback only (accounts)
    assert production["ALLOW_LOCALHOST_LOOPBACK"] is False
