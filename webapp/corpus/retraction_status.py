"""The rules that turn PubMed's retraction, concern and erratum records into one status per article.

A paper is
- retracted: its own `RetractionIn` entry, the publication type "Retracted Publication", or a stored notice's
  `RetractionOf` pointing at it;
- under an expression of concern: `ExpressionOfConcernIn`, or a stored notice's `ExpressionOfConcernFor`;
- corrected: `ErratumIn`, or a stored notice's `ErratumFor`;
- a notice: it points at another paper (`RetractionOf`, `ExpressionOfConcernFor`, `ErratumFor`) or is typed as one
  ("Retraction of Publication", its newer name "Retraction Notice", "Expression of Concern", "Published Erratum").
The first that applies wins: a retracted paper that was also corrected is retracted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from indexer.records import Correction
from webapp.corpus.models import Article

RETRACTED_TYPES = frozenset({"Retracted Publication"})
NOTICE_TYPES = frozenset(
    {"Retraction of Publication", "Retraction Notice", "Expression of Concern", "Published Erratum"}
)

# A notice's entry, as the paper it points at would have written it.
PAPER_SIDE = {
    "RetractionOf": "RetractionIn",
    "ExpressionOfConcernFor": "ExpressionOfConcernIn",
    "ErratumFor": "ErratumIn",
}
_STATUS_BY_REF_TYPE = {
    "RetractionIn": Article.Retraction.RETRACTED,
    "ExpressionOfConcernIn": Article.Retraction.CONCERN,
    "ErratumIn": Article.Retraction.CORRECTED,
    **dict.fromkeys(PAPER_SIDE, Article.Retraction.NOTICE),
}
_SERIOUSNESS = list(Article.Retraction)  # declared most serious first


@dataclass(frozen=True)
class RetractionState:
    status: Article.Retraction
    notices: tuple[Correction, ...]

    def notices_json(self) -> list[dict[str, str]]:
        return [{"ref_type": item.ref_type, "pmid": item.pmid, "source": item.source} for item in self.notices]


def retraction_state(
    *, own: Iterable[Correction], pointing_here: Iterable[Correction], publication_types: Iterable[str]
) -> RetractionState:
    """The status and notices of one article.

    `own` are the article's own entries; `pointing_here` are stored notices' entries about it, each given as
    (the notice's RefType, the notice's PMID, the notice as cited), and listed from the paper's side.
    """
    notices: dict[tuple[str, str], Correction] = {}
    for entry in own:
        notices.setdefault((entry.ref_type, entry.pmid or entry.source), entry)
    for entry in pointing_here:
        paper_side = Correction(ref_type=PAPER_SIDE[entry.ref_type], pmid=entry.pmid, source=entry.source)
        # The paper's own entry, when it has one, already names this notice; its RefSource is PubMed's wording.
        notices.setdefault((paper_side.ref_type, paper_side.pmid or paper_side.source), paper_side)
    found = {_STATUS_BY_REF_TYPE[entry.ref_type] for entry in notices.values()}
    types = set(publication_types)
    if types & RETRACTED_TYPES:
        found.add(Article.Retraction.RETRACTED)
    if types & NOTICE_TYPES:
        found.add(Article.Retraction.NOTICE)
    status = min(found, key=_SERIOUSNESS.index, default=Article.Retraction.NONE)
    return RetractionState(status=status, notices=tuple(notices.values()))
