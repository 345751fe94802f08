"""The demo_players management command."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from accounts.selectors import user_by_token

pytestmark = pytest.mark.django_db


def run(*args: str) -> dict[str, str]:
    out = StringIO()
    call_command("demo_players", *args, stdout=out)
    lines = [line.split() for line in out.getvalue().splitlines()]
    return {name: token for name, token in lines}


def test_demo_players_is_idempotent_and_prints_working_tokens(settings):
    settings.DEBUG = True
    first = run()
    second = run()
    assert list(first) == ["demo1", "demo2", "demo3", "demo4"]
    assert list(second) == list(first)
    assert User.objects.filter(username__startswith="demo").count() == 4
    for name in first:
        assert first[name] != second[name]
        for token in (first[name], second[name]):
            user, _ = user_by_token(token)
            assert user.username == name
    assert User.objects.get(username="demo1").check_password("chan-demo-pass")


def test_demo_players_takes_the_password_from_the_environment(settings, monkeypatch):
    settings.DEBUG = True
    run()
    monkeypatch.setenv("DEMO_PASSWORD", "another-demo-secret")
    run()
    assert User.objects.get(username="demo3").check_password("another-demo-secret")


def test_demo_players_refuses_without_debug_unless_forced(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError):
        run()
    assert not User.objects.exists()
    assert len(run("--force")) == 4
