"""A yes/no question's bottom line wherever its consensus is shown: above the answer on its page and on its shared
page, in the page JSON and the API, and in the Markdown export before the consensus. A consensus stored before the
bottom line existed, and a question not asked yes or no, say nothing about one. Stored text stays inert.

The consensus is stored as the verify stage writes it (`webapp.qa.consensus.consensus_json`), from verdicts and a
bottom line given here, so each test says exactly which abstracts vote."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from tests.webapp.factories import answer_with_references
from verifier.bottom_line import BottomLine, ModelReading
from verifier.consensus import AbstractVerdict, Consensus
from webapp.accounts.roles import RESEARCHER
from webapp.qa.bottom_line_display import LIMITS
from webapp.qa.consensus import consensus_json
from webapp.qa.models import Question

pytestmark = pytest.mark.django_db

# answer_with_references retrieves the first two; the others were read for the consensus only.
YES_A, NO_A, YES_B, SILENT, RETRACTED = "10000001", "10000002", "30000003", "30000004", "30000005"
VOTES = (
    "Yes: mainly the votes of the 2 abstracts that lean yes; 1 abstract leans no; 0 could not be read with "
    "confidence. 1 other abstract read takes no side."
)
DISAGREEMENT = "The written answer below says no, but the bottom line says Yes: read the sources."
DISAGREEMENT_HTML = escape(DISAGREEMENT)  # the apostrophe, as the page's autoescape writes it


def _consensus(*, bottom_line: BottomLine | None, **facts: Any) -> dict[str, Any]:
    verdicts = [
        AbstractVerdict(pmid=YES_A, label="SUPPORT", confidence=0.9, evidence_spans=((0, 10),)),
        AbstractVerdict(pmid=NO_A, label="CONTRADICT", confidence=0.8, evidence_spans=()),
        AbstractVerdict(pmid=YES_B, label="UNCLEAR", confidence=0.55, evidence_spans=()),
        AbstractVerdict(pmid=SILENT, label="NO_EVIDENCE", confidence=0.9, evidence_spans=()),
        AbstractVerdict(pmid=RETRACTED, label="SUPPORT", confidence=0.9, evidence_spans=()),
    ]
    claim = "Metformin causes lactic acidosis."
    return consensus_json(Consensus(claim=claim, verdicts=tuple(verdicts)), bottom_line, **facts)


def _bottom_line(*, stance: str | None = "no", **changes: Any) -> BottomLine:
    """Yes, on two yes votes and one no; the written answer ("No ...") says no, so by default it disagrees."""
    values: dict[str, Any] = {
        "answer": "yes",
        "yes_weight": 1.3,
        "no_weight": 0.4,
        "yes_pmids": (YES_A, YES_B),
        "no_pmids": (NO_A,),
        "abstaining": 1,
        "retracted_pmids": (RETRACTED,),
        "stance": stance,
        "weights": {YES_A: 0.9, YES_B: 0.4, NO_A: 0.4},
    }
    return BottomLine(**{**values, **changes})


def _question(user: User, consensus: dict[str, Any] | None) -> Question:
    question = answer_with_references(user=user)
    Question.objects.filter(pk=question.pk).update(consensus=consensus)
    question.refresh_from_db()
    return question


@pytest.fixture
def with_bottom_line(role_users: dict[str, User]) -> Question:
    return _question(role_users[RESEARCHER], _consensus(bottom_line=_bottom_line()))


@pytest.fixture
def without_bottom_line(role_users: dict[str, User]) -> Question:
    """A consensus stored before the bottom line existed: no `bottom_line` key at all."""
    stored = _consensus(bottom_line=None)
    assert "bottom_line" not in stored
    return _question(role_users[RESEARCHER], stored)


@pytest.fixture
def not_yes_or_no(role_users: dict[str, User]) -> Question:
    return _question(role_users[RESEARCHER], None)


def _shared_url(client: Client, question: Question) -> str:
    assert client.post(f"/questions/{question.pk}/share").status_code == 302
    question.refresh_from_db()
    return f"/shared/{question.share_token}/"


def _pages(client: Client, question: Question) -> dict[str, str]:
    """The owner's answer page and its shared, read-only page."""
    return {
        "page": client.get(f"/questions/{question.pk}/").content.decode(),
        "shared": client.get(_shared_url(client, question)).content.decode(),
    }


def _section(page: str) -> str:
    match = re.search(r'<section id="bottom-line".*?</section>', page, re.S)
    assert match, "the page always has the section the script fills"
    return match.group(0)


