"""One lockout for both doors of a password (django-axes): the admin login and the API's
``POST /auth/token`` count their failures together, per account and per client address. After
``AXES_FAILURE_LIMIT`` failures for one username (from any address), or from one address (for
any usernames), within ``AXES_COOLOFF_TIME``, both doors refuse it, the right password too, with
429 until the cool-off ends: the admin with a line of text, the API with an ``account_locked``
problem (``accounts.services.user_authenticate``). The attempts are listed in the admin
("Access attempts"); staff unlock with ``manage.py axes_reset_username`` or by deleting them
there (docs/operations.md).

The address is the throttles' (``chan_api.throttles.client_address``: ``NUM_PROXIES``), never
django-ipware's own reading of ``X-Forwarded-For``.

``authenticate()`` without a request (a management command, a test client's ``login``) is
neither checked nor counted, and logs nothing: both doors of the server pass the request.
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.conf import settings
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_credentials, get_lockout_message
from axes.models import AccessAttempt, AccessLog
from django.http import HttpResponse

from chan_api.problems import PROBLEM_CONTENT_TYPE


class LoginLockoutBackend(AxesStandaloneBackend):
    """Refuses a locked-out username or address before any password is checked."""

    def authenticate(self, request: Any, username: Any = None, password: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
        if request is None:  # a command or a test client's login(): no door, no lockout
            return None
        return super().authenticate(request, username=username, password=password, **kw)


class LoginLockoutHandler(AxesDatabaseHandler):
    """Axes' database handler, with a token login recorded without a session and a success
    that resets its own username's failures from its own address only."""

    def user_login_failed(self, sender: Any, credentials: dict, request: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
        if request is None:  # see LoginLockoutBackend
            return None
        return super().user_login_failed(sender, credentials, request, **kw)

    def user_logged_in(self, sender: Any, request: Any, user: Any, **kw: Any):  # type: ignore[no-untyped-def]
        if request is None:
            return None
        if not kw.get("token_login"):  # the admin's session login
            return super().user_logged_in(sender, request, user, **kw)
        # The API's token login: axes would open a session only to hash its key into the log.
        credentials = get_credentials(user.get_username())
        self.clean_expired_user_attempts(request, credentials)
        if not settings.AXES_DISABLE_ACCESS_LOG:
            AccessLog.objects.create(
                username=user.get_username(),
                ip_address=request.axes_ip_address,
                user_agent=request.axes_user_agent,
                http_accept=request.axes_http_accept,
                path_info=request.axes_path_info,
                attempt_time=request.axes_attempt_time,
                session_hash="",
            )
        if settings.AXES_RESET_ON_SUCCESS:
            self.reset_user_attempts(request, credentials)
        return None

    def reset_user_attempts(self, request: Any, credentials: dict | None = None) -> int:
        """A success forgets this username's failures from this address, as before. Not all of
        the address's failures (axes' default with a per-address parameter): else a guesser
        could sign in to its own account every nine guesses and never be locked out."""
        username = get_client_username(request, credentials)
        attempts = AccessAttempt.objects.filter(
            username=username, ip_address=request.axes_ip_address
        )
        count, _ = attempts.delete()
        return count


def lockout_response(
    request: Any, original_response: HttpResponse | None, credentials: Any = None
) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: the API's refusal is already an ``account_locked`` problem
    (with ``Retry-After``) and stays as it is; the admin login gets a line of text and 429."""
    if original_response is not None and original_response.get("Content-Type", "").startswith(
        PROBLEM_CONTENT_TYPE
    ):
        return original_response
    from accounts.services import login_lockout_seconds  # the app, loaded after this module

    response = HttpResponse(get_lockout_message(), status=429, content_type="text/plain")
    response["Retry-After"] = str(login_lockout_seconds())
    return response
