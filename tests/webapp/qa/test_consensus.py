"""The consensus of a yes/no question: made in the verify stage from the first retrieved abstracts, stored on the
question, left out (and the answer kept) when it fails, and carried by the page JSON, the API and the Markdown export.

The registry's fake verifier does the counting tests' verdicts; one test runs the product's own verifier (the
committed cross-encoder and evidence tagger) on two real abstracts."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings

from generator.answer import AnswerPrompt
from generator.base import LLMSettings
from generator.errors import LLMUnavailableError
from generator.fake_llm import FakeLLM, FakeTokenCounter
from generator.prompts import BOTTOM_LINE_NOTES
from generator.yes_no_reading import NO_SPELLINGS, YES_SPELLINGS, YesNoReader
from tests.webapp.factories import article_retracted
from verifier.bottom_line import BottomLineRule
from verifier.consensus import CONSENSUS_ABSTRACTS
from webapp.accounts.roles import RESEARCHER
from webapp.corpus.models import Article
from webapp.qa import consensus as consensus_module
from webapp.qa import llm as llm_module
from webapp.qa.consensus import question_consensus
from webapp.qa.models import Question, RetrievedDocument
from webapp.qa.pipeline import default_pipeline_settings
from webapp.qa.services import admission, generate, verify
from webapp.qa.verification import answer_verifier

pytestmark = pytest.mark.django_db

QUESTION = "Does zorvistatin lower blood pressure?"
CLAIM = "Zorvistatin lowers blood pressure."
SUPPORTING, CONTRADICTING, SILENT = "90000001", "90000002", "90000003"
# (title, abstract, publication types) by PMID; the fake verifier judges by shared words and negation.
ARTICLES = {
    SUPPORTING: ("Zorvistatin in hypertension.", "Zorvistatin lowers blood pressure.", ["Randomized Controlled Trial"]),
    CONTRADICTING: ("Zorvistatin: a pooled analysis.", "Zorvistatin did not lower blood pressure.", ["Meta-Analysis"]),
    SILENT: ("Metformin safety.", "No lactic acidosis occurred in 5,000 patients.", ["Journal Article"]),
}  # fmt: skip
# Retrieved after the first ten: supporting abstracts the consensus must not read.
BEYOND = [f"9100000{index}" for index in range(2)]
FILLER = [f"9200000{index}" for index in range(CONSENSUS_ABSTRACTS - len(ARTICLES))]
ANSWER = f"Zorvistatin lowers blood pressure (PUBMED:{SUPPORTING})."


@pytest.fixture
def fake_verifier(settings: Settings) -> None:
    """Questions asked from here on are verified by the registry's fakes (the pipeline stores them)."""
    settings.VERIMED = settings.VERIMED.replace(VERIMED_VERIFIER="fake")
    settings.VERIMED = settings.VERIMED.replace(VERIMED_EVIDENCE_FINDER="fake")


def _answered(user: User | None, text: str = QUESTION) -> Question:
    """A question retrieved and answered, as those stages store it, waiting for the verify stage."""
    for pmid, (title, abstract, types) in ARTICLES.items():
        Article.objects.get_or_create(
            pmid=pmid, defaults={"title": title, "abstract": abstract, "publication_types": types, "year": 2021}
        )
    for pmid in FILLER:
        Article.objects.get_or_create(pmid=pmid, defaults={"title": "Knee surgery.", "abstract": "Pain fell."})
    for pmid in BEYOND:
        title, abstract, _ = ARTICLES[SUPPORTING]
        Article.objects.get_or_create(pmid=pmid, defaults={"title": title, "abstract": abstract})
    question = admission.question_create(text=text, user=user, enqueue=False)
    ranked = [SILENT, SUPPORTING, *FILLER, CONTRADICTING, *BEYOND]
    RetrievedDocument.objects.bulk_create(
        RetrievedDocument(question=question, rank=rank, pmid=pmid, score=1 / rank, lexical_score=1, semantic_score=0)
        for rank, pmid in enumerate(ranked, start=1)
    )
    Question.objects.filter(pk=question.pk).update(
        answer_text=ANSWER, context={"given": ranked[:CONSENSUS_ABSTRACTS]}, status=Question.Status.GENERATING
    )
    return question


def _verified(user: User | None = None, text: str = QUESTION) -> Question:
    question = _answered(user, text)
    verify.question_verify(question_id=question.pk)
    return Question.objects.get(pk=question.pk)


