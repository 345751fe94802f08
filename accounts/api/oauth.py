"""OAuth 2 for third-party apps acting for a player (django-oauth-toolkit, under ``/oauth/``).

Only the authorization code grant with PKCE (S256) and refresh tokens: an app registered in the
admin sends the player to ``/oauth/authorize/``; the player signs in (``/oauth/login/``) and
consents on a page in Vietnamese or English; the app trades the code for an access token and a
refresh token at ``/oauth/token/`` and may revoke them at ``/oauth/revoke_token/``. The token's
scopes are the personal tokens' (accounts/scopes.py) except ``limits`` and ``tokens``, and gate
the same endpoints. The server's metadata (RFC 8414) is at
``/.well-known/oauth-authorization-server``.

Redirect URIs follow accounts/redirect_uris.py (``https``, or ``http`` to a loopback address). A
code presented a second time is refused and revokes every token issued from it (RFC 6749
§4.1.2).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import forms
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.urls import path, reverse, reverse_lazy
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from oauth2_provider import views as oauth_views
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import get_grant_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.scopes import BaseScopes
from oauthlib.oauth2.rfc6749 import errors as oauth_errors

from accounts import scopes
from accounts.redirect_uris import redirect_uri_allowed
from accounts.services import oauth_code_reuse_revoke, oauth_code_spend

# The grants an app may use: nothing that hands a token to a client without the player's consent.
ALLOWED_GRANTS = frozenset({"authorization_code", "refresh_token"})
PAGE_LANGUAGES = ("vi", "en")


def _refuse_personal_scopes(granted: Iterable[str], request: Any) -> None:
    """``invalid_scope`` if ``granted`` holds a scope no app is ever given (``limits``,
    ``tokens``): a grant or a token from before that rule is not honoured."""
    if kept := sorted(set(granted) & scopes.PERSONAL_ONLY):
        raise oauth_errors.InvalidScopeError(
            description=f"An app is never granted {', '.join(kept)}; ask the player again.",
            request=request,
        )


class _CodeSpentMeanwhile(Exception):
    """Another exchange of the same code spent it while this one was issuing tokens."""


class _CodeSpent(oauth_errors.InvalidGrantError):
    """``invalid_grant`` for a code another exchange spent meanwhile. Raised after validation,
    where oauthlib adds no headers of its own: these are the ones it gives a token response."""

    @property
    def headers(self) -> dict[str, str]:
        return {
            "Content-Type": "application/json",
            "Cache-Control": "no-store",
            "Pragma": "no-cache",
        }


class ChanScopes(BaseScopes):
    """The scopes an app may ask for (all but ``limits`` and ``tokens``), described in the
    active language."""

    def get_all_scopes(self) -> dict[str, str]:
        return {name: str(scopes.SCOPES[name]) for name in scopes.OAUTH_SCOPES}

    def get_available_scopes(self, application: Any = None, request: Any = None, *a: Any, **k: Any):
        return list(scopes.OAUTH_SCOPES)

    def get_default_scopes(self, application: Any = None, request: Any = None, *a: Any, **k: Any):
        return [scopes.READ]


class ChanOAuth2Validator(OAuth2Validator):
    """django-oauth-toolkit's validator, narrowed: only the code grant (``response_type=code``)
    and refreshing; a banned player's app gets no new token; no grant or refresh carries a
    personal-only scope; redirects go to ``https`` or a loopback ``http`` only; a code works
    once, and presenting it again revokes what it gave."""

    def validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        if grant_type not in ALLOWED_GRANTS:
            return False
        return super().validate_grant_type(client_id, grant_type, client, request, *args, **kwargs)

    def validate_response_type(self, client_id, response_type, client, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        if response_type != "code":
            return False
        return super().validate_response_type(
            client_id, response_type, client, request, *args, **kwargs
        )

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            return False
        user = request.user
        if user is None or not user.is_active or user.banned_at is not None:
            return False
        original = self.get_original_scopes(refresh_token, request)
        _refuse_personal_scopes(
            original.split() if isinstance(original, str) else original, request
        )
        return True

    def validate_redirect_uri(self, client_id, redirect_uri, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        return redirect_uri_allowed(redirect_uri) and super().validate_redirect_uri(
            client_id, redirect_uri, request, *args, **kwargs
        )

    def get_default_redirect_uri(self, client_id, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        """The app's first registered URI when the request names none, if it may be used
        (oauthlib does not pass a default through ``validate_redirect_uri``)."""
        uri = super().get_default_redirect_uri(client_id, request, *args, **kwargs)
        return uri if uri and redirect_uri_allowed(uri) else None

    def validate_code(self, client_id, code, client, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not super().validate_code(client_id, code, client, request, *args, **kwargs):
            # A code already traded: refused, and what it gave is revoked (RFC 6749 §4.1.2).
            oauth_code_reuse_revoke(code=code, application=client)
            return False
        _refuse_personal_scopes(request.scopes, request)
        return True

    def _spent_meanwhile(self, request: Any) -> oauth_errors.InvalidGrantError:
        """Another exchange of this code got there first: this one issues nothing, and what the
        other issued came from a code presented twice, so it is revoked as for any reuse."""
        oauth_code_reuse_revoke(code=request.code, application=request.client)
        return _CodeSpent(request=request)

    def get_code_challenge(self, code, request):  # type: ignore[no-untyped-def]
        try:
            return super().get_code_challenge(code, request)
        except get_grant_model().DoesNotExist:
            raise self._spent_meanwhile(request) from None

    def get_code_challenge_method(self, code, request):  # type: ignore[no-untyped-def]
        try:
            return super().get_code_challenge_method(code, request)
        except get_grant_model().DoesNotExist:
            raise self._spent_meanwhile(request) from None

    def confirm_redirect_uri(self, client_id, code, redirect_uri, client, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return super().confirm_redirect_uri(
                client_id, code, redirect_uri, client, request, *args, **kwargs
            )
        except get_grant_model().DoesNotExist:
            raise self._spent_meanwhile(request) from None

    def save_bearer_token(self, token, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return super().save_bearer_token(token, request, *args, **kwargs)
        except _CodeSpentMeanwhile:  # rolled back
            raise self._spent_meanwhile(request) from None

    def _save_bearer_token(self, token, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        """For a code's exchange, the code is spent in the tokens' transaction: of two exchanges
        of one code, the second waits on the first's delete of the grant, then finds nothing and
        rolls back; the spent code is remembered with the tokens' family."""
        if request.grant_type != "authorization_code":
            return super()._save_bearer_token(token, request, *args, **kwargs)
        grants = get_grant_model().objects.filter(code=request.code, application=request.client)
        if not grants.delete()[0]:
            raise _CodeSpentMeanwhile
        super()._save_bearer_token(token, request, *args, **kwargs)
        oauth_code_spend(
            code=request.code,
            application=request.client,
            token_family=getattr(request, "chan_token_family", None),
        )

    def _create_refresh_token(
        self, request, refresh_token_code, access_token, previous_refresh_token
    ):  # type: ignore[no-untyped-def]
        refresh = super()._create_refresh_token(
            request, refresh_token_code, access_token, previous_refresh_token
        )
        request.chan_token_family = refresh.token_family
        return refresh

    def invalidate_authorization_code(self, client_id, code, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        """Nothing left to do: the code was spent with the tokens (``_save_bearer_token``)."""


class PageLanguageMixin:
    """``?lang=vi`` or ``?lang=en`` picks the page's language (as the replay viewer does);
    otherwise the browser's Accept-Language (LocaleMiddleware)."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        lang = request.GET.get("lang")
        if lang in PAGE_LANGUAGES:
            with translation.override(lang):
                request.LANGUAGE_CODE = lang
                response = super().dispatch(request, *args, **kwargs)  # type: ignore[misc]
                if hasattr(response, "render"):
                    response.render()
                return response
        return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]


class PlayerLoginForm(AuthenticationForm):
    """The players' sign-in for the consent page: a banned player or a server bot cannot sign in
    to give an app access."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "banned": _("This player is banned."),
    }

    def confirm_login_allowed(self, user: Any) -> None:
        super().confirm_login_allowed(user)
        if user.banned_at is not None or user.is_bot:
            raise forms.ValidationError(self.error_messages["banned"], code="banned")


