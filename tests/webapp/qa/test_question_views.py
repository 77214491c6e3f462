"""The question page, its JSON and the article JSON render stored rows; text from abstracts stays escaped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from tests.e2e.contrast import AA_NORMAL_TEXT, contrast_ratio
from tests.webapp.factories import unclear_sentence
from webapp.corpus.models import Article
from webapp.deepcheck.export import DEEP_VERDICT_LABELS
from webapp.pages.exports import VERDICT_LABELS
from webapp.qa.models import AnswerSentence, CitationVerdict, Question, RetrievedDocument
from webapp.review.display import VERDICT_DISPLAY

STATIC = Path(__file__).resolve().parents[3] / "static"

pytestmark = pytest.mark.django_db


@pytest.fixture
def answered() -> Question:
    Article.objects.create(
        pmid="123",
        title="<script>alert('title')</script>",
        abstract="First sentence here. Second sentence is the evidence. Third one.",
        journal="J Test",
        year=2020,
        authors=["Smith JA", "Doe B", "Roe C", "Poe D"],
        doi="10.1000/test.123",
    )
    question = Question.objects.create(
        text="Is it true?", status=Question.Status.DONE, answer_text="It is true (PUBMED:123). Also (PUBMED:999)."
    )
    RetrievedDocument.objects.create(
        question=question, rank=1, pmid="123", score=0.9, lexical_score=1.0, semantic_score=0.6
    )
    first = AnswerSentence.objects.create(
        question=question, position=0, text="It is true (PUBMED:123).", display_text="It is true.", verdict="SUPPORT"
    )
    CitationVerdict.objects.create(sentence=first, position=0, pmid="123", label="SUPPORT", evidence_sentences=[1])
    second = AnswerSentence.objects.create(
        question=question, position=1, text="Also (PUBMED:999).", display_text="Also.", verdict="NO_REFERENCE"
    )
    CitationVerdict.objects.create(sentence=second, position=0, pmid="999", label="NO_REFERENCE")
    return question


def test_the_json_carries_sentences_verdicts_and_sources(site_admin_client: Client, answered: Question) -> None:
    payload = site_admin_client.get(f"/questions/{answered.pk}.json").json()
    assert payload["status"] == "done"
    assert payload["sentences"][0]["verdicts"] == {
        "123": {
            "label": "SUPPORT",
            "confidence": None,
            "leaning": None,
            "raw_label": None,
            "probabilities": {},
            "raw_probabilities": {},
            "evidence_sentences": [1],
            "evidence_spans": [],
            "evidence_text": ["Second sentence is the evidence."],
        }
    }
    assert payload["sentences"][1]["citations"] == ["999"]
    assert payload["sentences"][1]["verdicts"]["999"]["evidence_text"] == []
    source = payload["retrieved"][0]["source"]
    assert source["url"] == "https://pubmed.ncbi.nlm.nih.gov/123/"
    assert source["authors"] == ["Smith JA", "Doe B", "Roe C", "Poe D"]
    assert source["doi"] == "10.1000/test.123"


def test_the_article_json_splits_the_abstract_with_offsets(site_admin_client: Client, answered: Question) -> None:
    article = site_admin_client.get("/articles/123.json").json()
    abstract = Article.objects.get(pmid="123").abstract
    assert [s["text"] for s in article["sentences"]][1] == "Second sentence is the evidence."
    for sentence in article["sentences"]:
        assert abstract[sentence["start"] : sentence["end"]] == sentence["text"]


def test_the_question_page_escapes_and_loads_the_renderer(site_admin_client: Client, answered: Question) -> None:
    page = site_admin_client.get(f"/questions/{answered.pk}/").content.decode()
    assert "Is it true?" in page
    assert "verimed.js" in page
    assert "answer-panel.js" in page
    assert 'id="sentence-panel"' in page
    assert 'data-read-only="false"' in page


def test_evidence_indices_past_the_abstract_are_left_out(site_admin_client: Client, answered: Question) -> None:
    CitationVerdict.objects.filter(pmid="123").update(evidence_sentences=[0, 7])
    payload = site_admin_client.get(f"/questions/{answered.pk}.json").json()
    assert payload["sentences"][0]["verdicts"]["123"]["evidence_text"] == ["First sentence here."]


def test_unknown_ids_are_404_not_500(site_admin_client: Client) -> None:
    assert site_admin_client.get("/questions/999/").status_code == 404
    assert site_admin_client.get("/questions/999.json").status_code == 404
    assert site_admin_client.get("/articles/nope.json").status_code == 404


def test_an_unclear_answer_reads_unclear_on_the_page_and_in_its_json(
    site_admin_client: Client, answered: Question
) -> None:
    unclear_sentence(question=answered, position=2, pmid="123")
    page = site_admin_client.get(f"/questions/{answered.pk}/").content.decode()
    assert '<li class="verdict-UNCLEAR"><span class="icon" aria-hidden="true">~</span> Unclear' in page
    sentence = site_admin_client.get(f"/questions/{answered.pk}.json").json()["sentences"][2]
    assert sentence["verdict"] == "UNCLEAR"
    assert sentence["verdicts"]["123"]["leaning"] == "SUPPORT"
    assert sentence["verdicts"]["123"]["evidence_text"] == ["Second sentence is the evidence."]


def _hex_rgb(colour: str) -> str:
    return "rgb({}, {}, {})".format(*(int(colour[index : index + 2], 16) for index in (1, 3, 5)))


def test_every_verdict_has_the_same_icon_and_words_on_every_page_and_in_the_exports(
    site_admin_client: Client, answered: Question
) -> None:
    script = (STATIC / "verimed.js").read_text()
    pairs = re.findall(r'^\s+([A-Z_]+): \["([^"]+)", "([^"]+)"\],$', script, re.M)
    in_script = {name: (icon, words) for name, icon, words in pairs}
    assert in_script == VERDICT_DISPLAY
    assert {name: words for name, (_, words) in VERDICT_DISPLAY.items()} == VERDICT_LABELS
    page = site_admin_client.get(f"/questions/{answered.pk}/").content.decode()
    for name, (icon, _) in VERDICT_DISPLAY.items():
        assert f'<li class="verdict-{name}"><span class="icon" aria-hidden="true">{icon}</span>' in page, name


def test_every_verdict_colour_meets_wcag_aa_for_text() -> None:
    rules = dict(re.findall(r"^\.verdict-([A-Z_]+) \{([^}]*)\}", (STATIC / "verimed.css").read_text(), re.M))
    # The answer's verdicts, and the deep check's (a sentence partly supported, a claim settled by another paper).
    assert set(rules) == set(VERDICT_DISPLAY) | set(DEEP_VERDICT_LABELS)
    for name, rule in rules.items():
        colours = dict(re.findall(r"(background|color): (#[0-9a-f]{6});", rule))
        ratio = contrast_ratio(_hex_rgb(colours["color"]), _hex_rgb(colours["background"]))
        assert ratio >= AA_NORMAL_TEXT, f"{name}: contrast {ratio:.2f} is below WCAG AA"
    assert len({rule for rule in rules.values()}) == len(rules), "each verdict has its own colours"
