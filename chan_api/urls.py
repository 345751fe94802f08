"""Root URLs: the versioned API, its OpenAPI schema and docs, the admin, the web client (/play/),
health and metrics."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from oauth2_provider.views import OAuthServerMetadataView

from accounts.api import oauth
from chan_api.api_root import ApiRootApi, site_root
from chan_api.docs_pages import OfflineRedocView, redoc_bundle
from chan_api.favicon import favicon
from chan_api.health import healthz, readyz
from chan_api.metrics_view import metrics_view
from play.views import play_page

urlpatterns = [
    path("", site_root, name="root"),
    path("admin/", admin.site.urls),
    path("play/", play_page, name="play"),
    path("api/v1/", ApiRootApi.as_view(), name="api-root"),
    path("api/v1/", include("accounts.api.urls")),
    path("api/v1/", include("games.api.urls")),
    path("api/v1/", include("transparency.api.urls")),
    # OAuth 2 for third-party apps (accounts/api/oauth.py; docs/api.md "OAuth").
    path("oauth/", include((oauth.urlpatterns, oauth.app_name))),
    *oauth.login_urlpatterns,
    path(
        ".well-known/oauth-authorization-server",
        OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", OfflineRedocView.as_view(url_name="schema"), name="redoc"),
    path("api/redoc/redoc.standalone.js", redoc_bundle, name="redoc-bundle"),
    path("favicon.ico", favicon, name="favicon"),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
]

handler400 = "chan_api.problems.bad_request_page"
handler404 = "chan_api.problems.page_not_found"
handler500 = "chan_api.problems.server_error"