class OAuthLoginView(PageLanguageMixin, auth_views.LoginView):
    template_name = "oauth/login.html"
    form_class = PlayerLoginForm
    redirect_authenticated_user = False


class OAuthLogoutView(auth_views.LogoutView):
    """ "Not you?" on the consent page: sign out, then back to the same authorization request
    (``next``), which asks for a sign-in again."""

    def get_default_redirect_url(self) -> str:
        return reverse("oauth-login")


class ConsentView(PageLanguageMixin, oauth_views.AuthorizationView):
    """The consent page: which app, which scopes (described), allow or refuse."""

    template_name = "oauth/authorize.html"
    login_url = reverse_lazy("oauth-login")

    def validate_authorization_request(self, request: Any) -> tuple[list[str], dict[str, Any]]:
        """PKCE with S256 only: a ``plain`` challenge is refused before the page is shown
        (django-oauth-toolkit would refuse it only once the player consented)."""
        found_scopes, credentials = super().validate_authorization_request(request)
        if credentials.get("code_challenge_method") != "S256":
            raise OAuthToolkitError(
                error=oauth_errors.UnsupportedCodeChallengeMethodError(
                    description="PKCE needs code_challenge_method=S256.",
                    state=credentials.get("state"),
                ),
                redirect_uri=credentials.get("redirect_uri"),
            )
        return found_scopes, credentials

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["lang"] = translation.get_language()
        context["scope_items"] = list(
            zip(context.get("scopes", []), context.get("scopes_descriptions", []), strict=False)
        )
        return context


app_name = "oauth2_provider"
# Under /oauth/ (chan_api/urls.py); the names are django-oauth-toolkit's, which its metadata
# view reverses. No implicit, device, introspection or app-management views.
urlpatterns = [
    path("authorize/", ConsentView.as_view(), name="authorize"),
    path("token/", oauth_views.TokenView.as_view(), name="token"),
    path("revoke_token/", oauth_views.RevokeTokenView.as_view(), name="revoke-token"),
]
login_urlpatterns = [
    path("oauth/login/", OAuthLoginView.as_view(), name="oauth-login"),
    path("oauth/logout/", OAuthLogoutView.as_view(), name="oauth-logout"),
]
