"""Fixtures shared by the whole suite.

The settings see pytest (``PYTEST_VERSION``) and give the suite a test-only ``SECRET_KEY`` and
fixed decks; pytest-django keeps ``DEBUG`` off, as in production.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient


@pytest.hookimpl(trylast=True)  # after pytest-django has read the settings
def pytest_configure(config: pytest.Config) -> None:
    """The processes a test starts connect as the role their own DATABASE_URL names, never with
    the owner's URL: a process that runs tests (an xdist worker, or pytest without xdist) drops
    DATABASE_OWNER_URL from its environment once the settings have read it. The xdist
    controller keeps it for the workers it starts."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    from django.conf import settings

    settings.DATABASES  # read now, before the variable goes  # noqa: B018
    os.environ.pop("DATABASE_OWNER_URL", None)


@pytest.hookimpl(trylast=True)  # after pytest-django's own ordering
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked slow first, the longest first (``slow(seconds=…)``, a rough figure of a
    serial run; 10 if not given), then the others, each group in its order: the xdist workers of
    ``make test`` start the long ones at once and end together, where a long test collected
    last would run alone at the end while the other workers sit idle."""

    def expected_seconds(item: pytest.Item) -> float:
        slow = item.get_closest_marker("slow")
        return 0.0 if slow is None else float(slow.kwargs.get("seconds", 10))

    items.sort(key=expected_seconds, reverse=True)  # stable: ties keep their order


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """Each test database is created and migrated as the tables' owner; then, as the owner:

    * the hand log refuses TRUNCATE unless ``chan.allow_log_truncate`` is on (migration games
      0004); Django empties the test database with TRUNCATE after each transactional test, so
      that test database, and it alone, turns it on;
    * ``chan_test_as_owner(sql)`` runs one statement as the owner, for the tests that fake what
      only the owner could do (tests/db_owner.py); it exists in test databases only.

    Then the suite reconnects as the application's role (``settings.CHAN_DATABASE_APP``, when
    the application has a role of its own): every test has the application's rights."""
    from django.conf import settings
    from django.db import connection

    app = getattr(settings, "CHAN_DATABASE_APP", None)
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        name = connection.ops.quote_name(connection.settings_dict["NAME"])
        cursor.execute(f"ALTER DATABASE {name} SET chan.allow_log_truncate = 'on'")
        cursor.execute("SET chan.allow_log_truncate = 'on'")  # this connection is already open
        cursor.execute(AS_OWNER_FUNCTION)
        if app:
            role = connection.ops.quote_name(app["USER"])
            cursor.execute("REVOKE ALL ON FUNCTION chan_test_as_owner(text) FROM PUBLIC")
            cursor.execute(f"GRANT EXECUTE ON FUNCTION chan_test_as_owner(text) TO {role}")
    owner = connection.settings_dict
    if app:
        connection.close()
        connection.settings_dict = {**owner, **app}
    yield
    if app:
        connection.close()
        connection.settings_dict = owner  # the owner drops the test database


AS_OWNER_FUNCTION = """
CREATE OR REPLACE FUNCTION chan_test_as_owner(statement text) RETURNS void AS $$
BEGIN
    IF current_database() NOT LIKE 'test\\_%' THEN
        RAISE EXCEPTION 'chan_test_as_owner exists for test databases only';
    END IF;
    EXECUTE statement;
END;
$$ LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp
"""


@pytest.fixture(autouse=True)
def _default_rooms(request: pytest.FixtureRequest) -> None:
    """The rooms are seeded by a migration; a transactional test empties every table after it,
    so each database test puts back the missing ones."""
    if request.node.get_closest_marker("django_db") is None and not {
        "db",
        "transactional_db",
        "live_server",
    } & set(request.fixturenames):
        return
    from games.services.rooms import rooms_seed

    rooms_seed()


@pytest.fixture(autouse=True)
def _announcements_sent() -> Iterator[None]:
    """What a test's commits announced is sent before the next test starts (the announcer's
    thread sends it: games.live.announce), so it is never counted by the next test's fixtures
    nor sent under its settings."""
    yield
    from games.live.announce import announcements_sent

    assert announcements_sent(), "the announcer did not send a test's announcements in time"


@pytest.fixture
def private_dir() -> Iterator[Path]:
    """A scratch directory for a private embedded PostgreSQL (run as its own system user, which
    must reach it). Not pytest's tmp_path: its root is private to root (0700), and each xdist
    worker puts that mode back when it first makes its own, under a server started meanwhile."""
    from chan_api import embedded_redis

    path = Path(tempfile.mkdtemp(prefix="chan-test-"))
    path.chmod(0o755)
    yield path
    embedded_redis.stop(path)  # started by a process with neither DATABASE_URL nor CACHE_URL
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def make_user(db: None) -> Callable[..., tuple[Any, str]]:
    """Factory: ``user, token = make_user(username=..., password=..., **fields)``.

    The token is the plaintext bearer token. Without a password the user has an unusable one
    (no slow hashing); pass ``password=`` to log in with it.
    """
    from accounts.ledger import welcome_grant_book
    from accounts.models import User
    from accounts.services import token_create

    counter = itertools.count(1)

    def factory(
        username: str | None = None, password: str | None = None, **fields: Any
    ) -> tuple[User, str]:
        name = username or f"player{next(counter)}"
        user = User.objects.create_user(username=name, password=password, **fields)
        welcome_grant_book(user=user)  # as registration does: every player starts with Quan
        _, raw = token_create(user=user)
        return user, raw

    return factory


class AsgiLiveServer:
    """The ASGI application (``chan_api.asgi``: Django inside the long-poll application) served
    by uvicorn in a thread of the test process, on the test database."""

    def __init__(self) -> None:
        import threading

        import uvicorn

        from chan_api.asgi import serving_stack

        config = uvicorn.Config(
            serving_stack(),
            host="127.0.0.1",
            port=0,
            lifespan="off",
            log_level="warning",
            timeout_keep_alive=30,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="asgi-live-server", daemon=True)

    def __enter__(self) -> AsgiLiveServer:
        import time

        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def asgi_live_server(transactional_db: None) -> Any:
    """The server's threads must not keep their connections past a request, or the test
    database could not be dropped at the end."""
    from django.db import connections

    settings_dict = connections.settings["default"]
    max_age = settings_dict["CONN_MAX_AGE"]
    settings_dict["CONN_MAX_AGE"] = 0
    try:
        with AsgiLiveServer() as server:
            yield server
    finally:
        settings_dict["CONN_MAX_AGE"] = max_age