def _buttons(section: str) -> list[str]:
    return re.findall(r'<button type="button" class="link-button" data-pmid="([^"]*)">', section)


def test_the_answer_page_and_the_shared_page_show_the_bottom_line_above_the_answer(
    researcher_client: Client, with_bottom_line: Question
) -> None:
    for name, page in _pages(researcher_client, with_bottom_line).items():
        assert page.index('id="bottom-line"') < page.index('id="answer-heading"'), name
        section = _section(page)
        assert " hidden" not in section.split(">", 1)[0], name
        assert 'class="bottom-line bottom-line-yes"' in section, name
        assert '<h2 id="bottom-line-heading">Bottom line: <span id="bottom-line-title">Yes</span></h2>' in section
        assert f'<p id="bottom-line-votes">{VOTES}</p>' in section, name
        yes, no = re.findall(r'<li data-side="(?:yes|no)">.*?</li>', section, re.S)
        assert yes.startswith('<li data-side="yes">Vote yes:'), name
        assert _buttons(yes) == [YES_A, YES_B], name
        assert no.startswith('<li data-side="no">Vote no:'), name
        assert _buttons(no) == [NO_A], name
        assert f">PMID {YES_A}</button>" in yes
        retracted = re.search(r'<p id="bottom-line-retracted".*?</p>', section, re.S)
        assert retracted, name
        assert "1 retracted paper did not vote:" in retracted.group(0), name
        assert _buttons(retracted.group(0)) == [RETRACTED], name
        assert LIMITS in section, name
        assert DISAGREEMENT_HTML in section, name


@pytest.mark.parametrize(("stance", "says"), [("no", True), ("yes", False), (None, False)])
def test_the_disagreement_is_said_only_when_the_written_answer_takes_the_other_side(
    researcher_client: Client, role_users: dict[str, User], stance: str | None, says: bool
) -> None:
    question = _question(role_users[RESEARCHER], _consensus(bottom_line=_bottom_line(stance=stance)))
    section = _section(researcher_client.get(f"/questions/{question.pk}/").content.decode())
    assert ('id="bottom-line-disagrees"' in section) is says
    assert (DISAGREEMENT_HTML in section) is says
    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()
    above = "**The written answer above says no, but the bottom line says Yes: read the sources.**"
    assert (above in markdown) is says
    assert "written answer" not in markdown.replace(above, "")


def test_a_bottom_line_no_one_votes_in_says_so_and_lists_no_voters(
    researcher_client: Client, role_users: dict[str, User]
) -> None:
    line = _bottom_line(
        answer="not_enough",
        yes_pmids=(),
        no_pmids=(),
        retracted_pmids=(),
        abstaining=5,
        weights={},
        stance=None,
        yes_weight=0.0,
        no_weight=0.0,
    )
    question = _question(role_users[RESEARCHER], _consensus(bottom_line=line))
    section = _section(researcher_client.get(f"/questions/{question.pk}/").content.decode())
    assert '<span id="bottom-line-title">Not enough evidence</span>' in section
    assert (
        # The fixture's Unclear abstract votes in no side here: it is said apart from the other four.
        "Not enough evidence: 0 abstracts lean yes; 0 abstracts lean no; 1 could not be read with confidence. "
        "4 other abstracts read take no side."
    ) in section
    assert "bottom-line-voters" not in section
    assert "retracted" not in section
    assert LIMITS in section


@pytest.mark.parametrize("fixture", ["without_bottom_line", "not_yes_or_no"])
def test_no_bottom_line_is_shown_or_mentioned_without_one(
    researcher_client: Client, request: pytest.FixtureRequest, fixture: str
) -> None:
    question: Question = request.getfixturevalue(fixture)
    for name, page in _pages(researcher_client, question).items():
        assert re.fullmatch(r'<section id="bottom-line"[^>]*hidden>\s*</section>', _section(page)), name
        assert "Bottom line" not in page, name
        assert LIMITS not in page, name
    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()
    assert "Bottom line" not in markdown
    assert LIMITS not in markdown
    assert ("## Consensus" in markdown) is (fixture == "without_bottom_line"), "the consensus itself is still there"


