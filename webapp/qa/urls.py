"""Routes of the question-answering pages: asking, stopping, an article's JSON, the history. The answer page and
what hangs off it are webapp/pages's."""

from __future__ import annotations

from django.urls import URLPattern, path

from webapp.qa import views

urlpatterns: list[URLPattern] = [
    path("", views.ask, name="ask"),
    path("questions/<int:question_id>/cancel", views.question_cancel, name="question-cancel"),
    path("questions/<int:question_id>/again", views.question_ask_again, name="question-ask-again"),
    path("articles/<str:pmid>.json", views.article_json, name="article-json"),
    path("history/", views.history, name="history"),
]