def test_the_verify_stage_stores_the_consensus_of_the_first_ten_abstracts(fake_verifier: None) -> None:
    question = _verified()

    assert question.status == Question.Status.DONE
    assert question.verification_status == Question.Verification.VERIFIED
    assert question.sentences.get().verdict == "SUPPORT", "the answer's own verdicts are stored as before"
    consensus = question.consensus
    assert consensus["claim"] == CLAIM
    assert consensus["read"] == CONSENSUS_ABSTRACTS == 10
    counts = [consensus[key] for key in ("support", "contradict", "no_evidence", "unclear")]
    assert counts == [1, 1, 8, 0]
    assert consensus["pmids"] == {
        "support": [SUPPORTING],
        "contradict": [CONTRADICTING],
        "no_evidence": [SILENT, *FILLER],
        "unclear": [],
    }
    assert not set(BEYOND) & set(consensus["verdicts"]), "abstracts ranked after the first ten are not read"
    assert consensus["speaking_minimum"] == 5
    assert consensus["verdicts"][SUPPORTING]["label"] == "SUPPORT"
    assert consensus["verdicts"][SUPPORTING]["evidence_spans"] == [[0, len(ARTICLES[SUPPORTING][1])]]
    assert "consensus" in question.timings_ms
    json.dumps(consensus)  # stored as plain JSON


def test_each_vote_weighs_by_how_close_the_dense_search_found_its_abstract(fake_verifier: None) -> None:
    """The stored dense scores of the ten abstracts read give each vote its relevance: the supporting abstract is the
    closest, the contradicting one the farthest, so under a rule that weighs relevance only the first votes."""
    question = _answered(None)
    closeness = {SUPPORTING: 0.9, CONTRADICTING: 0.1, SILENT: 0.5}
    for document in question.retrieved.all():
        document.semantic_score = closeness.get(document.pmid, 0.3)
        document.save(update_fields=["semantic_score"])
    rule = BottomLineRule(rank_decay=1.0, unclear_weight=1.0, minimum_weight=0.1, majority=0.6, relevance_power=2)

    consensus = question_consensus(question=question, verifier=answer_verifier(default_pipeline_settings()), rule=rule)
    flat = question_consensus(
        question=question,
        verifier=answer_verifier(default_pipeline_settings()),
        rule=BottomLineRule(rank_decay=1.0, unclear_weight=1.0, minimum_weight=0.1, majority=0.6),
    )

    assert consensus is not None
    assert flat is not None
    assert consensus["bottom_line"]["answer"] == "yes"
    assert consensus["bottom_line"]["no_pmids"] == [], "the farthest abstract's relevance is 0: it takes no side"
    assert flat["bottom_line"]["answer"] == "mixed", "without relevance the two sides weigh alike"
    assert flat["bottom_line"]["no_pmids"] == [CONTRADICTING]


def test_the_candidate_the_dense_search_found_closest_is_read_beyond_the_first_ten(
    fake_verifier: None, role_users: dict[str, User], researcher_client: Client
) -> None:
    """Fusion ranked it 12th (`BEYOND[1]`), so only the retrieve stage's closest candidate brings it in: it is read and
    votes, and the stored consensus and the export say what was read."""
    question = _answered(role_users[RESEARCHER])
    # The same search scored the sources: the dense leg's closest has the top normalised score wherever it ranks.
    question.retrieved.filter(pmid=BEYOND[1]).update(semantic_score=1.0)
    Question.objects.filter(pk=question.pk).update(closest_candidate={"pmid": BEYOND[1], "semantic_score": 1.0})
    verify.question_verify(question_id=question.pk)
    consensus = Question.objects.get(pk=question.pk).consensus

    assert consensus["read"] == CONSENSUS_ABSTRACTS + 1
    assert consensus["closest_read"] == BEYOND[1]
    assert consensus["pmids"]["support"] == [SUPPORTING, BEYOND[1]]
    assert BEYOND[0] not in consensus["verdicts"], "the other abstracts ranked after the first ten are not read"
    assert BEYOND[1] in consensus["bottom_line"]["yes_pmids"], "it votes"
    by_relevance = question_consensus(
        question=Question.objects.get(pk=question.pk),
        verifier=answer_verifier(default_pipeline_settings()),
        rule=BottomLineRule(rank_decay=1.0, unclear_weight=1.0, minimum_weight=0.1, majority=0.6, relevance_power=2),
    )
    assert by_relevance is not None
    weights = by_relevance["bottom_line"]["weights"]
    assert weights[BEYOND[1]] > 0 == weights.get(SUPPORTING, 0), "its dense score is the highest of those read"
    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()
    assert (
        "Of the first 10 abstracts retrieved and the one the search found closest to the question, 2 support it, "
        "1 contradicts it, 8 say nothing about it and 0 are unclear." in markdown
    )


