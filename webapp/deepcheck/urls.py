"""Routes of the deep check's page endpoints (the API's are in webapp/api/urls.py)."""

from __future__ import annotations

from django.urls import URLPattern, path

from webapp.deepcheck import views

urlpatterns: list[URLPattern] = [
    path("questions/<int:question_id>/deep-check", views.deep_check_start, name="deep-check-start"),
    path("questions/<int:question_id>/deep-check/stop", views.deep_check_stop, name="deep-check-stop"),
    path("questions/<int:question_id>/deep-check.json", views.deep_check_json, name="deep-check-json"),
    path("questions/<int:question_id>/deep-check/flags", views.claim_flag_create, name="deep-check-flag"),
]
