"""Read-side: a question's deep check as the plain JSON the page, the API and the command share."""

from __future__ import annotations

from typing import Any

from webapp.deepcheck.models import DeepCheck
from webapp.qa.models import Question


def deep_check_of(*, question: Question) -> DeepCheck | None:
    return DeepCheck.objects.filter(question=question).first()


def deep_check_payload(*, question: Question, deep_check: DeepCheck | None) -> dict[str, Any]:
    """`status` is None when the question was never deep-checked."""
    if deep_check is None:
        return {"question": question.pk, "status": None, "stage": "", "progress": 0, "error": "", "tree": None,
                "models": {}, "timings_ms": {}, "settings": {}, "created_at": None, "updated_at": None,
                "flagged": []}  # fmt: skip
    flagged = deep_check.claim_flags.order_by("pk").values_list("sentence_position", "claim_index")
    return {
        "question": question.pk,
        "status": deep_check.status,
        "stage": deep_check.stage,
        "progress": deep_check.progress,
        "error": deep_check.error,
        "tree": deep_check.tree,
        "models": deep_check.models_used,
        "timings_ms": deep_check.timings_ms,
        "settings": deep_check.settings,
        "created_at": deep_check.created_at.isoformat(),
        "updated_at": deep_check.updated_at.isoformat(),
        "flagged": [list(pair) for pair in flagged],
    }
