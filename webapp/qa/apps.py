"""The question-answering app: questions, their retrieval, answers and verification."""

from __future__ import annotations

from django.apps import AppConfig


class QaConfig(AppConfig):
    name = "webapp.qa"
    label = "qa"

    def ready(self) -> None:
        # The library sits below qa in the layers: qa counts its indexing in the queue valve and the places in line,
        # and hands it the valve to refuse uploads and indexing with when the site is busy.
        from webapp.library.admission import library_queue_valve_set
        from webapp.qa.queue import queued_work_register
        from webapp.qa.services.admission import LIBRARY_INDEXING, queue_full_reason

        queued_work_register(LIBRARY_INDEXING)
        library_queue_valve_set(queue_full_reason)
