"""Locking out brute force on the admin login (django-axes): after ``AXES_FAILURE_LIMIT`` wrong
passwords for one username from one address within ``AXES_COOLOFF_TIME``, the admin login
answers 429 until the cool-off ends, and the attempts are logged in the admin.

Axes watches the admin site only: the API's ``/auth/token`` keeps its own throttle and calls
``authenticate`` without a request, which these subclasses let through untouched (plain axes
would refuse such a call, and log an error for every wrong API password).
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler


class AdminLoginLockoutBackend(AxesStandaloneBackend):
    def authenticate(self, request: Any, username: Any = None, password: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
        if request is None:  # the API's token login, not the admin site
            return None
        return super().authenticate(request, username=username, password=password, **kw)


class AdminLoginHandler(AxesDatabaseHandler):
    def user_login_failed(self, sender: Any, credentials: dict, request: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
        if request is None:  # the API's token login: its own throttle counts it
            return None
        return super().user_login_failed(sender, credentials, request, **kw)
