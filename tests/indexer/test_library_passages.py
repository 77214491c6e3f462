"""Cutting a paper into the passages a library indexes: whole sentences within one section, each with its page; the
abstract first, once; a PDF's front matter (authors, identifiers) left out."""

from __future__ import annotations

from indexer.full_text import FullText, Paragraph
from indexer.library_passages import passages_of

SENTENCE = "Dose was {n} mg daily in the treated group of this cohort."


def _article(paragraphs: tuple[Paragraph, ...], *, abstract: str = "", pages: int | None = 3) -> FullText:
    return FullText(title="T", abstract=abstract, doi=None, pmid=None, pmcid=None, paragraphs=paragraphs, pages=pages)


def test_a_passage_holds_whole_sentences_of_one_section_and_the_page_it_starts_on() -> None:
    methods = " ".join(SENTENCE.format(n=n) for n in range(30))  # 360 words
    article = _article(
        (
            Paragraph("Methods", methods[: len(methods) // 2].rsplit(". ", 1)[0] + ".", page=1),
            Paragraph("Methods", methods[len(methods) // 2 :].split(". ", 1)[1], page=2),
            Paragraph("Results", "Mortality fell by a third.", page=2),
        )
    )

    passages = passages_of(article, max_words=100)

    assert [passage.section for passage in passages][-1] == "Results"
    assert all(len(passage.text.split()) <= 100 for passage in passages)
    assert all(passage.text.endswith(".") for passage in passages)
    assert {passage.page for passage in passages if passage.section == "Methods"} == {1, 2}
    assert [passage.ordinal for passage in passages] == list(range(len(passages)))
    assert passages[-1].text == "Mortality fell by a third."


def test_the_abstract_comes_first_once_and_a_pdfs_front_matter_is_left_out() -> None:
    article = _article(
        (
            Paragraph("", "Jane Doe; John Roe doi: 10.5555/x PMID: 12345678", page=1),
            Paragraph("Background", "Gout is common.", page=1),
        ),
        abstract="Colchicine helped.",
    )

    passages = passages_of(article)

    assert [(passage.section, passage.text) for passage in passages] == [
        ("Abstract", "Colchicine helped."),
        ("Background", "Gout is common."),
    ]
    assert passages[0].page == 1


def test_a_pdf_without_headings_keeps_every_paragraph_and_jats_keeps_its_lead_paragraphs() -> None:
    untitled = (Paragraph("", "We treated ten patients.", page=1), Paragraph("", "All recovered.", page=2))
    jats = (Paragraph("", "An opening paragraph before any section.", None), Paragraph("Methods", "We did it.", None))

    assert [passage.text for passage in passages_of(_article(untitled))] == ["We treated ten patients. All recovered."]
    assert [passage.text for passage in passages_of(_article(jats, pages=None))] == [
        "An opening paragraph before any section.",
        "We did it.",
    ]


def test_a_passage_holding_any_ocr_text_is_marked_as_read_by_ocr() -> None:
    article = _article(
        (
            Paragraph("Results", "Typed text on page one.", page=1),
            Paragraph("Results", "Scanned text on page two.", page=2, ocr=True),
            Paragraph("Discussion", "Typed again.", page=3),
        )
    )

    passages = passages_of(article)

    assert [(passage.section, passage.ocr) for passage in passages] == [("Results", True), ("Discussion", False)]
