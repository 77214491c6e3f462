"""The answer page's deep-check section, for those who may run one (qa/question.html includes it with one tag)."""

from __future__ import annotations

import json
from typing import Any

from django import template

from webapp.deepcheck.access import claims_flaggable, deep_check_allowed
from webapp.review.models import Flag

register = template.Library()


@register.inclusion_tag("deepcheck/deep_check.html", takes_context=True)
def deep_check_section(context: template.Context) -> dict[str, Any]:
    """Nothing on a shared (read-only) page, or for someone who may not run it."""
    question, request = context["question"], context["request"]
    allowed = not context.get("read_only") and deep_check_allowed(user=request.user, question=question)
    return {
        "allowed": allowed,
        "question": question,
        "can_flag": allowed and claims_flaggable(user=request.user, question=question),
        "csrf_token": context.get("csrf_token"),
        # A data attribute, not a JSON <script>: the site's policy allows no inline script element at all.
        "reasons": json.dumps([list(choice) for choice in Flag.Reason.choices]),
    }
