"""`manage.py ask "<question>" [--json]`: run the question pipeline and print the stored result."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from pydantic import ValidationError

from webapp.corpus import engines
from webapp.qa import selectors
from webapp.qa.models import Question
from webapp.qa.payloads import CitationVerdictPayload, QuestionPayload
from webapp.qa.pipeline import RetrievalFilters
from webapp.qa.services import admission, ending
from webapp.qa.tasks import question_generate_task, question_retrieve_task, question_verify_task


class Command(BaseCommand):
    help = (
        "Ask a question. By default it goes through the Celery worker (which owns the indexes while it runs); "
        "--in-process runs the same tasks in this process instead, for when no worker is running."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question")
        parser.add_argument("--json", action="store_true", help="Print the stored result as one JSON object.")
        parser.add_argument("--in-process", action="store_true", help="Run without a worker.")
        parser.add_argument("--timeout", type=float, default=900.0, help="Seconds to wait for the worker.")
        parser.add_argument("--year-from", type=int, help="Only abstracts published in or after this year.")
        parser.add_argument("--year-to", type=int, help="Only abstracts published in or before this year.")
        parser.add_argument("--journal", action="append", default=[], help="Only this journal (repeatable).")
        parser.add_argument(
            "--publication-type", action="append", default=[], help="Only this publication type (repeatable)."
        )
        parser.add_argument("--mesh", action="append", default=[], help="Only this MeSH descriptor (repeatable).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            filters = RetrievalFilters(
                year_from=options["year_from"],
                year_to=options["year_to"],
                journals=tuple(options["journal"]),
                publication_types=tuple(options["publication_type"]),
                mesh=tuple(options["mesh"]),
            )
        except ValidationError as exc:
            raise CommandError(f"invalid filters: {exc}") from exc
        try:
            question = admission.question_create(
                text=options["question"], enqueue=not options["in_process"], filters=filters
            )
        except admission.QuestionRejectedError as exc:
            raise CommandError(str(exc)) from exc
        if options["in_process"]:
            self._run_here(question.pk)
        else:
            self._wait_for_worker(question.pk, timeout=options["timeout"])
        payload = selectors.question_payload(
            selectors.question_get(question_id=question.pk), viewer_id=question.user_id
        )
        if options["json"]:
            self.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False))
        else:
            self._print_readable(payload)
        if payload["status"] == Question.Status.FAILED:
            raise CommandError(f"the question failed: {payload['error']}")

    def _run_here(self, question_id: int) -> None:
        try:
            for task in (question_retrieve_task, question_generate_task, question_verify_task):
                # apply() runs the task body here with its retry and failure handling, as a worker would.
                result = task.apply(args=(question_id,), throw=False)
                if result.failed():
                    break
        finally:
            engines.release_engines()

    def _wait_for_worker(self, question_id: int, *, timeout: float) -> None:
        if selectors.question_wait_finished(question_id=question_id, timeout=timeout):
            return
        ending.question_fail(question_id=question_id, reason=f"no answer within {timeout:.0f} s")
        raise CommandError(
            f"no worker finished the question within {timeout:.0f} s; is the worker running (make run)? "
            "Use --in-process to run without one."
        )

    def _print_readable(self, payload: QuestionPayload) -> None:
        self.stdout.write(payload["answer"] or "(no answer)")
        self.stdout.write("")
        if payload["verification_status"] == Question.Verification.UNAVAILABLE:
            self.stdout.write(f"Verification unavailable: {payload['verification_error']}")
        for sentence in payload["sentences"]:
            labels = ", ".join(_citation_label(pmid, v) for pmid, v in sentence["verdicts"].items()) or "uncited"
            self.stdout.write(f"[{sentence['verdict']}] {sentence['display_text']}  ({labels})")
        self.stdout.write(f"timings_ms: {payload['timings_ms']}")


def _citation_label(pmid: str, verdict: CitationVerdictPayload) -> str:
    """`pmid=LABEL`; an UNCLEAR one also names the label the model leans to, as the answer page does."""
    leaning = verdict.get("leaning") if verdict["label"] == "UNCLEAR" else None
    return f"{pmid}={verdict['label']}" + (f" leaning {leaning}" if leaning else "")
