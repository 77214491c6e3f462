"""Routes of the JSON API (`/api/v1/...`) and of its OpenAPI schema and documentation pages.

The schema and the documentation pages are public: they describe the API and hold no data, and tools that
generate clients can fetch them without a token. Every `/api/v1/` endpoint except the token exchange needs one.
"""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path
from drf_spectacular.views import SpectacularAPIView

from webapp.api import deep_check_views, docs, library_views, views, watch_views

urlpatterns: list[URLPattern | URLResolver] = [
    path("v1/auth/token", views.TokenView.as_view(), name="api-token"),
    path("v1/auth/token/rotate", views.TokenRotateView.as_view(), name="api-token-rotate"),
    path("v1/auth/token/revoke", views.TokenRevokeView.as_view(), name="api-token-revoke"),
    path("v1/questions", views.QuestionListView.as_view(), name="api-questions"),
    path("v1/questions/<int:question_id>", views.QuestionDetailView.as_view(), name="api-question"),
    path("v1/questions/<int:question_id>/cancel", views.QuestionCancelView.as_view(), name="api-question-cancel"),
    path("v1/questions/<int:question_id>/again", views.QuestionAskAgainView.as_view(), name="api-question-again"),
    path("v1/questions/<int:question_id>/watch", watch_views.QuestionWatchView.as_view(), name="api-question-watch"),
    path(
        "v1/questions/<int:question_id>/deep-check",
        deep_check_views.DeepCheckView.as_view(),
        name="api-question-deep-check",
    ),
    path(
        "v1/questions/<int:question_id>/deep-check/stop",
        deep_check_views.DeepCheckStopView.as_view(),
        name="api-question-deep-check-stop",
    ),
    path("v1/notifications", watch_views.NotificationListView.as_view(), name="api-notifications"),
    path("v1/notifications/read", watch_views.NotificationsReadView.as_view(), name="api-notifications-read"),
    path("v1/articles/<str:pmid>", views.ArticleDetailView.as_view(), name="api-article"),
    path("v1/documents", library_views.DocumentListView.as_view(), name="api-documents"),
    path("v1/documents/<int:document_id>", library_views.DocumentDetailView.as_view(), name="api-document"),
    path("v1/flags", views.FlagListView.as_view(), name="api-flags"),
    path("v1/flags/<int:flag_id>", views.FlagDetailView.as_view(), name="api-flag"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", docs.swagger_ui, name="api-docs"),
    path("redoc/", docs.redoc, name="api-redoc"),
]
