"""Who may read a question's deep check, who may run (and stop) it, and who may flag its claims."""

from __future__ import annotations

from webapp.accounts.roles import REVIEWER, AnyUser, user_has_role
from webapp.qa.access import question_cancellable, question_viewable
from webapp.qa.models import Question


def deep_check_readable(*, user: AnyUser, question: Question) -> bool:
    """Whoever may see the question (its owner, reviewers and admins) reads its deep check."""
    return question_viewable(user=user, question=question)


def deep_check_runnable(*, user: AnyUser, question: Question) -> bool:
    """Only the person who asked, or an admin, starts (or runs again) and stops a deep check: it spends model time on
    their behalf. Reviewers read it and flag its claims, as they only read elsewhere (a question's stop button is
    the owner's and admins' too)."""
    return question_viewable(user=user, question=question) and question_cancellable(user=user, question=question)


def claims_flaggable(*, user: AnyUser, question: Question) -> bool:
    """Reviewers (and admins) flag the claims of a deep check, as they review the answers' sentences."""
    return user_has_role(user, REVIEWER) and question_viewable(user=user, question=question)
