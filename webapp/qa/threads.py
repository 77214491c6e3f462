"""Reads over follow-up threads: a thread's questions in order, the questions a follow-up follows, the sources its
earlier answers cited, and the history grouped by thread.

A follow-up stores its `parent` and its thread's first question (`thread`); the first question's own `thread` is null.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from generator.citations import cited_ids
from generator.follow_up import ThreadTurn
from webapp.qa.models import FollowUpDraft, Question

# A guard against a cycle or a thread no one would read: deeper than this, the earliest questions are left out.
MAX_THREAD_DEPTH = 50


def thread_questions(*, question: Question) -> QuerySet[Question]:
    """Every question of `question`'s thread, oldest first: its first question, then the follow-ups."""
    first = question.thread_id or question.pk
    return Question.objects.filter(Q(pk=first) | Q(thread_id=first)).order_by("created_at", "pk")


def thread_question_ids(*, question: Question) -> list[int]:
    """The ids of `thread_questions`; empty for a question that follows none and has no follow-ups."""
    ids = list(thread_questions(question=question).values_list("pk", flat=True))
    return ids if len(ids) > 1 else []


def question_ancestors(*, question: Question) -> list[Question]:
    """The questions `question` follows, oldest first: its thread's first question, ..., its parent."""
    if question.parent_id is None:
        return []
    in_thread = {row.pk: row for row in thread_questions(question=question)}
    chain: list[Question] = []
    parent_id: int | None = question.parent_id
    while parent_id is not None and len(chain) < MAX_THREAD_DEPTH:
        # A question whose thread's first question was deleted is found by its id (its `thread` became null).
        parent = in_thread.get(parent_id) or Question.objects.filter(pk=parent_id).first()
        if parent is None or parent in chain:
            break
        chain.append(parent)
        parent_id = parent.parent_id
    return chain[::-1]


def thread_turns(*, question: Question) -> list[ThreadTurn]:
    """The conversation a follow-up of `question` continues, oldest first, `question` last: what its rewrite reads."""
    return [
        ThreadTurn(question=row.text, answer=row.answer_text)
        for row in [*question_ancestors(question=question), question]
    ]


def thread_cited_pmids(*, question: Question) -> list[str]:
    """The PMIDs that the answers `question` follows cited (and were given), the latest answer's first, no repeats."""
    pmids: dict[str, None] = {}
    for earlier in reversed(question_ancestors(question=question)):
        if earlier.status != Question.Status.DONE or earlier.cannot_answer:
            continue
        given = set(earlier.given_pmids)
        for pmid in cited_ids(earlier.answer_text):
            if pmid in given:
                pmids.setdefault(pmid, None)
    return list(pmids)


def follow_up_draft_open(*, parent: Question, user_id: int | None) -> FollowUpDraft | None:
    """The follow-up this person is writing on `parent`, not yet asked; the latest one if there are several."""
    if user_id is None:
        return None
    return (
        FollowUpDraft.objects.filter(parent=parent, user_id=user_id).exclude(status=FollowUpDraft.Status.ASKED).first()
    )


@dataclass(frozen=True)
class HistoryThread:
    question: Question  # the thread's first question (a question with no follow-ups is a thread of one)
    follow_ups: list[Question]  # those of the history's search, oldest first


def history_thread_starts(*, visible: QuerySet[Question], matching: QuerySet[Question]) -> QuerySet[Question]:
    """The first question of each thread with a question in `matching`, newest first: a follow-up that matches a
    search is listed under the question its thread started with, even when that one does not match."""
    starts = Q(pk__in=matching.filter(thread__isnull=True).values("pk")) | Q(
        pk__in=matching.filter(thread__isnull=False).values("thread_id")
    )
    return visible.filter(starts, thread__isnull=True).select_related("user").order_by("-created_at", "-pk")


def history_threads(*, starts: Sequence[Question], matching: QuerySet[Question]) -> list[HistoryThread]:
    """`starts` (a page of `history_thread_starts`) with their follow-ups in `matching`, in one query."""
    follow_ups: dict[int, list[Question]] = {start.pk: [] for start in starts}
    rows = matching.filter(thread_id__in=list(follow_ups)).select_related("user").order_by("created_at", "pk")
    for row in rows:
        assert row.thread_id is not None
        follow_ups[row.thread_id].append(row)
    return [HistoryThread(question=start, follow_ups=follow_ups[start.pk]) for start in starts]
