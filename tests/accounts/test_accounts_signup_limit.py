"""Sign-ups per client address (``CHAN_SIGNUPS_PER_ADDRESS_PER_DAY``, default 5 in any 24 hours):
each mints a welcome grant, so one address may not make accounts without end. The address is
the throttles' (``NUM_PROXIES``), counted in PostgreSQL under a lock, kept as an HMAC."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import User
from accounts.services import signup_address_digest, user_register
from core.errors import RateLimited

STRONG = "tam-van-cuu-sach-42"


@pytest.fixture(autouse=True)
def _quick_hashes(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def sign_up(name: str, address: str = "203.0.113.5", **headers: str):
    return APIClient().post(
        "/api/v1/auth/register",
        {"username": name, "password": STRONG},
        format="json",
        REMOTE_ADDR=address,
        **headers,
    )


@pytest.mark.django_db
def test_the_sixth_sign_up_from_one_address_in_a_day_is_refused(settings) -> None:
    assert settings.CHAN_SIGNUPS_PER_ADDRESS_PER_DAY == 5  # the default
    for n in range(5):
        assert sign_up(f"p{n}").status_code == 201
    r = sign_up("p5")
    assert r.status_code == 429
    assert r["Content-Type"].startswith("application/problem+json")
    assert r.json()["code"] == "signup_limit"
    assert 24 * 3600 - 60 <= int(r["Retry-After"]) <= 24 * 3600
    assert not User.objects.filter(username="p5").exists()
    # Another address still signs up.
    assert sign_up("p5", address="198.51.100.7").status_code == 201


@pytest.mark.django_db
def test_the_limit_is_a_rolling_24_hours(settings) -> None:
    settings.CHAN_SIGNUPS_PER_ADDRESS_PER_DAY = 2
    assert sign_up("a").status_code == 201
    assert sign_up("b").status_code == 201
    assert sign_up("c").status_code == 429
    # when the first sign-up is a day old, one more is allowed (and only one).
    User.objects.filter(username="a").update(
        created_at=User.objects.get(username="a").created_at - timedelta(hours=24, seconds=1)
    )
    assert sign_up("c").status_code == 201
    r = sign_up("d")
    assert r.status_code == 429 and int(r["Retry-After"]) > 23 * 3600


@pytest.mark.django_db
def test_behind_one_proxy_the_address_is_the_one_it_forwarded(settings) -> None:
    settings.CHAN_SIGNUPS_PER_ADDRESS_PER_DAY = 2
    proxy = "10.0.0.1"
    # Without a trusted proxy a client's own X-Forwarded-For changes nothing,
    assert sign_up("a", proxy, HTTP_X_FORWARDED_FOR="192.0.2.1").status_code == 201
    assert sign_up("b", proxy, HTTP_X_FORWARDED_FOR="192.0.2.2").status_code == 201
    assert sign_up("c", proxy, HTTP_X_FORWARDED_FOR="192.0.2.3").status_code == 429
    # while behind NUM_PROXIES=1 the address the proxy saw is the client's.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    forwarded = "198.51.100.1, 192.0.2.9"  # the last entry is the one our proxy added
    assert sign_up("c", proxy, HTTP_X_FORWARDED_FOR=forwarded).status_code == 201
    assert sign_up("d", proxy, HTTP_X_FORWARDED_FOR=forwarded).status_code == 201
    assert sign_up("e", proxy, HTTP_X_FORWARDED_FOR=forwarded).status_code == 429
    assert sign_up("e", proxy, HTTP_X_FORWARDED_FOR="192.0.2.10").status_code == 201
    assert User.objects.get(username="c").signup_address == signup_address_digest("192.0.2.9")


@pytest.mark.django_db
def test_the_address_is_kept_hashed_and_staff_find_it_in_the_admin(make_user) -> None:
    assert sign_up("lan", address="203.0.113.77").status_code == 201
    lan = User.objects.get(username="lan")
    assert len(lan.signup_address) == 64 and "203" not in lan.signup_address
    assert lan.signup_address == signup_address_digest("203.0.113.77")
    assert lan.signup_address != signup_address_digest("203.0.113.78")
    # Accounts made otherwise (staff, commands) have none and are not counted.
    boss, _ = make_user(username="boss", is_staff=True, is_superuser=True)
    assert boss.signup_address == ""
    client = Client()
    client.force_login(boss)
    page = client.get(f"/admin/accounts/user/{lan.pk}/change/")
    assert lan.signup_address.encode() in page.content

    # Searching the users for the address finds the accounts it made, and only those.
    def listed(query: str) -> list[str]:
        page = client.get("/admin/accounts/user/", {"q": query})
        return [user.username for user in page.context["cl"].result_list]

    assert listed("203.0.113.77") == ["lan"]
    assert listed("203.0.113.78") == []


@pytest.mark.django_db(transaction=True)
def test_concurrent_sign_ups_from_one_address_do_not_pass_the_limit(settings) -> None:
    settings.CHAN_SIGNUPS_PER_ADDRESS_PER_DAY = 3
    attempts = 8
    barrier = threading.Barrier(attempts)
    outcomes: list[str] = []

    def one(n: int) -> None:
        try:
            barrier.wait(10)
            user_register(username=f"racer{n}", password=STRONG, address="203.0.113.5")
            outcomes.append("created")
        except RateLimited as exc:
            outcomes.append(exc.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(n,)) for n in range(attempts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(outcomes) == ["created"] * 3 + ["signup_limit"] * 5
    assert User.objects.filter(signup_address=signup_address_digest("203.0.113.5")).count() == 3


ROOT = Path(__file__).resolve().parents[2]
PRINT_LIMIT = "import chan_api.settings as s; print(s.CHAN_SIGNUPS_PER_ADDRESS_PER_DAY)"


def signup_limit_with(tmp_path, **env: str) -> int:
    """The limit as a server started with ``env`` (and nothing else) reads it."""
    clean = {
        "PATH": os.environ.get("PATH", ""),
        "CHAN_VAR_DIR": str(tmp_path),
        "DATABASE_URL": "postgres://nobody@db.invalid/none",  # never contacted
        "CHAN_RECORD_KEY": "k1:" + "A" * 43 + "=",  # (a production server needs one)
        **env,
    }
    result = subprocess.run(
        [sys.executable, "-c", PRINT_LIMIT],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return int(result.stdout.splitlines()[-1])


def test_a_development_server_lifts_the_limit_and_production_keeps_it(tmp_path) -> None:
    # make run (DEBUG) signs up the documented examples' players again and again: no limit,
    assert signup_limit_with(tmp_path, DEBUG="1") == 0
    # production keeps five a day,
    assert signup_limit_with(tmp_path, SECRET_KEY="a-production-secret") == 5
    # and an operator's own figure wins in either.
    assert signup_limit_with(tmp_path, DEBUG="1", CHAN_SIGNUPS_PER_ADDRESS_PER_DAY="3") == 3
    assert signup_limit_with(tmp_path, SECRET_KEY="s", CHAN_SIGNUPS_PER_ADDRESS_PER_DAY="0") == 0
