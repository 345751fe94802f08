"""Root URLs: the versioned API, its OpenAPI schema and docs, and the admin."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("accounts.api.urls")),
    path("api/v1/", include("games.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
]

handler400 = "chan_api.problems.bad_request_page"
handler404 = "chan_api.problems.page_not_found"
handler500 = "chan_api.problems.server_error"
