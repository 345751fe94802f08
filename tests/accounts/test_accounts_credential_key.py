"""A personal token and an OAuth access token may share an id (two sequences): per-token
budgets (the long polls' waiting slots) key them apart."""

from __future__ import annotations

from oauth2_provider.models import AccessToken

from accounts.authentication import credential_key
from accounts.models import ApiToken


def test_a_personal_and_an_oauth_token_with_one_id_are_two_credentials() -> None:
    personal, oauth = ApiToken(pk=5), AccessToken(pk=5)
    assert credential_key(personal) == "t5"
    assert credential_key(oauth) == "o5"
    assert credential_key(None) is None
