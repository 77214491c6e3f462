"""Raising and closing flags. Views and the API call these; they check the rules, the views check the role."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from webapp.qa.models import AnswerSentence, Question
from webapp.review.models import Flag


class FlagRejectedError(ValueError):
    """The flag cannot be raised or closed as asked; the message says why."""


def flag_create(
    *,
    question: Question,
    sentence_position: int,
    reason: str,
    comment: str = "",
    pmid: str = "",
    user: User | AnonymousUser | None,
) -> Flag:
    if reason not in Flag.Reason.values:
        raise FlagRejectedError(f"reason must be one of {', '.join(Flag.Reason.values)}")
    try:
        sentence = question.sentences.get(position=sentence_position)
    except AnswerSentence.DoesNotExist:
        raise FlagRejectedError(f"the answer has no sentence {sentence_position}") from None
    cited = list(sentence.citations.values_list("pmid", flat=True))
    if pmid and pmid not in cited:
        raise FlagRejectedError(f"sentence {sentence_position} does not cite PMID {pmid}")
    if len(comment) > 4000:
        raise FlagRejectedError("comments are limited to 4,000 characters")
    return Flag.objects.create(
        question=question,
        sentence=sentence,
        pmid=pmid,
        reason=reason,
        comment=comment.strip(),
        verifier_verdict=sentence.verdict,
        flagged_by=user if isinstance(user, User) else None,
    )


def flag_close(
    *, flag_id: int, status: str, reviewer_label: str = "", note: str = "", user: User | AnonymousUser
) -> Flag:
    """Resolve (the reviewer agrees something is wrong) or dismiss (the answer stands) an open flag.

    Dismissing without a label confirms the verifier's verdict, so the agreement figures count it.
    """
    if not isinstance(user, User):
        raise FlagRejectedError("sign in to close a flag")
    if status not in (Flag.Status.RESOLVED, Flag.Status.DISMISSED):
        raise FlagRejectedError("a flag is closed as resolved or dismissed")
    if reviewer_label and reviewer_label not in Flag.Label.values:
        raise FlagRejectedError(f"label must be one of {', '.join(Flag.Label.values)}")
    with transaction.atomic():
        flag = Flag.objects.select_for_update().get(pk=flag_id)
        if flag.status != Flag.Status.OPEN:
            raise FlagRejectedError(f"flag {flag_id} is already {flag.status}")
        if not reviewer_label and status == Flag.Status.DISMISSED and flag.verifier_verdict in Flag.Label.values:
            reviewer_label = flag.verifier_verdict
        flag.status = status
        flag.reviewer_label = reviewer_label
        flag.resolution_note = note.strip()
        flag.resolved_by = user
        flag.resolved_at = timezone.now()
        flag.save()
    return flag
