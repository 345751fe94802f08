"""One lockout for both doors of a password (django-axes, chan_api/admin_lockout.py): failures
at ``/admin/login/`` and ``POST /api/v1/auth/token`` count together, per username and per
address; a locked account or address gets no token and no session."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

PASSWORD = "right-horse-battery"
ATTACKER = "203.0.113.9"


@pytest.fixture(autouse=True)
def _fresh_throttle_counts_and_quick_hashes(settings) -> None:
    cache.clear()
    # Dozens of logins a test: a quick hasher (the lockout does not depend on it).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def admin_login(client: Client, username: str, password: str):
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password})


def api_login(username: str, password: str, address: str = ATTACKER, **headers: str):
    return APIClient().post(
        "/api/v1/auth/token",
        {"username": username, "password": password},
        format="json",
        REMOTE_ADDR=address,
        **headers,
    )


def assert_locked(response) -> None:
    assert response.status_code == 429, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "account_locked"
    assert int(response["Retry-After"]) == 15 * 60
    assert "token" not in response.json()


@pytest.fixture
def boss(make_user):
    user, _ = make_user(username="boss", password=PASSWORD, is_staff=True, is_superuser=True)
    return user


def test_ten_wrong_admin_passwords_lock_the_account_out_of_both_doors(boss) -> None:
    client = Client(REMOTE_ADDR=ATTACKER)
    # Ten wrong passwords are answered with the login form again (the tenth with the lockout),
    for _ in range(10):
        assert admin_login(client, "boss", "wrong").status_code in (200, 429)
    # and then even the right password is refused for a while (429), and the attempts are kept.
    locked = admin_login(client, "boss", PASSWORD)
    assert locked.status_code == 429 and int(locked["Retry-After"]) == 15 * 60
    assert "_auth_user_id" not in client.session
    assert AccessAttempt.objects.filter(username="boss", ip_address=ATTACKER).exists()
    # The API's login does not hand out a token for the locked account either, from anywhere:
    assert_locked(api_login("boss", PASSWORD))
    assert_locked(api_login("boss", PASSWORD, address="198.51.100.7"))
    # nor does the admin from another address.
    assert admin_login(Client(REMOTE_ADDR="198.51.100.7"), "boss", PASSWORD).status_code == 429


def test_failures_at_both_doors_add_up_and_the_locked_account_gets_no_session(boss) -> None:
    client = Client(REMOTE_ADDR=ATTACKER)
    for _ in range(5):
        assert admin_login(client, "boss", "wrong").status_code == 200
    for _ in range(4):
        assert api_login("boss", "wrong").status_code == 401
    # The tenth failure, at the API, locks the account: at both doors.
    assert_locked(api_login("boss", "wrong"))
    assert_locked(api_login("boss", PASSWORD))
    other = Client(REMOTE_ADDR="198.51.100.7")
    assert admin_login(other, "boss", PASSWORD).status_code == 429
    assert "_auth_user_id" not in other.session


def test_one_address_is_locked_out_across_usernames(make_user) -> None:
    make_user(username="lan", password=PASSWORD)
    # given ten wrong guesses from one address, each at another username,
    for n in range(9):
        assert api_login(f"guess{n}", "wrong").status_code == 401
    assert_locked(api_login("guess9", "wrong"))
    # then that address gets no token even for a real account with its right password,
    assert_locked(api_login("lan", PASSWORD))
    assert admin_login(Client(REMOTE_ADDR=ATTACKER), "lan", PASSWORD).status_code == 429
    # while the owner, from its own address, logs in.
    assert api_login("lan", PASSWORD, address="198.51.100.7").status_code == 201


def test_after_the_cool_off_the_account_logs_in_again(boss) -> None:
    for _ in range(10):
        api_login("boss", "wrong")
    assert_locked(api_login("boss", PASSWORD))
    # when the cool-off has passed since the last attempt,
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=15, seconds=1)
    )
    # the right password gets a token again, and the failures are forgotten.
    assert api_login("boss", PASSWORD).status_code == 201
    assert not AccessAttempt.objects.exists()


def test_staff_unlock_an_account_with_axes_reset_username(boss) -> None:
    for _ in range(10):
        api_login("boss", "wrong")
    assert_locked(api_login("boss", PASSWORD))
    call_command("axes_reset_username", "boss")
    assert api_login("boss", PASSWORD).status_code == 201


def test_nine_wrong_then_the_right_password_logs_in_and_resets_the_count(boss) -> None:
    client = Client(REMOTE_ADDR="203.0.113.10")
    for _ in range(9):
        assert admin_login(client, "boss", "wrong").status_code == 200
    assert admin_login(client, "boss", PASSWORD).status_code == 302
    # The count starts again: nine more failures (at the API this time) do not lock it.
    for _ in range(9):
        assert api_login("boss", "wrong", address="203.0.113.10").status_code == 401
    assert api_login("boss", PASSWORD, address="203.0.113.10").status_code == 201
    assert not AccessAttempt.objects.exists()


def test_a_token_login_opens_no_session_and_is_in_the_access_log(boss) -> None:
    from axes.models import AccessLog

    r = api_login("boss", PASSWORD)
    assert r.status_code == 201 and "sessionid" not in r.cookies
    assert AccessLog.objects.filter(username="boss", ip_address=ATTACKER).exists()


def test_signing_in_to_ones_own_account_does_not_reset_guesses_at_another(make_user) -> None:
    make_user(username="lan", password=PASSWORD)
    make_user(username="mallory", password="mallory-own-pass-1")
    # given nine guesses at lan from the attacker's address,
    for _ in range(9):
        assert api_login("lan", "wrong").status_code == 401
    # a login to the attacker's own account from there does not forget them:
    assert api_login("mallory", "mallory-own-pass-1").status_code == 201
    assert_locked(api_login("lan", "wrong"))


def test_the_address_is_the_throttles_one(make_user, settings) -> None:
    make_user(username="lan", password=PASSWORD)
    # A client rotating its own X-Forwarded-For is still one address (NUM_PROXIES=0),
    for n in range(10):
        api_login(f"guess{n}", "wrong", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
    assert_locked(api_login("lan", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.200"))
    # and behind one proxy (NUM_PROXIES=1) the address it saw is the client's.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    r = api_login("lan", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.200")
    assert r.status_code == 201, r.content
    assert not AccessAttempt.objects.filter(ip_address__startswith="192.0.2.").exists()


def test_a_failed_api_login_logs_nothing_at_error(make_user, caplog) -> None:
    make_user(username="lan", password=PASSWORD)
    with caplog.at_level(logging.INFO):
        assert api_login("lan", "wrong").status_code == 401
        assert api_login("nobody", "wrong").status_code == 401
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    # and the failure was counted (axes logged it below ERROR).
    assert AccessAttempt.objects.filter(username="lan").get().failures_since_start == 1
