from django.urls import path

from transparency.api.views import LogConsistencyApi, LogHeadApi, LogInclusionApi, LogKeyApi

urlpatterns = [
    path("log/head", LogHeadApi.as_view(), name="log-head"),
    path("log/key", LogKeyApi.as_view(), name="log-key"),
    path("log/proof/consistency", LogConsistencyApi.as_view(), name="log-consistency"),
    path("log/proof/inclusion", LogInclusionApi.as_view(), name="log-inclusion"),
]
