"""Reviewers' flags on answer sentences: the queue, its resolutions and the training data they export."""

from __future__ import annotations

from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "webapp.review"
    label = "review"
    default_auto_field = "django.db.models.BigAutoField"
