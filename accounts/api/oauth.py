"""OAuth 2 for third-party apps acting for a player (django-oauth-toolkit, under ``/oauth/``).

Only the authorization code grant with PKCE (S256) and refresh tokens: an app registered in the
admin sends the player to ``/oauth/authorize/``; the player signs in (``/oauth/login/``) and
consents on a page in Vietnamese or English; the app trades the code for an access token and a
refresh token at ``/oauth/token/`` and may revoke them at ``/oauth/revoke_token/``. The token's
scopes are the personal tokens' (accounts/scopes.py) except ``tokens``, and gate the same
endpoints. The server's metadata (RFC 8414) is at ``/.well-known/oauth-authorization-server``.
"""

from __future__ import annotations

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
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.scopes import BaseScopes
from oauthlib.oauth2.rfc6749 import errors as oauth_errors

from accounts import scopes

# The grants an app may use: nothing that hands a token to a client without the player's consent.
ALLOWED_GRANTS = frozenset({"authorization_code", "refresh_token"})
PAGE_LANGUAGES = ("vi", "en")


class ChanScopes(BaseScopes):
    """The scopes an app may ask for (all but ``tokens``), described in the active language."""

    def get_all_scopes(self) -> dict[str, str]:
        return {name: str(scopes.SCOPES[name]) for name in scopes.OAUTH_SCOPES}

    def get_available_scopes(self, application: Any = None, request: Any = None, *a: Any, **k: Any):
        return list(scopes.OAUTH_SCOPES)

    def get_default_scopes(self, application: Any = None, request: Any = None, *a: Any, **k: Any):
        return [scopes.READ]


class ChanOAuth2Validator(OAuth2Validator):
    """django-oauth-toolkit's validator, narrowed: only the code grant (``response_type=code``)
    and refreshing; a banned player's app gets no new token."""

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
        return user is not None and user.is_active and user.banned_at is None


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
