"""Retraction and study-design badges on the answer page: what its JSON says about each source, the legend, the
warning place at the answer's top, the same words in the script as in the exports, and colours that meet WCAG AA."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from indexer.study_design import DESIGNS
from tests.e2e.contrast import AA_NORMAL_TEXT, contrast_ratio
from tests.webapp.factories import answer_with_references, article_retracted
from webapp.accounts.roles import RESEARCHER
from webapp.corpus.models import Article
from webapp.qa.models import Question
from webapp.qa.source_notes import NOTICE_PHRASES, RETRACTION_LABELS

STATIC = Path(__file__).resolve().parents[3] / "static"
HOSTILE_NOTICE = "<script>alert('notice')</script>"

pytestmark = pytest.mark.django_db


@pytest.fixture
def question(role_users: dict[str, User]) -> Question:
    question = answer_with_references(user=role_users[RESEARCHER])
    article_retracted(pmid="10000001", notice=HOSTILE_NOTICE)
    Article.objects.filter(pmid="10000002").update(
        publication_types=["Case Reports"], retraction_status=Article.Retraction.CONCERN
    )
    return question


def test_each_source_in_the_json_carries_its_status_notices_and_design(
    researcher_client: Client, question: Question
) -> None:
    retrieved = researcher_client.get(f"/questions/{question.pk}.json").json()["retrieved"]
    first, second = (doc["source"] for doc in retrieved)
    assert first["retraction"] == {
        "status": "retracted",
        "notices": [{"ref_type": "RetractionIn", "pmid": "90000101", "source": HOSTILE_NOTICE}],
    }
    assert first["study_design"] is None
    assert second["retraction"]["status"] == "concern"
    assert second["study_design"] == {"key": "case-report", "label": "Case report"}


def test_the_answer_page_has_the_warning_place_the_legend_and_the_badge_script(
    researcher_client: Client, question: Question
) -> None:
    page = researcher_client.get(f"/questions/{question.pk}/").content.decode()
    assert page.index('id="retraction-warning"') < page.index('id="answer"'), "the warning sits at the answer's top"
    for design in DESIGNS:
        assert f'<span class="source-badge design-badge">{design.label}</span>' in page
    for status, label in RETRACTION_LABELS.items():
        assert f'<span class="source-badge retraction-badge retraction-{status}">{label}</span>' in page
    assert page.index("source-badges.js") < page.index("verimed.js"), "verimed.js calls it"
    assert HOSTILE_NOTICE not in page, "notices reach the page through its JSON and textContent only"


def test_the_shared_page_shows_the_legend_too(researcher_client: Client, question: Question) -> None:
    researcher_client.post(f"/questions/{question.pk}/share")
    question.refresh_from_db()
    page = researcher_client.get(f"/shared/{question.share_token}/").content.decode()
    assert 'id="source-badge-legend"' in page


def test_the_script_uses_the_words_of_the_exports_and_no_markup() -> None:
    script = (STATIC / "source-badges.js").read_text()
    labels = dict(re.findall(r'^\s+(\w+): \["([^"]+)", "[^"]+"\],$', script, re.M))
    assert labels == {str(status): label for status, label in RETRACTION_LABELS.items()}
    phrases = dict(re.findall(r'^\s+(\w+): "([^"]+)",$', script, re.M))
    assert phrases == NOTICE_PHRASES
    assert "innerHTML" not in script


def _hex_rgb(colour: str) -> str:
    return "rgb({}, {}, {})".format(*(int(colour[index : index + 2], 16) for index in (1, 3, 5)))


def test_every_badge_and_the_warning_meet_wcag_aa_for_text() -> None:
    css = (STATIC / "verimed.css").read_text()
    rules = dict(re.findall(r"^((?:\.[\w-]+(?:, )?)+) \{([^}]*)\}", css, re.M))
    checked = 0
    for selector, rule in rules.items():
        if not re.search(r"retraction-|design-badge", selector):
            continue
        colours = dict(re.findall(r"(background|color): (#[0-9a-f]{6});", rule))
        ratio = contrast_ratio(_hex_rgb(colours["color"]), _hex_rgb(colours["background"]))
        assert ratio >= AA_NORMAL_TEXT, f"{selector}: contrast {ratio:.2f} is below WCAG AA"
        checked += 1
    assert checked == 5  # retracted, concern, corrected and notice, design, the warning
    assert "#a1121a" in rules[".retraction-retracted"], "retracted is red"
