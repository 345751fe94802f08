"""Brute force on the admin login is locked out (django-axes); the API's login is not touched."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def admin_login(client: Client, username: str, password: str):
    return client.post("/admin/login/?next=/admin/", {"username": username, "password": password})


def test_ten_wrong_admin_passwords_lock_the_username_and_address_out(make_user) -> None:
    make_user(username="boss", password="right-horse-battery", is_staff=True, is_superuser=True)
    client = Client(REMOTE_ADDR="203.0.113.9")
    # Ten wrong passwords are answered with the login form again,
    for _ in range(10):
        assert admin_login(client, "boss", "wrong").status_code in (200, 429)
    # and then even the right password is refused for a while (429), and the attempts are kept.
    assert admin_login(client, "boss", "right-horse-battery").status_code == 429
    from axes.models import AccessAttempt

    assert AccessAttempt.objects.filter(username="boss", ip_address="203.0.113.9").exists()
    # Another address is not locked out.
    other = Client(REMOTE_ADDR="198.51.100.7")
    assert admin_login(other, "boss", "right-horse-battery").status_code == 302


def test_nine_wrong_then_the_right_password_logs_in(make_user) -> None:
    make_user(username="boss", password="right-horse-battery", is_staff=True, is_superuser=True)
    client = Client(REMOTE_ADDR="203.0.113.10")
    for _ in range(9):
        assert admin_login(client, "boss", "wrong").status_code == 200
    assert admin_login(client, "boss", "right-horse-battery").status_code == 302


def test_the_api_token_login_is_not_counted_by_the_admin_lockout(api_client, make_user) -> None:
    make_user(username="lan", password="right-horse-battery")
    for _ in range(12):
        r = api_client.post(
            "/api/v1/auth/token", {"username": "lan", "password": "wrong"}, format="json"
        )
        assert r.status_code == 401
    r = api_client.post(
        "/api/v1/auth/token", {"username": "lan", "password": "right-horse-battery"}, format="json"
    )
    assert r.status_code == 201
