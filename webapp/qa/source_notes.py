"""What a source carries besides its citation: its retraction status with the notices behind it, and its study design.

One shape for the page, the API and the exports, so that they cannot disagree about a paper.
"""

from __future__ import annotations

from indexer.study_design import StudyDesign, article_study_design
from webapp.corpus.models import Article
from webapp.qa.payloads import RetractionPayload, StudyDesignPayload

# Shown beside a source; "none" shows nothing.
RETRACTION_LABELS = {
    Article.Retraction.RETRACTED: "Retracted",
    Article.Retraction.CONCERN: "Expression of concern",
    Article.Retraction.CORRECTED: "Corrected",
    Article.Retraction.NOTICE: "Notice",
}
# How each kind of notice reads in a sentence, from the side of the article that lists it.
NOTICE_PHRASES = {
    "RetractionIn": "Retraction in",
    "ExpressionOfConcernIn": "Expression of concern in",
    "ErratumIn": "Erratum in",
    "RetractionOf": "Retraction of",
    "ExpressionOfConcernFor": "Expression of concern for",
    "ErratumFor": "Erratum for",
}


def source_retraction(article: Article) -> RetractionPayload:
    return {
        "status": article.retraction_status,
        "notices": [
            {
                "ref_type": str(notice.get("ref_type", "")),
                "pmid": str(notice.get("pmid", "")),
                "source": str(notice.get("source", "")),
            }
            for notice in article.retraction_notices or ()
        ],
    }


def source_design(article: Article) -> StudyDesign | None:
    return article_study_design(publication_types=article.publication_types or (), mesh=article.mesh or ())


def source_study_design(article: Article) -> StudyDesignPayload | None:
    design = source_design(article)
    return {"key": design.key, "label": design.label} if design is not None else None


def notice_sentence(notice: dict[str, str]) -> str:
    """'Retraction in PMID 15516371: Klessig DF... Proc Natl Acad Sci U S A. 2004': for exports, as plain text."""
    phrase = NOTICE_PHRASES.get(notice["ref_type"], notice["ref_type"])
    where = f"PMID {notice['pmid']}" if notice["pmid"] else ""
    return ": ".join(part for part in (f"{phrase} {where}".strip(), notice["source"]) if part)
