"""Who may watch an answer: only the person who asked it (a researcher), never through a shared read-only link."""

from __future__ import annotations

from webapp.accounts.roles import AnyUser
from webapp.qa.access import question_shareable
from webapp.qa.models import Question


def question_watchable(*, user: AnyUser, question: Question) -> bool:
    # The owner's rule for share links is the same one: the person who asked, holding the researcher role.
    return question_shareable(user=user, question=question)
