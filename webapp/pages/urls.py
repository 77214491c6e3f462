"""Routes of the answer page, its JSON, its follow-up section, its share links and its exports."""

from __future__ import annotations

from django.urls import URLPattern, path

from webapp.pages import answer_views, follow_up_views, share_views

urlpatterns: list[URLPattern] = [
    path("questions/<int:question_id>/", answer_views.question_page, name="question"),
    path("questions/<int:question_id>.json", answer_views.question_json, name="question-json"),
    path("questions/<int:question_id>/follow-up", follow_up_views.follow_up_start, name="follow-up-start"),
    path(
        "questions/<int:question_id>/follow-ups/<int:draft_id>.json",
        follow_up_views.follow_up_json,
        name="follow-up-json",
    ),
    path(
        "questions/<int:question_id>/follow-ups/<int:draft_id>/ask",
        follow_up_views.follow_up_confirm,
        name="follow-up-confirm",
    ),
    path("questions/<int:question_id>/share", share_views.question_share, name="question-share"),
    path("questions/<int:question_id>/unshare", share_views.question_unshare, name="question-unshare"),
    path("questions/<int:question_id>/export.md", share_views.export_markdown, name="question-export-md"),
    path("questions/<int:question_id>/references.bib", share_views.export_bibtex, name="question-export-bib"),
    path("questions/<int:question_id>/references.ris", share_views.export_ris, name="question-export-ris"),
    path("shared/<slug:token>/", share_views.question_shared, name="question-shared"),
    path("shared/<slug:token>.json", share_views.question_shared_json, name="question-shared-json"),
    path("shared/<slug:token>/export.md", share_views.shared_export_markdown, name="shared-export-md"),
    path("shared/<slug:token>/references.bib", share_views.shared_export_bibtex, name="shared-export-bib"),
    path("shared/<slug:token>/references.ris", share_views.shared_export_ris, name="shared-export-ris"),
]
