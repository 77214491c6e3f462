"""The consensus meter says in words, before its counts, when most of the abstracts read are Unclear: on the page
(static/verimed.js fills it) and in the Markdown export."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.test import Client

from tests.webapp.factories import answer_with_references
from verifier.consensus import AbstractVerdict, Consensus
from webapp.accounts.roles import RESEARCHER
from webapp.qa.consensus import consensus_json
from webapp.qa.consensus_export import unsure_sentence
from webapp.qa.models import Question

UNSURE = "Most of these abstracts (7 of 10) could not be read with confidence; the counts below are uncertain."


@pytest.mark.parametrize(
    ("unclear", "read", "said"),
    [(7, 10, UNSURE), (6, 10, UNSURE.replace("7 of", "6 of")), (5, 10, ""), (2, 10, ""), (0, 0, "")],
)
def test_the_sentence_is_said_only_when_more_than_half_are_unclear(unclear: int, read: int, said: str) -> None:
    assert unsure_sentence(unclear, read) == said


def _question(user: User, unclear: int) -> Question:
    verdicts = [
        AbstractVerdict(
            pmid=str(10000001 + index),
            label="UNCLEAR" if index < unclear else "SUPPORT",
            confidence=0.5,
            evidence_spans=(),
        )
        for index in range(10)
    ]
    question = answer_with_references(user=user)
    consensus = consensus_json(Consensus(claim="Metformin causes lactic acidosis.", verdicts=tuple(verdicts)))
    Question.objects.filter(pk=question.pk).update(consensus=consensus)
    return question


@pytest.mark.django_db
@pytest.mark.parametrize(("unclear", "said"), [(7, True), (3, False)])
def test_the_markdown_export_says_it_before_the_counts(
    researcher_client: Client, role_users: dict[str, User], unclear: int, said: bool
) -> None:
    question = _question(role_users[RESEARCHER], unclear)
    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()
    section = markdown[markdown.index("## Consensus") :]
    assert ("could not be read with confidence" in section) is said
    if said:
        assert section.index(UNSURE) < section.index("Of the first 10 abstracts retrieved")
    page = researcher_client.get(f"/questions/{question.pk}/").content.decode()
    assert page.index('id="consensus-unsure"') < page.index('id="consensus-meter"'), "the words come first"


def test_the_script_says_it_in_the_same_words() -> None:
    script = (django_settings.BASE_DIR / "static" / "verimed.js").read_text()
    assert "function consensusUnsure(consensus)" in script
    assert '") could not be read with confidence; " +' in script
    assert '"the counts below are uncertain."' in script
    assert "unclear * 2 <= consensus.read" in script
