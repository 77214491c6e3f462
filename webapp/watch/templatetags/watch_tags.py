"""Template helpers for the watch controls and the "Since you asked" section of the answer page."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from webapp.accounts.roles import AnyUser
from webapp.corpus.source_ids import pubmed_url, source_label
from webapp.qa.models import Question
from webapp.review.display import verdict_text
from webapp.watch import selectors
from webapp.watch.access import question_watchable
from webapp.watch.changes import STATUS_WORDS

register = template.Library()

# Re-checks that found something, newest first; the ones that found nothing show only as "last re-checked".
RECHECKS_SHOWN = 20


@register.simple_tag
def watch_state(question: Question, user: AnyUser) -> dict[str, bool]:
    watchable = question_watchable(user=user, question=question)
    return {"watchable": watchable, "watched": watchable and selectors.question_watched(question=question, user=user)}


@register.simple_tag
def question_rechecks(question: Question) -> dict[str, Any]:
    rechecks = selectors.question_rechecks(question=question)
    return {"last": rechecks.first(), "with_changes": list(rechecks.exclude(changes=[])[:RECHECKS_SHOWN])}


@register.filter
def verdict_words(verdict: str) -> str:
    return verdict_text(verdict)


@register.filter
def status_words(status: str) -> str:
    return STATUS_WORDS.get(status, status)


@register.filter
def pmid_link(pmid: str) -> SafeString:
    """A link to the record's PubMed page, or the id as it is where it has none (a benchmark corpus's id)."""
    url = pubmed_url(pmid)
    if not url:
        return format_html("{}", source_label(pmid))
    return format_html('<a href="{}" rel="noopener noreferrer" target="_blank">{}</a>', url, source_label(pmid))
