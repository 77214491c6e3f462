"""VeriMed's Django project. Importing it loads the Celery app so `shared_task` binds to it."""

from __future__ import annotations

from webapp.celery import app as celery_app

__all__ = ["celery_app"]
