"""Read-side: a question's deep check as the plain JSON the page, the API and the command share."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from webapp.deepcheck.models import DeepCheck, lost_before
from webapp.qa.models import Question
from webapp.qa.queue import QueuedWork, queued_work_position


def deep_check_of(*, question: Question) -> DeepCheck | None:
    return DeepCheck.objects.filter(question=question).first()


def deep_checks_unfinished() -> QuerySet[DeepCheck]:
    """Deep checks queued or running, those lost left out: what holds or waits for the `llm` workers."""
    return DeepCheck.objects.filter(
        status__in=(DeepCheck.Status.QUEUED, DeepCheck.Status.RUNNING), updated_at__gte=lost_before()
    )


# Registered with qa's queue by DeepCheckConfig.ready: a deep check takes its turn on the workers questions use.
DEEP_CHECKS = QueuedWork(
    singular="deep check", plural="deep checks", unfinished=deep_checks_unfinished, queued_at="queued_at"
)


def deep_check_queue_position(*, deep_check: DeepCheck) -> int | None:
    """1 when it is next, counting the questions and deep checks queued before it; None once it runs or ended."""
    if deep_check.status != DeepCheck.Status.QUEUED or deep_check.lost:
        return None
    return queued_work_position(work=DEEP_CHECKS, pk=deep_check.pk, queued_at=deep_check.queued_at)


def lost_reason() -> str:
    minutes = settings.VERIMED.tasks.deep_check_lost_minutes
    return (
        f"it had not moved for {minutes} minutes, so it was lost (its worker probably stopped or restarted). "
        "Run it again to start over."
    )


def deep_check_payload(*, question: Question, deep_check: DeepCheck | None) -> dict[str, Any]:
    """`status` is None when the question was never deep-checked; a lost check reads as failed, saying why."""
    if deep_check is None:
        return {"question": question.pk, "status": None, "stage": "", "progress": 0, "error": "", "tree": None,
                "models": {}, "timings_ms": {}, "settings": {}, "created_at": None, "updated_at": None,
                "flagged": [], "queue_position": None}  # fmt: skip
    flagged = deep_check.claim_flags.order_by("pk").values_list("sentence_position", "claim_index")
    lost = deep_check.lost
    return {
        "question": question.pk,
        "status": DeepCheck.Status.FAILED if lost else deep_check.status,
        "stage": deep_check.stage,
        "progress": deep_check.progress,
        "error": lost_reason() if lost else deep_check.error,
        "tree": deep_check.tree,
        "models": deep_check.models_used,
        "timings_ms": deep_check.timings_ms,
        "settings": deep_check.settings,
        "created_at": deep_check.created_at.isoformat(),
        "updated_at": deep_check.updated_at.isoformat(),
        "flagged": [list(pair) for pair in flagged],
        "queue_position": deep_check_queue_position(deep_check=deep_check),
    }
