"""Routes of the index pages (under /index/)."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from webapp.corpus import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.index_status, name="index-status"),
    path("jobs/new", views.index_job_new, name="index-job-new"),
    path("jobs/<int:job_id>/", views.index_job_page, name="index-job"),
    path("jobs/<int:job_id>.json", views.index_job_json, name="index-job-json"),
    path("jobs/<int:job_id>/cancel", views.index_job_cancel_view, name="index-job-cancel"),
]
