"""The demo_players management command."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
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


class CountingHasher(PBKDF2PasswordHasher):
    """Django's PBKDF2 hasher (few iterations), counting the hashes it makes and checks."""

    algorithm = "counting_pbkdf2"
    iterations = 1000
    made = 0
    checked = 0

    def salt(self):  # each new hash draws a salt; a check does not
        CountingHasher.made += 1
        return super().salt()

    def verify(self, password, encoded):
        CountingHasher.checked += 1
        return super().verify(password, encoded)


def test_the_shared_password_is_hashed_once_and_checked_once(settings):
    # make run runs the command at every start: four hashes of one password cost seconds.
    settings.DEBUG = True
    settings.PASSWORD_HASHERS = [f"{__name__}.CountingHasher"]
    CountingHasher.made = CountingHasher.checked = 0
    run()
    assert (CountingHasher.made, CountingHasher.checked) == (1, 0)
    hashes = set(
        User.objects.filter(username__startswith="demo").values_list("password", flat=True)
    )
    assert len(hashes) == 1
    run()
    assert (CountingHasher.made, CountingHasher.checked) == (1, 1)
    for name in ("demo1", "demo4"):
        assert User.objects.get(username=name).check_password("chan-demo-pass")
