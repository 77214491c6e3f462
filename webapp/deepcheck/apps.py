"""The deep check: an answer's cited sentences split into claims, each judged against the abstracts its sentence
cites and, where those do not settle it, against those a search with the claim finds (verifier/claim_tree.py)."""

from __future__ import annotations

from django.apps import AppConfig


class DeepCheckConfig(AppConfig):
    name = "webapp.deepcheck"
    label = "deepcheck"

    def ready(self) -> None:
        # qa's queue valve, places in line and the embedder's pause rule count deep checks: qa cannot import this
        # app (it sits below it in the layers), so the check registers itself.
        from webapp.deepcheck.selectors import DEEP_CHECKS
        from webapp.qa.queue import queued_work_register

        queued_work_register(DEEP_CHECKS)
