"""Who may run a question's deep check and who may flag its claims."""

from __future__ import annotations

from webapp.accounts.roles import REVIEWER, AnyUser, user_has_role
from webapp.qa.access import question_viewable
from webapp.qa.models import Question


def deep_check_allowed(*, user: AnyUser, question: Question) -> bool:
    """Whoever may see the question (its owner, reviewers and admins) may deep-check it, and stop the check."""
    return question_viewable(user=user, question=question)


def claims_flaggable(*, user: AnyUser, question: Question) -> bool:
    """Reviewers (and admins) flag the claims of a deep check, as they review the answers' sentences."""
    return user_has_role(user, REVIEWER) and question_viewable(user=user, question=question)