def test_a_closest_candidate_among_the_first_ten_is_read_once(fake_verifier: None) -> None:
    question = _answered(None)
    Question.objects.filter(pk=question.pk).update(closest_candidate={"pmid": SILENT, "semantic_score": 1.0})
    verify.question_verify(question_id=question.pk)
    consensus = Question.objects.get(pk=question.pk).consensus

    assert consensus["read"] == CONSENSUS_ABSTRACTS
    assert consensus["closest_read"] is None


# The LLM's reading alone decides under this rule: it outweighs any abstract's vote.
READ_BY_MODEL = BottomLineRule(
    rank_decay=1.0, unclear_weight=1.0, minimum_weight=0.1, majority=0.6, model_weight=5.0, model_cut=0.0
)


def _closest(question: Question, pmid: str) -> None:
    for document in question.retrieved.all():
        document.semantic_score = 0.9 if document.pmid == pmid else 0.3
        document.save(update_fields=["semantic_score"])


def test_the_answer_models_reading_of_the_closest_abstract_is_one_more_voice(fake_verifier: None) -> None:
    """The fake LLM leans no (log-odds +1) on an abstract negated where the question is not; read through the same
    logit-bias bisection as a real server, its reading of the closest abstract (the contradicting one here) is stored
    and outweighs the votes under a rule that weighs it so."""
    question = _answered(None)
    _closest(question, CONTRADICTING)
    fake = LLMSettings(base_url="http://unused", model="fake", server_kind="fake")
    reader = YesNoReader(FakeLLM(fake), FakeTokenCounter(fake))
    verifier = answer_verifier(default_pipeline_settings())

    read = question_consensus(question=question, verifier=verifier, rule=READ_BY_MODEL, read_model=reader.log_odds_no)
    unweighed = question_consensus(
        question=question, verifier=verifier, rule=BottomLineRule(), read_model=reader.log_odds_no
    )

    assert read is not None
    assert unweighed is not None
    line = read["bottom_line"]
    assert line["model_reading"]["pmid"] == CONTRADICTING
    assert line["model_reading"]["side"] == "no"
    assert line["model_reading"]["log_odds_no"] == pytest.approx(1.0, abs=0.2)
    assert line["model_reading"]["weight"] == 5.0
    assert line["answer"] == "no"
    assert line["model_reading_failed"] is False
    assert unweighed["bottom_line"]["model_reading"] is None, "a rule that does not weigh it does not ask for it"


def test_a_model_that_cannot_be_asked_leaves_the_bottom_line_to_the_votes_and_says_so(fake_verifier: None) -> None:
    question = _answered(None)

    def down(question: str, title: str, abstract: str) -> float:
        raise LLMUnavailableError("the language model server at http://127.0.0.1:9 is unreachable")

    consensus = question_consensus(
        question=question, verifier=answer_verifier(default_pipeline_settings()), rule=READ_BY_MODEL, read_model=down
    )

    assert consensus is not None
    line = consensus["bottom_line"]
    assert (line["model_reading"], line["model_reading_failed"]) == (None, True)
    assert line["answer"] in ("yes", "no", "mixed", "not_enough")


def test_the_verify_stage_asks_the_configured_model_when_the_rule_weighs_its_reading(
    fake_verifier: None, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_SERVER_KIND="fake")
    monkeypatch.setattr(verify, "bottom_line_rule", lambda model: READ_BY_MODEL)
    question = _answered(None)
    _closest(question, CONTRADICTING)

    verify.question_verify(question_id=question.pk)

    line = Question.objects.get(pk=question.pk).consensus["bottom_line"]
    assert line["model_reading"]["pmid"] == CONTRADICTING
    assert line["answer"] == "no"


