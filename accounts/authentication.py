"""Bearer-token authentication (placeholder until the accounts work lands)."""

from rest_framework.authentication import BaseAuthentication


class BearerTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):  # type: ignore[no-untyped-def]
        return None

    def authenticate_header(self, request):  # type: ignore[no-untyped-def]
        return 'Bearer realm="api"'
