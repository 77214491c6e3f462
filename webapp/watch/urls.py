"""Routes of the watch controls (under a question's own URL) and of the notifications page."""

from __future__ import annotations

from django.urls import path

from webapp.watch import views

urlpatterns = [
    path("questions/<int:question_id>/watch", views.question_watch, name="question-watch"),
    path("questions/<int:question_id>/unwatch", views.question_unwatch, name="question-unwatch"),
    path("questions/<int:question_id>/recheck", views.question_recheck, name="question-recheck"),
    path("questions/<int:question_id>/regenerate", views.question_regenerate, name="question-regenerate"),
    path("notifications/", views.notifications, name="notifications"),
    path("notifications/read", views.notifications_read, name="notifications-read"),
]
