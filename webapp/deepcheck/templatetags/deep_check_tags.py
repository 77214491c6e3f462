"""The answer page's deep-check section, for those who may run one (qa/question.html includes it with one tag)."""

from __future__ import annotations

import json
from typing import Any

from django import template

from webapp.deepcheck.access import claims_flaggable, deep_check_readable, deep_check_runnable
from webapp.deepcheck.selectors import deep_check_of
from webapp.review.models import Flag

register = template.Library()


@register.inclusion_tag("deepcheck/deep_check.html", takes_context=True)
def deep_check_section(context: template.Context) -> dict[str, Any]:
    """Nothing on a shared (read-only) page, or for someone who may not read it; the start and stop buttons only
    for those who may run it (the owner, admins): reviewers read it and flag its claims."""
    question, request = context["question"], context["request"]
    allowed = not context.get("read_only") and deep_check_readable(user=request.user, question=question)
    can_run = allowed and deep_check_runnable(user=request.user, question=question)
    return {
        "allowed": allowed,
        "can_run": can_run,
        # Without JavaScript the button says what it does: once a check exists, it runs it again.
        "has_run": can_run and deep_check_of(question=question) is not None,
        "question": question,
        "can_flag": allowed and claims_flaggable(user=request.user, question=question),
        "csrf_token": context.get("csrf_token"),
        # A data attribute, not a JSON <script>: the site's policy allows no inline script element at all.
        "reasons": json.dumps([list(choice) for choice in Flag.Reason.choices]),
    }
