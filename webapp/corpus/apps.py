"""The corpus app: indexed PubMed articles and their ingestion."""

from __future__ import annotations

from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "webapp.corpus"
    label = "corpus"
