"""Top-level URL routes."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from webapp.ops.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    # Django's sign-in and password-change pages, under its own names, but not its password-reset ones: the site
    # sends no mail, so a reset link could never arrive.
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password_change/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password_change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("", include("webapp.accounts.urls")),
    path("api/", include("webapp.api.urls")),
    path("review/", include("webapp.review.urls")),
    path("index/", include("webapp.corpus.urls")),
    path("", include("webapp.watch.urls")),
    path("", include("webapp.deepcheck.urls")),
    path("", include("webapp.library.urls")),
    path("", include("webapp.pages.urls")),
    path("", include("webapp.qa.urls")),
]

# JSON under /api/, the site's own pages elsewhere (webapp/api/errors.py).
handler400 = "webapp.api.errors.bad_request"
handler404 = "webapp.api.errors.page_not_found"