def test_a_question_not_asked_yes_or_no_has_no_consensus(fake_verifier: None) -> None:
    question = _verified(text="What does zorvistatin do to blood pressure?")
    assert question.status == Question.Status.DONE
    assert question.consensus is None
    assert "consensus" not in question.timings_ms


def test_a_question_whose_sources_hold_no_pubmed_abstract_has_no_consensus(fake_verifier: None) -> None:
    # Asked of the asker's own library alone: its pages are not what the consensus and its bottom line read.
    question = _answered(None, QUESTION)
    question.retrieved.all().delete()
    RetrievedDocument.objects.create(
        question=question, rank=1, pmid="DOC:7:p2", score=1, lexical_score=1, semantic_score=0
    )

    verify.question_verify(question_id=question.pk)

    question.refresh_from_db()
    assert question.status == Question.Status.DONE
    assert question.consensus is None


def test_a_consensus_that_fails_is_logged_and_left_out_while_the_answer_is_verified(
    fake_verifier: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the classifier ran out of memory")

    monkeypatch.setattr(consensus_module, "claim_consensus", broken)
    with caplog.at_level(logging.ERROR, logger="webapp.qa.consensus"):
        question = _verified()

    assert question.status == Question.Status.DONE
    assert question.verification_status == Question.Verification.VERIFIED
    assert question.sentences.get().citations.get().label == "SUPPORT"
    assert question.consensus is None
    assert f"question {question.pk}: the consensus could not be made" in caplog.text
    assert "the classifier ran out of memory" in caplog.text  # the traceback is logged


def test_a_retried_verification_replaces_the_consensus(fake_verifier: None) -> None:
    question = _verified()
    Article.objects.filter(pmid=CONTRADICTING).update(abstract="Zorvistatin lowers blood pressure, again.")
    Question.objects.filter(pk=question.pk).update(status=Question.Status.GENERATING)
    verify.question_verify(question_id=question.pk)
    question.refresh_from_db()
    assert question.consensus["pmids"]["support"] == [SUPPORTING, CONTRADICTING]
    assert question.consensus["contradict"] == 0


def test_the_page_json_and_the_api_carry_the_consensus(
    fake_verifier: None, role_users: dict[str, User], researcher_client: Client
) -> None:
    question = _verified(role_users[RESEARCHER])
    page = researcher_client.get(f"/questions/{question.pk}.json").json()
    api = researcher_client.get(f"/api/v1/questions/{question.pk}").json()

    assert page["consensus"] == question.consensus
    # The API's is the same, as far as its schema describes it (the verdicts' leaning and probabilities included).
    verdict_keys = {"label", "confidence", "evidence_spans", "leaning", "probabilities"}
    listed = {
        pmid: {key: verdict[key] for key in verdict_keys} for pmid, verdict in page["consensus"]["verdicts"].items()
    }
    assert api["consensus"] == {**page["consensus"], "verdicts": listed}
    assert {"support", "contradict", "no_evidence", "unclear", "pmids"} <= set(api["consensus"])
    # Each listed abstract is among the page's sources, where its badges come from.
    sources = {doc["pmid"]: doc["source"] for doc in page["retrieved"]}
    assert sources[CONTRADICTING]["study_design"]["label"] == "Meta-analysis"


def test_other_questions_carry_a_null_consensus(fake_verifier: None, role_users: dict[str, User]) -> None:
    client = Client()
    client.force_login(role_users[RESEARCHER])
    question = _verified(role_users[RESEARCHER], text="Which drugs lower blood pressure?")
    assert client.get(f"/api/v1/questions/{question.pk}").json()["consensus"] is None


def test_the_answer_page_has_a_consensus_section_its_script_fills(
    fake_verifier: None, role_users: dict[str, User], researcher_client: Client
) -> None:
    question = _verified(role_users[RESEARCHER])
    page = researcher_client.get(f"/questions/{question.pk}/").content.decode()
    assert '<section id="consensus" class="consensus" aria-labelledby="consensus-heading" hidden>' in page
    assert '<h2 id="consensus-heading">Consensus</h2>' in page
    script = (django_settings.BASE_DIR / "static" / "verimed.js").read_text()
    assert "function renderConsensus(data)" in script
    # Text goes into the page as textContent only.
    assert ".innerHTML" not in script
    assert "insertAdjacentHTML" not in script


def test_the_markdown_export_lists_each_count_with_its_papers_and_says_when_too_few_speak(
    fake_verifier: None, role_users: dict[str, User], researcher_client: Client
) -> None:
    question = _verified(role_users[RESEARCHER])
    article_retracted(pmid=CONTRADICTING)
    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()
    lines = markdown.splitlines()

    section = lines[lines.index("## Consensus") : lines.index("## References")]
    assert f"Checked as the claim: *{CLAIM}*" in section
    assert (
        "Of the first 10 abstracts retrieved, 1 supports it, 1 contradicts it, 8 say nothing about it and 0 are "
        "unclear." in section
    )
    assert f"- Support (1): PMID {SUPPORTING} (Randomised controlled trial)" in section
    assert f"- Contradict (1): PMID {CONTRADICTING} (Retracted; Meta-analysis)" in section
    assert f"- No evidence (8): PMID {SILENT}, PMID {FILLER[0]}," in "\n".join(section)
    assert "- Unclear (0): none" in section
    assert (
        "**Too few to call a consensus:** 2 abstracts speak to it (support or contradict it), fewer than 5." in section
    )


def test_a_question_without_consensus_exports_no_consensus_section(
    fake_verifier: None, role_users: dict[str, User], researcher_client: Client
) -> None:
    question = _verified(role_users[RESEARCHER], text="Which drugs lower blood pressure?")
    assert "## Consensus" not in researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()


# Two real abstracts: a PubMedQA abstract whose question is answered "yes" (PQA-L, PMID 14872327) and an unrelated
# BioASQ benchmark abstract (PMID 21303301, prenatal diagnosis of trisomy 21).
REAL_QUESTION_PMID, UNRELATED_PMID = "14872327", "21303301"


def _real_abstracts() -> tuple[str, dict[str, tuple[str, str]]]:
    import gzip

    data = django_settings.VERIMED.paths.data_dir
    item = json.loads((data / "pubmedqa" / "ori_pqal.json").read_text())[REAL_QUESTION_PMID]
    with gzip.open(data / "bioasq" / "benchmark" / "corpus.jsonl.gz", "rt", encoding="utf-8") as corpus:
        text = next(row["text"] for line in corpus if (row := json.loads(line))["pmid"] == UNRELATED_PMID)
    title, _, abstract = text.partition(". ")  # the benchmark stores "Title. Abstract"
    return item["QUESTION"], {
        REAL_QUESTION_PMID: ("", " ".join(item["CONTEXTS"])),  # PubMedQA keeps no title
        UNRELATED_PMID: (title + ".", abstract),
    }


@pytest.mark.model
def test_the_real_verifier_finds_support_in_the_abstract_that_answers_and_nothing_in_an_unrelated_one() -> None:
    text, abstracts = _real_abstracts()
    assert text == "Is pain a clinically relevant problem in general adult psychiatry?"
    for pmid, (title, abstract) in abstracts.items():
        Article.objects.create(pmid=pmid, title=title, abstract=abstract)
    question = admission.question_create(text=text, enqueue=False)
    for rank, pmid in enumerate(abstracts, start=1):
        RetrievedDocument.objects.create(
            question=question, rank=rank, pmid=pmid, score=1 / rank, lexical_score=1, semantic_score=0
        )

    consensus = question_consensus(
        question=question, verifier=answer_verifier(default_pipeline_settings()), rule=BottomLineRule()
    )

    assert consensus is not None
    assert consensus["claim"] == "Pain is a clinically relevant problem in general adult psychiatry."
    assert consensus["read"] == 2
    assert consensus["pmids"]["support"] == [REAL_QUESTION_PMID]
    assert consensus["pmids"]["no_evidence"] == [UNRELATED_PMID]
    assert (consensus["contradict"], consensus["unclear"]) == (0, 0)
    assert consensus["bottom_line"]["yes_pmids"] == [REAL_QUESTION_PMID], "not retracted, it votes yes"
    support = consensus["verdicts"][REAL_QUESTION_PMID]
    assert support["confidence"] > 0.5
    start, end = support["evidence_spans"][0]
    assert "pain" in abstracts[REAL_QUESTION_PMID][1][start:end].lower()


@pytest.mark.model
def test_a_retracted_abstract_is_read_but_never_votes_in_the_bottom_line() -> None:
    """The abstract that answers the question, retracted: the real verifier still finds its support (the meter shows
    it), but the bottom line keeps it out of the vote and names it, so nothing is left to vote for yes."""
    text, abstracts = _real_abstracts()
    for pmid, (title, abstract) in abstracts.items():
        Article.objects.create(pmid=pmid, title=title, abstract=abstract)
    Article.objects.filter(pmid=REAL_QUESTION_PMID).update(retraction_status=Article.Retraction.RETRACTED)
    question = admission.question_create(text=text, enqueue=False)
    for rank, pmid in enumerate(abstracts, start=1):
        RetrievedDocument.objects.create(
            question=question, rank=rank, pmid=pmid, score=1 / rank, lexical_score=1, semantic_score=0
        )

    consensus = question_consensus(
        question=question, verifier=answer_verifier(default_pipeline_settings()), rule=BottomLineRule()
    )

    assert consensus is not None
    assert consensus["pmids"]["support"] == [REAL_QUESTION_PMID], "read and shown in the meter as before"
    bottom_line = consensus["bottom_line"]
    assert bottom_line["retracted_pmids"] == [REAL_QUESTION_PMID]
    assert REAL_QUESTION_PMID not in bottom_line["yes_pmids"] + bottom_line["no_pmids"]
    assert REAL_QUESTION_PMID not in bottom_line["weights"]
    assert bottom_line["rests_on"] == 0
    assert bottom_line["answer"] == "not_enough"


# Asked yes or no by its form, but the rewrite cannot read its claim: no abstract can be checked against it.
UNREADABLE = "Zorvistatin for blood pressure: is it worth it?"


def test_a_yes_no_question_whose_claim_cannot_be_read_gets_the_models_reading_alone(fake_verifier: None) -> None:
    question = _answered(None, UNREADABLE)
    _closest(question, CONTRADICTING)
    fake = LLMSettings(base_url="http://unused", model="fake", server_kind="fake")
    reader = YesNoReader(FakeLLM(fake), FakeTokenCounter(fake))
    verifier = answer_verifier(default_pipeline_settings())

    consensus = question_consensus(
        question=question, verifier=verifier, rule=READ_BY_MODEL, read_model=reader.log_odds_no
    )

    assert consensus is not None
    assert (consensus["claim"], consensus["read"], consensus["verdicts"]) == (None, 0, {})
    line = consensus["bottom_line"]
    assert (line["model_alone"], line["rests_on"], line["yes_pmids"], line["no_pmids"]) == (True, 0, [], [])
    # The fake LLM leans no on the negated abstract the dense search put closest; alone, that reading decides.
    assert (line["model_reading"]["pmid"], line["model_reading"]["side"], line["answer"]) == (CONTRADICTING, "no", "no")
    _closest(question, SUPPORTING)
    again = question_consensus(question=question, verifier=verifier, rule=READ_BY_MODEL, read_model=reader.log_odds_no)
    assert again is not None
    assert (again["bottom_line"]["model_reading"]["pmid"], again["bottom_line"]["answer"]) == (SUPPORTING, "yes")


def test_without_the_models_reading_an_unreadable_claim_has_no_consensus(fake_verifier: None) -> None:
    question = _answered(None, UNREADABLE)
    fake = LLMSettings(base_url="http://unused", model="fake", server_kind="fake")
    reader = YesNoReader(FakeLLM(fake), FakeTokenCounter(fake))
    verifier = answer_verifier(default_pipeline_settings())

    def down(question: str, title: str, abstract: str) -> float:
        raise LLMUnavailableError("the language model server at http://127.0.0.1:9 is unreachable")

    # A rule that does not weigh the reading, no model to ask, or a model that cannot be asked: nothing to go on.
    assert (
        question_consensus(question=question, verifier=verifier, rule=BottomLineRule(), read_model=reader.log_odds_no)
        is None
    )
    assert question_consensus(question=question, verifier=verifier, rule=READ_BY_MODEL, read_model=None) is None
    assert question_consensus(question=question, verifier=verifier, rule=READ_BY_MODEL, read_model=down) is None


def test_the_models_reading_alone_is_said_as_such_on_the_page_the_api_and_the_export(
    fake_verifier: None,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    role_users: dict[str, User],
    researcher_client: Client,
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_SERVER_KIND="fake")
    monkeypatch.setattr(verify, "bottom_line_rule", lambda model: READ_BY_MODEL)
    question = _answered(role_users[RESEARCHER], UNREADABLE)
    _closest(question, CONTRADICTING)

    verify.question_verify(question_id=question.pk)

    stored = Question.objects.get(pk=question.pk).consensus
    api = researcher_client.get(f"/api/v1/questions/{question.pk}").json()
    assert api["consensus"] == stored
    assert api["consensus"]["claim"] is None
    assert api["consensus"]["bottom_line"]["model_alone"] is True
    page = researcher_client.get(f"/questions/{question.pk}/").content.decode()
    assert "alone; no abstract votes, as the verifier could not read this question as a claim to check." in page
    assert "leans no; that reading alone decides this bottom line:" in page
    assert f'data-pmid="{CONTRADICTING}"' in page
    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()
    assert "## Bottom line" in markdown
    assert "## Consensus" not in markdown, "no claim was checked, so there are no counts to list"
    assert "- Vote yes" not in markdown
    assert f"that reading alone decides this bottom line: PMID {CONTRADICTING}" in markdown


def test_the_verify_stage_tokenizes_the_yes_and_no_spellings_once_per_served_model(
    fake_verifier: None, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_SERVER_KIND="fake")
    monkeypatch.setattr(verify, "bottom_line_rule", lambda model: READ_BY_MODEL)
    llm_module._yes_no_reader.cache_clear()
    asked: list[str] = []
    token_ids = FakeTokenCounter.token_ids
    monkeypatch.setattr(FakeTokenCounter, "token_ids", lambda self, text: asked.append(text) or token_ids(self, text))

    for _ in range(2):
        question = _answered(None)
        verify.question_verify(question_id=question.pk)
        assert Question.objects.get(pk=question.pk).consensus["bottom_line"]["model_reading"] is not None

    assert sorted(asked) == sorted([*YES_SPELLINGS, *NO_SPELLINGS]), "once for both questions"


def test_the_answer_models_own_stance_shows_a_disagreement_the_verifier_cannot_read(
    model_decides: None, role_users: dict[str, User], researcher_client: Client
) -> None:
    """The bottom line is No (the model's reading of the contradicting abstract decides it); the answer opens with
    "Yes" in words the verifier cannot read against the claim, so only the answer model's own stance finds the
    disagreement, and the page and the API both show it."""
    question = _answered(role_users[RESEARCHER])
    _closest(question, CONTRADICTING)
    Question.objects.filter(pk=question.pk).update(answer_text=f"Yes: the trials agree (PUBMED:{SUPPORTING}).")

    verify.question_verify(question_id=question.pk)

    line = Question.objects.get(pk=question.pk).consensus["bottom_line"]
    assert line["answer"] == "no"
    assert line["answer_stance"] is None, "the verifier finds no side in the answer's words"
    assert (line["answer_model_stance"], line["answer_disagrees"]) == ("yes", True)
    page = researcher_client.get(f"/questions/{question.pk}/").content.decode()
    assert 'id="bottom-line-disagrees"' in page
    assert "The written answer below says yes, but the bottom line says No: read the sources." in page
    api = researcher_client.get(f"/api/v1/questions/{question.pk}").json()["consensus"]["bottom_line"]
    assert (api["answer_model_stance"], api["answer_disagrees"]) == ("yes", True)


def test_the_answer_models_stance_is_asked_only_of_a_yes_or_a_no(fake_verifier: None) -> None:
    """Under a rule that weighs every vote alike, one yes and one no make Mixed evidence: nothing to disagree with."""
    question = _answered(None)
    asked: list[str] = []

    def read_answer_stance() -> str:
        asked.append("asked")
        return "yes"

    consensus = question_consensus(
        question=question,
        verifier=answer_verifier(default_pipeline_settings()),
        rule=BottomLineRule(rank_decay=1.0, unclear_weight=1.0, minimum_weight=0.1, majority=0.6),
        answer_text=ANSWER,
        read_answer_stance=read_answer_stance,
    )

    assert consensus is not None
    assert consensus["bottom_line"]["answer"] == "mixed"
    assert (consensus["bottom_line"]["answer_model_stance"], asked) == (None, [])
    assert consensus["bottom_line"]["answer_disagrees"] is False


def test_a_model_that_cannot_read_the_answers_stance_leaves_the_check_to_the_verifier(
    fake_verifier: None, caplog: pytest.LogCaptureFixture
) -> None:
    question = _answered(None)
    _closest(question, CONTRADICTING)
    fake = LLMSettings(base_url="http://unused", model="fake", server_kind="fake")
    reader = YesNoReader(FakeLLM(fake), FakeTokenCounter(fake))

    def down() -> str:
        raise LLMUnavailableError("the language model server at http://127.0.0.1:9 is unreachable")

    with caplog.at_level(logging.WARNING, logger="webapp.qa.consensus"):
        consensus = question_consensus(
            question=question,
            verifier=answer_verifier(default_pipeline_settings()),
            rule=READ_BY_MODEL,
            answer_text=ANSWER,
            read_model=reader.log_odds_no,
            read_answer_stance=down,
        )

    assert consensus is not None
    line = consensus["bottom_line"]
    assert line["answer"] == "no"
    assert line["answer_model_stance"] is None
    # The verifier reads the answer ("Zorvistatin lowers blood pressure") as yes: the disagreement is still found.
    assert (line["answer_stance"], line["answer_disagrees"]) == ("yes", True)
    assert f"question {question.pk}: the answer model's stance could not be read" in caplog.text


@pytest.fixture
def model_decides(fake_verifier: None, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake answer model, under a rule that weighs its reading of the closest abstract enough to decide."""
    settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_SERVER_KIND="fake")
    monkeypatch.setattr(generate, "bottom_line_rule", lambda model: READ_BY_MODEL)
    monkeypatch.setattr(verify, "bottom_line_rule", lambda model: READ_BY_MODEL)


def _prompts_sent(monkeypatch: pytest.MonkeyPatch) -> list[AnswerPrompt]:
    sent: list[AnswerPrompt] = []
    real = generate.generate_answer

    def recording(llm: Any, prompt: AnswerPrompt, *args: Any, **kwargs: Any) -> Any:
        sent.append(prompt)
        return real(llm, prompt, *args, **kwargs)

    monkeypatch.setattr(generate, "generate_answer", recording)
    return sent


def test_the_bottom_line_is_decided_before_the_answer_which_opens_with_it(
    model_decides: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = _answered(None)
    _closest(question, CONTRADICTING)
    sent = _prompts_sent(monkeypatch)

    generate.question_generate(question_id=question.pk)

    question.refresh_from_db()
    assert question.context["bottom_line_first"] == "no"
    assert question.consensus["bottom_line"]["answer"] == "no", "stored before the answer: the page shows it early"
    assert "consensus" in question.timings_ms
    [prompt] = sent
    assert prompt.messages[-1]["content"].endswith(BOTTOM_LINE_NOTES["no"])
    assert question.answer_text.startswith("No, ")  # the fake model opens as it is asked

    # The verify stage completes that consensus with what the answer says; it does not read the abstracts again.
    def read_again(*args: object, **kwargs: object) -> None:
        raise AssertionError("the abstracts were read a second time")

    monkeypatch.setattr(consensus_module, "claim_consensus", read_again)
    verify.question_verify(question_id=question.pk)

    line = Question.objects.get(pk=question.pk).consensus["bottom_line"]
    assert line["answer"] == "no"
    assert (line["answer_model_stance"], line["answer_disagrees"]) == ("no", False)
    assert "answer_stance" in Question.objects.get(pk=question.pk).timings_ms


def test_without_the_setting_the_bottom_line_comes_after_the_answer_as_before(
    model_decides: None, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.VERIMED = settings.VERIMED.replace(VERIMED_BOTTOM_LINE_FIRST="false")
    question = _answered(None)
    _closest(question, CONTRADICTING)
    sent = _prompts_sent(monkeypatch)

    generate.question_generate(question_id=question.pk)

    question.refresh_from_db()
    assert question.context["bottom_line_first"] is None
    assert question.consensus is None
    assert not any(note in sent[0].messages[-1]["content"] for note in BOTTOM_LINE_NOTES.values())
    verify.question_verify(question_id=question.pk)
    assert Question.objects.get(pk=question.pk).consensus["bottom_line"]["answer"] == "no"


def test_a_question_not_asked_yes_or_no_gets_no_bottom_line_in_its_prompt(
    model_decides: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = _answered(None, "What does zorvistatin do to blood pressure?")
    sent = _prompts_sent(monkeypatch)

    generate.question_generate(question_id=question.pk)

    question.refresh_from_db()
    assert (question.context["bottom_line_first"], question.consensus) == (None, None)
    assert not any(note in sent[0].messages[-1]["content"] for note in BOTTOM_LINE_NOTES.values())
