"""Template helpers for the review pages and the flag dialog on the answer page."""

from __future__ import annotations

from django import template

from webapp.corpus import source_ids
from webapp.review import display, selectors
from webapp.review.models import Flag

register = template.Library()


@register.filter
def verdict_icon(verdict: str) -> str:
    return display.verdict_icon(verdict)


@register.filter
def verdict_text(verdict: str) -> str:
    return display.verdict_text(verdict)


@register.filter
def source_label(source_id: str) -> str:
    return source_ids.source_label(source_id)


@register.simple_tag
def flagged_positions(question_id: int) -> str:
    """Comma-separated positions of the question's sentences with an open flag, for a data attribute."""
    return ",".join(str(position) for position in selectors.flagged_sentence_positions(question_id=question_id))


@register.simple_tag
def flag_reasons() -> list[tuple[str, str]]:
    return [(str(value), str(label)) for value, label in Flag.Reason.choices]
