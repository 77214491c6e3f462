"""Routes of the question-answering pages."""

from __future__ import annotations

from django.urls import path

from webapp.qa import views

urlpatterns = [
    path("", views.ask, name="ask"),
    path("questions/<int:question_id>/", views.question_page, name="question"),
    path("questions/<int:question_id>.json", views.question_json, name="question-json"),
    path("questions/<int:question_id>/cancel", views.question_cancel, name="question-cancel"),
    path("articles/<str:pmid>.json", views.article_json, name="article-json"),
]