def test_the_page_json_the_shared_json_and_the_api_carry_the_bottom_line(
    researcher_client: Client, with_bottom_line: Question
) -> None:
    token = _shared_url(researcher_client, with_bottom_line).strip("/").split("/")[-1]
    assert with_bottom_line.consensus is not None
    stored = with_bottom_line.consensus["bottom_line"]
    for url in (
        f"/questions/{with_bottom_line.pk}.json",
        f"/shared/{token}.json",
        f"/api/v1/questions/{with_bottom_line.pk}",
    ):
        bottom_line = researcher_client.get(url).json()["consensus"]["bottom_line"]
        assert bottom_line == stored, url
        assert bottom_line["answer"] == "yes"
        assert bottom_line["title"] == "Yes"
        assert bottom_line["rests_on"] == 3
        assert (bottom_line["yes_pmids"], bottom_line["no_pmids"]) == ([YES_A, YES_B], [NO_A])
        assert bottom_line["retracted_pmids"] == [RETRACTED]
        assert (bottom_line["answer_stance"], bottom_line["answer_disagrees"]) == ("no", True)


def test_a_consensus_stored_without_a_bottom_line_reads_as_a_null_one_in_the_json_and_the_api(
    researcher_client: Client, without_bottom_line: Question
) -> None:
    for url in (f"/questions/{without_bottom_line.pk}.json", f"/api/v1/questions/{without_bottom_line.pk}"):
        consensus = researcher_client.get(url).json()["consensus"]
        assert consensus["bottom_line"] is None, url
        assert consensus["support"] == 2, "the rest of the stored consensus is as it was"


def test_a_question_not_asked_yes_or_no_still_has_a_null_consensus_in_the_api(
    researcher_client: Client, not_yes_or_no: Question
) -> None:
    assert researcher_client.get(f"/api/v1/questions/{not_yes_or_no.pk}").json()["consensus"] is None


def test_the_markdown_export_has_the_bottom_line_before_the_consensus(
    researcher_client: Client, with_bottom_line: Question
) -> None:
    token = _shared_url(researcher_client, with_bottom_line).strip("/").split("/")[-1]
    for url in (f"/questions/{with_bottom_line.pk}/export.md", f"/shared/{token}/export.md"):
        lines = researcher_client.get(url).content.decode().splitlines()
        section = lines[lines.index("## Bottom line") : lines.index("## Consensus")]
        assert lines.index("## Bottom line") < lines.index("## Consensus"), url
        assert f"**Yes.** {VOTES}" in section, url
        assert f"- Vote yes (2): PMID {YES_A}, PMID {YES_B}" in section, url
        assert f"- Vote no (1): PMID {NO_A}" in section, url
        assert f"- Retracted, kept out of the vote (1): PMID {RETRACTED}" in section, url
        assert f"*{LIMITS}*" in section, url


HOSTILE_PMID = '"><img src=x onerror=alert(1)>'
HOSTILE_TITLE = "<script>alert('bottom line')</script>"


def test_a_hostile_pmid_and_title_stay_inert_on_the_page_and_in_the_markdown(
    researcher_client: Client, role_users: dict[str, User]
) -> None:
    line = _bottom_line(yes_pmids=(HOSTILE_PMID,), retracted_pmids=(HOSTILE_PMID,), weights={HOSTILE_PMID: 0.9})
    stored = _consensus(bottom_line=line)
    stored["bottom_line"]["title"] = HOSTILE_TITLE
    question = _question(role_users[RESEARCHER], stored)

    for name, page in _pages(researcher_client, question).items():
        section = _section(page)
        assert "<script>" not in section, name
        assert "<img" not in section, name
        assert "&lt;script&gt;alert(&#x27;bottom line&#x27;)&lt;/script&gt;" in section, name
        assert 'data-pmid="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"' in section, name
    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()
    assert not re.search(r"(?<!\\)<(script|img)", markdown), "every < of stored text is escaped"
    assert r"**\<script\>alert('bottom line')\</script\>.**" in markdown
    assert '- Vote yes (1): "\\>\\<img src=x onerror=alert(1)\\>' in markdown


def test_the_script_fills_the_bottom_line_in_the_same_words_as_text_only() -> None:
    script = (django_settings.BASE_DIR / "static" / "verimed.js").read_text()
    assert "function renderBottomLine(data)" in script
    assert "renderBottomLine(data);" in script, "each poll keeps it current"
    assert f'"{LIMITS}"' in script
    for words in (
        "function decidedSentence(line, verdicts)",
        " could not be read with confidence",
        "the answer model's reading of ",
        "other abstracts read take no side.",
        "retracted papers did not vote:",
        "sources.",
    ):
        assert words in script
    assert ".innerHTML" not in script
    assert "insertAdjacentHTML" not in script


