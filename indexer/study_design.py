"""One study-design badge per article, from its PubMed publication types, or its MeSH headings when none names a design.

Publication types read, strongest design first:
- meta-analysis: "Meta-Analysis"
- systematic review: "Systematic Review"
- randomised controlled trial: "Randomized Controlled Trial", "Randomized Controlled Trial, Veterinary"
- clinical trial: "Clinical Trial", "Clinical Trial, Phase I" to "Phase IV", "Clinical Trial, Veterinary",
  "Controlled Clinical Trial", "Pragmatic Clinical Trial", "Adaptive Clinical Trial", "Equivalence Trial"
- observational study: "Observational Study", "Observational Study, Veterinary", "Twin Study"
- case report: "Case Reports"
- review: "Review", "Scoping Review"
MeSH descriptors read only when no publication type names a design (the article's own design, never a heading
"... as Topic", which says what it is about):
- observational study: "Cohort Studies", "Prospective Studies", "Retrospective Studies", "Longitudinal Studies",
  "Case-Control Studies", "Cross-Sectional Studies"
- animal or in-vitro study: the check tag "Animals" without "Humans"; or "In Vitro Techniques", "Cells, Cultured",
  "Cell Line", "Cell Line, Tumor", "Cell Culture Techniques"
When several apply the strongest wins. "Clinical Trial Protocol" is left out on purpose: a protocol reports no result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StudyDesign:
    key: str
    label: str
    description: str  # what the badge claims, for the legend
    strength: int  # higher is stronger evidence: the order "prefer stronger designs" sorts by


DESIGNS = (
    StudyDesign("meta-analysis", "Meta-analysis", "pools the results of several studies", 8),
    StudyDesign("systematic-review", "Systematic review", "a planned search and appraisal of all studies", 7),
    StudyDesign("rct", "Randomised controlled trial", "participants assigned to arms at random", 6),
    StudyDesign(
        "clinical-trial", "Clinical trial", "an intervention tested in people, not (known to be) randomised", 5
    ),
    StudyDesign("observational", "Observational study", "cohort, case-control or cross-sectional: no intervention", 4),
    StudyDesign("case-report", "Case report", "one or a few patients", 3),
    StudyDesign("review", "Review", "a narrative review of other work", 2),
    StudyDesign("preclinical", "Animal or in-vitro study", "in animals, cells or tissue, not in people", 1),
)
DESIGNS_BY_KEY = {design.key: design for design in DESIGNS}
# An article no type or heading places: no badge, and sorted after every named design.
UNKNOWN_STRENGTH = 0

_BY_PUBLICATION_TYPE = {
    "Meta-Analysis": "meta-analysis",
    "Systematic Review": "systematic-review",
    "Randomized Controlled Trial": "rct",
    "Randomized Controlled Trial, Veterinary": "rct",
    "Clinical Trial": "clinical-trial",
    "Clinical Trial, Phase I": "clinical-trial",
    "Clinical Trial, Phase II": "clinical-trial",
    "Clinical Trial, Phase III": "clinical-trial",
    "Clinical Trial, Phase IV": "clinical-trial",
    "Clinical Trial, Veterinary": "clinical-trial",
    "Controlled Clinical Trial": "clinical-trial",
    "Pragmatic Clinical Trial": "clinical-trial",
    "Adaptive Clinical Trial": "clinical-trial",
    "Equivalence Trial": "clinical-trial",
    "Observational Study": "observational",
    "Observational Study, Veterinary": "observational",
    "Twin Study": "observational",
    "Case Reports": "case-report",
    "Review": "review",
    "Scoping Review": "review",
}
_OBSERVATIONAL_MESH = frozenset(
    {
        "Cohort Studies",
        "Prospective Studies",
        "Retrospective Studies",
        "Longitudinal Studies",
        "Case-Control Studies",
        "Cross-Sectional Studies",
    }
)
_IN_VITRO_MESH = frozenset(
    {"In Vitro Techniques", "Cells, Cultured", "Cell Line", "Cell Line, Tumor", "Cell Culture Techniques"}
)


def study_design(*, publication_types: Iterable[str], mesh_descriptors: Iterable[str]) -> StudyDesign | None:
    """The strongest design the publication types name; failing that, the strongest the MeSH headings imply."""
    named = [DESIGNS_BY_KEY[_BY_PUBLICATION_TYPE[kind]] for kind in publication_types if kind in _BY_PUBLICATION_TYPE]
    if not named:
        named = _designs_from_mesh(set(mesh_descriptors))
    return max(named, key=lambda design: design.strength, default=None)


def article_study_design(*, publication_types: Iterable[str], mesh: Iterable[Mapping[str, Any]]) -> StudyDesign | None:
    """`study_design` for an article's stored fields (MeSH stored as {descriptor, major_topic, qualifiers})."""
    descriptors = (str(heading.get("descriptor", "")) for heading in mesh)
    return study_design(publication_types=publication_types, mesh_descriptors=descriptors)


def design_strength(design: StudyDesign | None) -> int:
    return design.strength if design is not None else UNKNOWN_STRENGTH


def _designs_from_mesh(descriptors: set[str]) -> list[StudyDesign]:
    designs = []
    if descriptors & _OBSERVATIONAL_MESH:
        designs.append(DESIGNS_BY_KEY["observational"])
    # Work on people carries the check tag "Humans" too; "Animals" alone means the animals were the subjects.
    if ("Animals" in descriptors and "Humans" not in descriptors) or descriptors & _IN_VITRO_MESH:
        designs.append(DESIGNS_BY_KEY["preclinical"])
    return designs
