"""Structured logs: one JSON object a line in production, carrying the request id, the user, the
hand and its seq, and the latency; the clock sweep is quiet when it finds nothing."""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from chan_api.logs import QuietSweepFilter, formatter
from chan_api.middleware import new_request_id, request_id_for
from games.tasks import clock_sweep
from tests.games.conftest import make_player, players, start_hand  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """What the request logger writes, through the production formatter."""
    stream = io.StringIO()
    config = formatter("json")
    factory = config.pop("()")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(factory(**config))
    logger = logging.getLogger("chan.request")
    logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_production_logs_are_json() -> None:
    assert not settings.DEBUG
    assert settings.LOG_FORMAT == "json"
    assert settings.LOGGING["handlers"]["console"]["formatter"] == "structured"


def test_a_request_logs_one_json_line_with_its_id_user_hand_and_seq(
    players: Any,  # noqa: F811
    start_hand: Any,  # noqa: F811
    json_lines: io.StringIO,
) -> None:
    # Given a hand, when a player reads it
    hand_id = start_hand()["hand"]
    player = players[1]
    response = player.client.get(f"/api/v1/hands/{hand_id}", HTTP_X_REQUEST_ID="trace-0123456789")
    assert response.status_code == 200
    # then its JSON line tells who read which hand at which seq, under the request's id.
    line = lines(json_lines)[-1]
    assert line["event"] == "request"
    assert line["request_id"] == "trace-0123456789" == response["X-Request-ID"]
    assert line["method"] == "GET"
    assert line["path"] == f"/api/v1/hands/{hand_id}"
    assert line["status"] == 200
    assert line["user_id"] == player.id
    assert line["hand_id"] == hand_id
    assert line["seq"] == response.json()["seq"]
    assert line["latency_ms"] >= 0
    assert line["level"] == "info"
    assert line["timestamp"].endswith("Z")


def test_an_error_line_carries_the_id_of_its_problem(client, json_lines: io.StringIO) -> None:
    response = client.get("/api/v1/tables")  # no token
    assert response.status_code == 401
    (line,) = lines(json_lines)
    assert line["status"] == 401
    assert line["request_id"] == response.json()["request_id"] == response["X-Request-ID"]


def test_the_sweep_logs_at_debug_when_it_finds_nothing(caplog: Any) -> None:
    with caplog.at_level(logging.DEBUG, logger="games.tasks"):
        assert clock_sweep() == ([], [], [])
    (record,) = [r for r in caplog.records if r.name == "games.tasks"]
    assert record.levelno == logging.DEBUG


@pytest.mark.parametrize(
    ("logger", "msg", "args"),
    [
        (
            "celery.beat",
            "Scheduler: Sending due task %s (%s)",
            ("clock-sweep", "games.tasks.clock_sweep"),
        ),
        (
            "celery.beat",
            "Scheduler: Sending due task %s (%s)",
            ("arena-clock", "games.tasks.tournaments_sweep"),
        ),
        (
            "celery.worker.strategy",
            "Task %s[%s] received",
            ("games.tasks.tournaments_sweep", "2"),
        ),
        (
            "celery.app.trace",
            "Task %(name)s[%(id)s] succeeded",
            {"name": "games.tasks.tournaments_sweep", "id": "3"},
        ),
        (
            "celery.app.trace",
            "Task %(name)s[%(id)s] succeeded",
            {"name": "games.tasks.clock_sweep", "id": "1"},
        ),
    ],
)
def test_celery_info_lines_about_the_sweep_pass_only_at_debug(logger, msg, args) -> None:
    record = logging.LogRecord(
        logger, logging.INFO, __file__, 1, msg, (args,) if isinstance(args, dict) else args, None
    )
    quiet = QuietSweepFilter()
    target = logging.getLogger(logger)
    level = target.level
    try:
        target.setLevel(logging.INFO)
        assert not quiet.filter(record)
        target.setLevel(logging.DEBUG)
        assert quiet.filter(record)
    finally:
        target.setLevel(level)
    other = logging.LogRecord(
        logger, logging.INFO, __file__, 1, "Task games.tasks.hand_turn_due", (), None
    )
    assert quiet.filter(other)


def test_a_new_request_id_is_a_random_uuid4_in_hex() -> None:
    made = [new_request_id() for _ in range(2000)]
    assert len(set(made)) == len(made)
    for sent in made:
        parsed = uuid.UUID(hex=sent)
        assert (parsed.version, parsed.variant, parsed.hex) == (4, uuid.RFC_4122, sent)
    # every other bit varies
    ones = [sum(int(m, 16) >> i & 1 for m in made) for i in range(128)]
    fixed = {i for i, n in enumerate(ones) if n in (0, len(made))}
    assert fixed == {76, 77, 78, 79, 62, 63}  # the version's nibble, the variant's two bits
    # a tame id the client sent is kept; another is replaced
    assert request_id_for("abc-123.def") == "abc-123.def"
    assert request_id_for("no spaces please") != "no spaces please"


def test_the_beat_logs_json_and_not_its_every_few_seconds_sends(tmp_path) -> None:
    # Given the Procfile's beat, in production (JSON logs at INFO), its sweeps every half second,
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_VERSION", "DEBUG")}
    env.update(
        SECRET_KEY="beat-log-test",
        LOG_FORMAT="json",
        CHAN_SWEEP_SECONDS="0.5",
        CHAN_ARENA_SECONDS="0.5",
        CHAN_VAR_DIR=str(tmp_path),
    )
    celery = Path(sys.executable).parent / "celery"
    beat = subprocess.Popen(
        [celery, "-A", "chan_api.beat", "beat", "-l", "info", "--schedule", tmp_path / "s"],
        env=env,
        stdout=subprocess.DEVNULL,  # Celery's banner
        stderr=subprocess.PIPE,
        text=True,
    )
    # when it has sent its sweeps a few times over,
    time.sleep(4)
    beat.send_signal(signal.SIGTERM)
    _, err = beat.communicate(timeout=30)
    # then each of its log lines is a JSON object, and the sends are not logged at INFO.
    logged = [json.loads(line) for line in err.splitlines() if line.strip()]
    assert any(line["event"] == "beat: Starting..." for line in logged), err[-2000:]
    assert all(line["logger"].startswith("celery") for line in logged), err[-2000:]
    assert not [line for line in logged if "Sending due task" in line["event"]], err[-2000:]
