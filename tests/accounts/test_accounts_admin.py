"""The admin pages for users and tokens render, and never show a token hash."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import ApiToken, User
from accounts.services import token_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client() -> Client:
    admin = User.objects.create_superuser(username="admin", password="x")
    client = Client()
    client.force_login(admin)
    return client


def test_user_admin_pages_render(staff_client):
    user = User.objects.create_user(username="lan", display_name="Lan")
    assert staff_client.get("/admin/accounts/user/").status_code == 200
    page = staff_client.get(f"/admin/accounts/user/{user.pk}/change/")
    assert page.status_code == 200
    assert b"display_name" in page.content


def test_token_admin_is_read_only_and_hides_the_hash(staff_client):
    token, raw = token_create(user=User.objects.create_user(username="lan"))
    listing = staff_client.get("/admin/accounts/apitoken/")
    detail = staff_client.get(f"/admin/accounts/apitoken/{token.pk}/change/")
    assert listing.status_code == detail.status_code == 200
    for page in (listing, detail):
        assert token.key_hash.encode() not in page.content
        assert raw.encode() not in page.content
    assert staff_client.get("/admin/accounts/apitoken/add/").status_code == 403


def test_token_admin_revoke_action(staff_client):
    token, _ = token_create(user=User.objects.create_user(username="lan"))
    staff_client.post(
        "/admin/accounts/apitoken/",
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None


@pytest.mark.parametrize(
    "url",
    [
        "/admin/accounts/apitoken/?key_hash__startswith=a",
        "/admin/accounts/apitoken/?key_hash=0",
        "/admin/accounts/user/?password__startswith=pbkdf2",
    ],
)
def test_hashes_cannot_be_probed_with_changelist_filters(staff_client, url):
    token_create(user=User.objects.create_user(username="lan", password="a-long-password-1"))
    assert staff_client.get(url).status_code == 400
    assert staff_client.get("/admin/accounts/apitoken/?revoked_at__isnull=True").status_code == 200
