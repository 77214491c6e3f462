"""The question-answering app: questions, their retrieval, answers and verification."""

from __future__ import annotations

from django.apps import AppConfig


class QaConfig(AppConfig):
    name = "webapp.qa"
    label = "qa"
