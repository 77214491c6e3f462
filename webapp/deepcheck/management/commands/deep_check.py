"""`manage.py deep_check ID [--json] [--again]`: deep-check an answered question and print the stored result."""

from __future__ import annotations

import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from webapp.corpus import engines
from webapp.deepcheck import selectors, services
from webapp.deepcheck.models import DeepCheck
from webapp.deepcheck.tasks import deep_check_run_task
from webapp.qa.models import Question
from webapp.qa.services.admission import QuestionRejectedError


class Command(BaseCommand):
    help = (
        "Deep-check an answered question: its cited sentences split into claims, each claim judged against the "
        "cited abstracts and searched for where they do not settle it. By default the Celery worker runs it (it "
        "owns the indexes while it runs); --in-process runs it here, for when no worker is running."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question_id", type=int)
        parser.add_argument("--json", action="store_true", help="Print the stored result as one JSON object.")
        parser.add_argument("--in-process", action="store_true", help="Run without a worker.")
        parser.add_argument(
            "--again", action="store_true", help="Run a finished check again (otherwise its result is printed)."
        )
        parser.add_argument("--timeout", type=float, default=900.0, help="Seconds to wait for the worker.")

    def handle(self, *args: Any, **options: Any) -> None:
        question = Question.objects.filter(pk=options["question_id"]).first()
        if question is None:
            raise CommandError(f"no question {options['question_id']}")
        try:
            check = services.deep_check_start(
                question=question, rerun=options["again"], enqueue=not options["in_process"]
            )
        except (services.DeepCheckRejectedError, QuestionRejectedError) as exc:  # not answered; the queue is full
            raise CommandError(str(exc)) from exc
        if options["in_process"]:
            try:
                # apply() runs the task body here with its retry and failure handling, as a worker would; a check
                # already finished (started without --again) is left as it is.
                deep_check_run_task.apply(args=(check.pk,), kwargs={"run": check.run}, throw=False)
            finally:
                engines.release_engines()
        else:
            self._wait_for_worker(check.pk, timeout=options["timeout"])
        check.refresh_from_db()
        payload = selectors.deep_check_payload(question=question, deep_check=check)
        if options["json"]:
            self.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False))
        else:
            self._print_readable(payload)
        if check.status == DeepCheck.Status.FAILED:
            raise CommandError(f"the deep check failed: {check.error}")

    def _wait_for_worker(self, deep_check_id: int, *, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not DeepCheck.objects.get(pk=deep_check_id).finished:
            if time.monotonic() >= deadline:
                services.deep_check_stop(deep_check_id=deep_check_id)
                raise CommandError(
                    f"no worker finished the deep check within {timeout:.0f} s (it was asked to stop); is the worker "
                    "running (make run)? Use --in-process to run without one."
                )
            time.sleep(0.5)

    def _print_readable(self, payload: dict[str, Any]) -> None:
        self.stdout.write(f"status: {payload['status']}" + (f" ({payload['error']})" if payload["error"] else ""))
        for sentence in (payload["tree"] or {}).get("sentences", []):
            self.stdout.write(f"[{sentence['verdict']}] {sentence['text']}")
            if sentence["note"]:
                self.stdout.write(f"    (checked whole: {sentence['note']})")
            for claim in sentence["claims"]:
                sources = ", ".join(
                    f"{e['pmid']}{'' if e['cited'] else ' (another paper)'}={e['label']}" for e in claim["evidence"]
                )
                self.stdout.write(f"  - [{claim['verdict']}] {claim['text']}  ({sources or 'no abstract'})")
        self.stdout.write(f"timings_ms: {payload['timings_ms']}")
