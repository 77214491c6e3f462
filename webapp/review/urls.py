"""Routes of the review pages."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from webapp.review import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("", views.review_queue, name="review-queue"),
    path("questions/<int:question_id>/flags", views.flag_create, name="flag-create"),
    path("flags/<int:flag_id>/", views.flag_page, name="review-flag"),
    path("export/claims.jsonl", views.export_claims, name="review-export-claims"),
    path("export/corpus.jsonl", views.export_corpus, name="review-export-corpus"),
    path("export/flags.jsonl", views.export_training_rows, name="review-export-flags"),
]
