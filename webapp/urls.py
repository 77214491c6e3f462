"""Top-level URL routes."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from webapp.ops.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/", include("webapp.api.urls")),
    path("review/", include("webapp.review.urls")),
    path("index/", include("webapp.corpus.urls")),
    path("", include("webapp.qa.urls")),
]
