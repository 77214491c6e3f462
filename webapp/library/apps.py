"""Each researcher's own library: PDFs and JATS full texts they upload, read into passages only they can search."""

from __future__ import annotations

from django.apps import AppConfig


class LibraryConfig(AppConfig):
    name = "webapp.library"
    label = "library"