MODEL_SENTENCE = (
    "The answer model, reading the abstract closest to the question, leans no; its reading is counted in the bottom "
    "line above:"
)
MODEL_FAILED = "The answer model could not be asked to read the closest abstract: the votes above are the verifier's."


def test_the_answer_models_reading_is_shown_with_its_abstract_wherever_the_bottom_line_is(
    researcher_client: Client, role_users: dict[str, User]
) -> None:
    line = _bottom_line(model_reading=ModelReading(pmid=NO_A, log_odds_no=-1.2), model_side="no")
    question = _question(role_users[RESEARCHER], _consensus(bottom_line=line, model_weight=2.0))

    for name, page in _pages(researcher_client, question).items():
        model = re.search(r'<p id="bottom-line-model".*?</p>', _section(page), re.S)
        assert model, name
        assert escape(MODEL_SENTENCE) in model.group(0), name
        assert _buttons(model.group(0)) == [NO_A], name
    api = researcher_client.get(f"/api/v1/questions/{question.pk}").json()["consensus"]["bottom_line"]
    assert api["model_reading"] == {"pmid": NO_A, "side": "no", "log_odds_no": -1.2, "weight": 2.0}
    assert api["model_reading_failed"] is False
    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()
    assert f"- {MODEL_SENTENCE} PMID {NO_A}" in markdown


def test_a_model_that_could_not_be_asked_is_said(researcher_client: Client, role_users: dict[str, User]) -> None:
    failed = _question(role_users[RESEARCHER], _consensus(bottom_line=_bottom_line(), model_reading_failed=True))
    page = researcher_client.get(f"/questions/{failed.pk}/").content.decode()
    assert escape(MODEL_FAILED) in _section(page)
    assert f"- {MODEL_FAILED}" in researcher_client.get(f"/questions/{failed.pk}/export.md").content.decode()


def test_a_bottom_line_without_the_models_reading_says_nothing_of_it(
    researcher_client: Client, with_bottom_line: Question
) -> None:
    page = researcher_client.get(f"/questions/{with_bottom_line.pk}/").content.decode()
    assert 'id="bottom-line-model"' not in _section(page)
    assert "answer model" not in researcher_client.get(f"/questions/{with_bottom_line.pk}/export.md").content.decode()


def test_a_bottom_line_stored_before_the_models_reading_reads_as_one_without_it_in_the_api(
    researcher_client: Client, role_users: dict[str, User]
) -> None:
    stored = _consensus(bottom_line=_bottom_line())
    del stored["bottom_line"]["model_reading"], stored["bottom_line"]["model_reading_failed"]
    question = _question(role_users[RESEARCHER], stored)
    api = researcher_client.get(f"/api/v1/questions/{question.pk}").json()["consensus"]["bottom_line"]
    assert (api["model_reading"], api["model_reading_failed"]) == (None, False)


def test_the_script_says_the_models_reading_in_the_same_words() -> None:
    script = (django_settings.BASE_DIR / "static" / "verimed.js").read_text()
    assert '"The answer model, reading the abstract closest to the question, leans "' in script
    assert '"; its reading is counted in the bottom line above:"' in script
    assert f'"{MODEL_FAILED}"' in script


def test_a_bottom_line_the_models_reading_decides_says_so_first(
    researcher_client: Client, role_users: dict[str, User]
) -> None:
    line = _bottom_line(
        answer="no",
        yes_pmids=(YES_A,),
        no_pmids=(NO_A,),
        abstaining=2,
        weights={YES_A: 0.9, NO_A: 0.4},
        yes_weight=0.9,
        no_weight=4.4,
        stance=None,
        model_reading=ModelReading(pmid=NO_A, log_odds_no=-1.2),
        model_side="no",
    )
    question = _question(role_users[RESEARCHER], _consensus(bottom_line=line, model_weight=4.0))
    decided = (
        f"No: mainly the answer model's reading of PMID {NO_A} (counted as 4 votes); 1 abstract leans yes; "
        "1 abstract leans no; 1 could not be read with confidence. 1 other abstract read takes no side."
    )
    for name, page in _pages(researcher_client, question).items():
        assert f'<p id="bottom-line-votes">{escape(decided)}</p>' in _section(page), name
    markdown = researcher_client.get(f"/questions/{question.pk}/export.md").content.decode()
    assert "mainly the answer model's reading of PMID" in markdown
