"""A watched answer for the re-check tests, verified by the registry's fake verifier, and the search the re-check runs
answered from a list the test sets (the search itself is the retrieve stage's, tested in tests/webapp/qa)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pytest
from django.contrib.auth.models import User
from pytest_django.fixtures import Settings

from indexer.base import FusedHit
from tests.webapp.factories import answer_awaiting_verification
from tests.webapp.qa.test_backend_faults import broker_down  # noqa: F401 (a fixture the watch tests use)
from webapp.corpus.models import Article
from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings
from webapp.qa.services import verify
from webapp.watch import checking
from webapp.watch.services import watch_create

QUESTION = "What does zorvistatin do to blood pressure?"
CITED, OTHER = "11000001", "11000002"
ANSWER = f"Zorvistatin lowers blood pressure (PUBMED:{CITED}). It was well tolerated (PUBMED:{OTHER})."
ARTICLES = {
    CITED: ("Zorvistatin in hypertension.", "Zorvistatin lowers blood pressure in adults."),
    OTHER: ("Zorvistatin safety.", "Zorvistatin was well tolerated over 24 weeks."),
}
# The fake verifier judges by shared words and negation: this abstract contradicts the first sentence.
CONTRADICTING, SILENT = "11000009", "11000010"
NEW_ARTICLES = {
    CONTRADICTING: ("Zorvistatin: a pooled analysis.", "Zorvistatin did not lower blood pressure in 2,000 adults."),
    SILENT: ("Knee surgery outcomes.", "Pain fell after knee surgery."),
}


@dataclass
class FakeSearch:
    """What the re-check's search returns (PMIDs, best first), and the settings it was called with."""

    pmids: list[str] = field(default_factory=lambda: [CITED, OTHER])
    calls: list[tuple[str, PipelineSettings]] = field(default_factory=list)
    # What happens elsewhere while a re-check is half-way (called once, from its search): a test of two at once.
    meanwhile: Callable[[], None] | None = None

    def __call__(self, *, query: str, pipeline: PipelineSettings) -> Sequence[FusedHit]:
        self.calls.append((query, pipeline))
        if self.meanwhile is not None:
            meanwhile, self.meanwhile = self.meanwhile, None
            meanwhile()
        return [FusedHit(pmid, 1 / rank, 1.0, 0.0, None, None) for rank, pmid in enumerate(self.pmids, start=1)]


@pytest.fixture
def fake_verifier(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_VERIFIER="fake")
    settings.VERIMED = settings.VERIMED.replace(VERIMED_EVIDENCE_FINDER="fake")


@pytest.fixture
def search(monkeypatch: pytest.MonkeyPatch) -> FakeSearch:
    fake = FakeSearch()
    monkeypatch.setattr(checking, "sources_search", fake)
    return fake


@pytest.fixture
def owner(role_users: dict[str, User]) -> User:
    return role_users["researcher"]


@pytest.fixture
def answered(fake_verifier: None, owner: User) -> Question:
    """The owner's answer, verified (both sentences SUPPORT), not yet watched."""
    for pmid, (title, abstract) in {**ARTICLES, **NEW_ARTICLES}.items():
        Article.objects.create(pmid=pmid, title=title, abstract=abstract, year=2021)
    question = answer_awaiting_verification(user=owner, text=QUESTION, answer=ANSWER, retrieved=[CITED, OTHER])
    verify.question_verify(question_id=question.pk)
    return Question.objects.get(pk=question.pk)


@pytest.fixture
def watched(answered: Question, owner: User) -> Question:
    watch_create(user=owner, question=answered)
    return answered
