"""An answered question for the deep-check tests, verified by the registry's fake verifier; the deep check's model is
the fake LLM (it splits compound sentences at ", and ") and its claims' searches are answered from a list the test
sets (the search itself is the retrieve stage's, tested in tests/webapp/qa)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from django.contrib.auth.models import User
from pytest_django.fixtures import Settings

from indexer.base import FusedHit
from tests.webapp.factories import answer_awaiting_verification
from tests.webapp.qa.test_backend_faults import broker_down  # noqa: F401 (a fixture the deep-check tests use)
from webapp.corpus.models import Article
from webapp.deepcheck import pipeline
from webapp.qa.models import Question
from webapp.qa.pipeline import PipelineSettings
from webapp.qa.services import verify

QUESTION = "What does zorvistatin do to blood pressure?"
CITED, OTHER, SILENT = "11000001", "11000002", "11000003"
# The first sentence joins a finding its abstract states to one it does not: the deep check splits them, and the
# second claim's own search finds OTHER, which states it.
ANSWER = (
    f"Zorvistatin lowered blood pressure in adults, and zorvistatin reduced stroke mortality (PUBMED:{CITED}). "
    f"Zorvistatin was well tolerated (PUBMED:{CITED})."
)
ARTICLES = {
    CITED: ("Zorvistatin in hypertension.", "Zorvistatin lowered blood pressure in adults. It was well tolerated."),
    OTHER: ("Zorvistatin outcomes.", "Zorvistatin reduced stroke mortality in a pooled analysis."),
    SILENT: ("Knee surgery outcomes.", "Pain fell after knee surgery."),
}


@dataclass
class FakeSearch:
    """What a claim's search returns (PMIDs, best first), and the queries and settings it was called with."""

    pmids: list[str] = field(default_factory=lambda: [CITED, OTHER, SILENT])
    calls: list[tuple[str, PipelineSettings]] = field(default_factory=list)

    def __call__(self, *, query: str, pipeline: PipelineSettings) -> Sequence[FusedHit]:
        self.calls.append((query, pipeline))
        found = self.pmids[: pipeline.retrieval.top_k]
        return [FusedHit(pmid, 1 / rank, 1.0, 0.0, None, None) for rank, pmid in enumerate(found, start=1)]


@pytest.fixture
def fake_models(settings: Settings) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_VERIFIER="fake")
    settings.VERIMED = settings.VERIMED.replace(VERIMED_EVIDENCE_FINDER="fake")
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_SERVER_KIND="fake")


@pytest.fixture
def search(monkeypatch: pytest.MonkeyPatch) -> FakeSearch:
    fake = FakeSearch()
    monkeypatch.setattr(pipeline, "sources_search", fake)
    return fake


@pytest.fixture
def owner(role_users: dict[str, User]) -> User:
    return role_users["researcher"]


@pytest.fixture
def answered(fake_models: None, owner: User) -> Question:
    """The owner's answer, verified: two sentences citing CITED."""
    for pmid, (title, abstract) in ARTICLES.items():
        Article.objects.create(pmid=pmid, title=title, abstract=abstract, year=2021)
    question = answer_awaiting_verification(user=owner, text=QUESTION, answer=ANSWER, retrieved=[CITED])
    verify.question_verify(question_id=question.pk)
    return Question.objects.get(pk=question.pk)
