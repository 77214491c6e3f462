"""The deep check: an answer's cited sentences split into claims, each judged against the abstracts its sentence
cites and, where those do not settle it, against those a search with the claim finds (verifier/claim_tree.py)."""

from __future__ import annotations

from django.apps import AppConfig


class DeepCheckConfig(AppConfig):
    name = "webapp.deepcheck"
    label = "deepcheck"
