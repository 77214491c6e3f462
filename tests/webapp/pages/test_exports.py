"""Exports: the answer as Markdown with numbered references, the cited papers as BibTeX and RIS that parse back;
same access rule as the answer page; hostile titles stay inert."""

from __future__ import annotations

import bibtexparser
import pytest
import rispy
from django.contrib.auth.models import User
from django.test import Client

from tests.webapp.factories import answer_with_references, article_retracted, unclear_sentence
from webapp.accounts.roles import RESEARCHER, user_assign_role
from webapp.corpus.models import Article
from webapp.pages.exports import ExportedAnswer, ExportedSentence, answer_markdown
from webapp.qa.models import Question

pytestmark = pytest.mark.django_db

KINDS = ("export.md", "references.bib", "references.ris")


@pytest.fixture
def question(role_users: dict[str, User]) -> Question:
    return answer_with_references(user=role_users[RESEARCHER])


def _download(client: Client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, path
    assert response["Content-Disposition"].startswith("attachment; filename=")
    return response.content.decode()


def test_the_markdown_has_the_question_verdicts_markers_and_references(
    researcher_client: Client, question: Question
) -> None:
    markdown = _download(researcher_client, f"/questions/{question.pk}/export.md")
    lines = markdown.splitlines()
    assert lines[0] == "# Does metformin cause lactic acidosis?"
    assert "- Metformin did not cause lactic acidosis. \\[1\\] — **Supported**" in lines
    assert (
        "- Everolimus inhibits mTORC1. \\[2\\] — **No evidence** (cites PUBMED:999, not one of the retrieved abstracts)"
        in lines
    )
    references = lines[lines.index("## References") :]
    assert references[2] == (
        "1. Smith JA, Doe B, Roe C, Poe D. Metformin and lactic acidosis. *Diabetes Care*. 2010. "
        "DOI: <https://doi.org/10.1000/dc.2010.33>. PubMed: <https://pubmed.ncbi.nlm.nih.gov/10000001/>"
    )
    assert references[3].startswith("2. RENAL Study Group. ")
    assert "999" not in "\n".join(references), "a paper the model was not given is not a reference"


def test_an_unclear_sentence_reads_unclear_in_the_markdown_and_its_paper_is_a_reference(
    researcher_client: Client, question: Question
) -> None:
    unclear_sentence(question=question, position=2, pmid="10000001")
    markdown = _download(researcher_client, f"/questions/{question.pk}/export.md")
    assert "- Metformin may lower HbA1c. \\[1\\] — **Unclear**" in markdown.splitlines()
    assert "UNCLEAR" not in markdown
    bibtex = bibtexparser.parse_string(_download(researcher_client, f"/questions/{question.pk}/references.bib"))
    assert [entry.key for entry in bibtex.entries] == ["pmid10000001", "pmid10000002"]


def test_a_hostile_title_stays_inert_in_the_markdown(researcher_client: Client, question: Question) -> None:
    markdown = _download(researcher_client, f"/questions/{question.pk}/export.md")
    assert "<script>" not in markdown
    assert "\\<script\\>alert('x')\\</script\\>" in markdown


def test_the_bibtex_parses_back_with_the_cited_papers_only(researcher_client: Client, question: Question) -> None:
    library = bibtexparser.parse_string(_download(researcher_client, f"/questions/{question.pk}/references.bib"))
    assert not library.failed_blocks, "an unbalanced brace in a title must not break the file"
    assert [entry.key for entry in library.entries] == ["pmid10000001", "pmid10000002"]
    first = library.entries[0].fields_dict
    assert first["author"].value == "Smith, JA and Doe, B and Roe, C and Poe, D"
    assert first["title"].value == "Metformin and lactic acidosis."
    assert first["journal"].value == "Diabetes Care"
    assert (first["year"].value, first["volume"].value, first["number"].value) == ("2010", "33", "2")
    assert first["pages"].value == "100--105"
    assert first["doi"].value == "10.1000/dc.2010.33"
    assert first["pmid"].value == "10000001"
    second = library.entries[1].fields_dict
    assert second["author"].value == "{RENAL Study Group}", "a group's name is kept whole"
    assert second["title"].value == (r"<script>alert('x')</script> \textbraceleft{}Unbalanced \& 50\% of cases\_x")


def test_the_ris_parses_back_with_the_cited_papers_only(researcher_client: Client, question: Question) -> None:
    entries = rispy.loads(_download(researcher_client, f"/questions/{question.pk}/references.ris"))
    assert len(entries) == 2
    first = entries[0]
    assert first["type_of_reference"] == "JOUR"
    assert first["title"] == "Metformin and lactic acidosis."
    assert first["authors"] == ["Smith, JA", "Doe, B", "Roe, C", "Poe, D"]
    assert (first["journal_name"], first["year"], first["doi"]) == ("Diabetes Care", "2010", "10.1000/dc.2010.33")
    assert (first["start_page"], first["end_page"]) == ("100", "105")
    assert first["urls"] == ["https://pubmed.ncbi.nlm.nih.gov/10000001/"]
    assert entries[1]["authors"] == ["RENAL Study Group"]


def test_exports_are_files_with_their_types(researcher_client: Client, question: Question) -> None:
    for kind, content_type in zip(
        KINDS, ("text/markdown", "application/x-bibtex", "application/x-research-info-systems"), strict=True
    ):
        response = researcher_client.get(f"/questions/{question.pk}/{kind}")
        assert response["Content-Type"].startswith(content_type)
        suffix = kind.rsplit(".", 1)[1]
        assert response["Content-Disposition"].endswith(f'.{suffix}"')


def test_another_researcher_gets_404_and_a_reviewer_may_export(
    reviewer_client: Client, question: Question, client: Client
) -> None:
    other = User.objects.create_user("other-researcher", password="another-long-password")
    user_assign_role(user=other, role=RESEARCHER)
    other_client = Client()
    other_client.force_login(other)
    for kind in KINDS:
        assert other_client.get(f"/questions/{question.pk}/{kind}").status_code == 404
        assert reviewer_client.get(f"/questions/{question.pk}/{kind}").status_code == 200
        assert client.get(f"/questions/{question.pk}/{kind}").status_code == 302, "anonymous: sign in first"


def test_a_share_link_exports_too(researcher_client: Client, question: Question) -> None:
    researcher_client.post(f"/questions/{question.pk}/share")
    question.refresh_from_db()
    other = User.objects.create_user("other-researcher", password="another-long-password")
    user_assign_role(user=other, role=RESEARCHER)
    other_client = Client()
    other_client.force_login(other)
    markdown = _download(other_client, f"/shared/{question.share_token}/export.md")
    assert markdown.startswith("# Does metformin cause lactic acidosis?")
    assert len(rispy.loads(_download(other_client, f"/shared/{question.share_token}/references.ris"))) == 2


def test_an_unfinished_answer_is_not_exported(researcher_client: Client, role_users: dict[str, User]) -> None:
    question = answer_with_references(user=role_users[RESEARCHER], status=Question.Status.VERIFYING)
    response = researcher_client.get(f"/questions/{question.pk}/export.md")
    assert response.status_code == 409
    assert "not finished" in response.content.decode()


def test_the_answer_page_links_the_exports(researcher_client: Client, question: Question) -> None:
    page = researcher_client.get(f"/questions/{question.pk}/").content.decode()
    for kind in KINDS:
        assert f'href="/questions/{question.pk}/{kind}" download' in page


def test_markdown_line_starts_cannot_turn_a_sentence_into_a_list_or_heading() -> None:
    answer = ExportedAnswer(
        question_id=1,
        question="# 1. *Why*?",
        answer_text="",
        sentences=(
            ExportedSentence(text="1990. A year [x](javascript:alert(1))", verdict="UNCITED", markers=(), unlinked=()),
        ),
        references=(),
        generator="",
        verifier="",
    )
    lines = answer_markdown(answer).splitlines()
    assert lines[0] == "# \\# 1. \\*Why\\*?"
    assert lines[4] == "- 1990\\. A year \\[x\\](javascript:alert(1)) — **Uncited**"
    assert "No abstracts were cited." in lines


# A retraction notice's citation text comes from PubMed, so it is as untrusted as a title.
HOSTILE_NOTICE = "<img src=x onerror=alert(1)> *Retraction* {of} it_x"


@pytest.fixture
def retracted_and_designed(question: Question) -> Question:
    article_retracted(pmid="10000001", notice_pmid="90000101", notice=HOSTILE_NOTICE)
    Article.objects.filter(pmid="10000002").update(publication_types=["Journal Article", "Meta-Analysis"])
    return question


def test_the_markdown_warns_at_its_top_and_notes_retraction_and_design(
    researcher_client: Client, retracted_and_designed: Question
) -> None:
    markdown = _download(researcher_client, f"/questions/{retracted_and_designed.pk}/export.md")
    lines = markdown.splitlines()
    warning = "**Warning: this answer cites a retracted paper:** \\[1\\] PMID 10000001. Read it with that in mind."
    assert lines.index(warning) < lines.index("- Metformin did not cause lactic acidosis. \\[1\\] — **Supported**")
    references = lines[lines.index("## References") :]
    assert references[2].endswith(
        "PubMed: <https://pubmed.ncbi.nlm.nih.gov/10000001/> **Retracted (Retraction in PMID 90000101: "
        "\\<img src=x onerror=alert(1)\\> \\*Retraction\\* {of} it\\_x).**"
    )
    assert references[3].endswith("Study design: Meta-analysis.")
    assert "<img src=x onerror=alert(1)>" not in markdown


def test_an_answer_citing_no_retracted_paper_has_no_warning(researcher_client: Client, question: Question) -> None:
    assert "Warning" not in _download(researcher_client, f"/questions/{question.pk}/export.md")


def test_bibtex_and_ris_carry_the_notes(researcher_client: Client, retracted_and_designed: Question) -> None:
    library = bibtexparser.parse_string(
        _download(researcher_client, f"/questions/{retracted_and_designed.pk}/references.bib")
    )
    assert not library.failed_blocks, "a brace in a notice must not break the file"
    notes = [entry.fields_dict["note"].value for entry in library.entries]
    assert notes == [
        r"Retracted (Retraction in PMID 90000101: <img src=x onerror=alert(1)> *Retraction* "
        r"\textbraceleft{}of\textbraceright{} it\_x).",
        "Study design: Meta-analysis.",
    ]
    entries = rispy.loads(_download(researcher_client, f"/questions/{retracted_and_designed.pk}/references.ris"))
    assert entries[0]["notes"] == [f"Retracted (Retraction in PMID 90000101: {HOSTILE_NOTICE})."]
    assert entries[1]["notes"] == ["Study design: Meta-analysis."]
