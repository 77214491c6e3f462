"""Routes of the account pages of the site's own (sign-in and password change are Django's, in webapp/urls.py)."""

from __future__ import annotations

from django.urls import URLPattern, path

from webapp.accounts import views

urlpatterns: list[URLPattern] = [
    path("accounts/api-token/", views.api_token_page, name="account-api-token"),
    path("accounts/api-token/new", views.api_token_new, name="account-api-token-new"),
    path("accounts/api-token/revoke", views.api_token_delete, name="account-api-token-revoke"),
]
