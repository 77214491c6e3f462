"""The study-design badge: publication types first, strongest design when several apply, MeSH only where no type
names a design."""

from __future__ import annotations

import pytest

from indexer.study_design import DESIGNS, article_study_design, design_strength, study_design


def badge(types: tuple[str, ...] = (), mesh: tuple[str, ...] = ()) -> str | None:
    design = study_design(publication_types=types, mesh_descriptors=mesh)
    return design.key if design is not None else None


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        (("Journal Article", "Meta-Analysis"), "meta-analysis"),
        (("Systematic Review",), "systematic-review"),
        (("Randomized Controlled Trial",), "rct"),
        (("Clinical Trial, Phase III",), "clinical-trial"),
        (("Controlled Clinical Trial",), "clinical-trial"),
        (("Observational Study",), "observational"),
        (("Case Reports",), "case-report"),
        (("Review",), "review"),
        (("Journal Article",), None),
        (("Clinical Trial Protocol",), None),
    ],
)
def test_each_publication_type_maps_to_its_badge(types: tuple[str, ...], expected: str | None) -> None:
    assert badge(types) == expected


def test_the_strongest_design_wins_when_several_types_apply() -> None:
    assert badge(("Review", "Meta-Analysis", "Systematic Review")) == "meta-analysis"
    assert badge(("Clinical Trial", "Randomized Controlled Trial", "Multicenter Study")) == "rct"
    assert badge(("Case Reports", "Review")) == "case-report"


def test_mesh_is_read_only_where_no_type_names_a_design() -> None:
    assert badge(("Journal Article",), ("Humans", "Retrospective Studies")) == "observational"
    assert badge(("Randomized Controlled Trial",), ("Retrospective Studies",)) == "rct"


def test_animals_without_humans_or_cell_cultures_make_a_preclinical_study() -> None:
    assert badge(mesh=("Animals", "Mice")) == "preclinical"
    assert badge(mesh=("Humans", "Cell Line, Tumor")) == "preclinical"
    assert badge(mesh=("Animals", "Humans")) is None  # people were studied too: no claim either way


def test_a_heading_about_a_design_is_not_the_articles_design() -> None:
    assert badge(mesh=("Randomized Controlled Trials as Topic", "Meta-Analysis as Topic")) is None


def test_an_articles_stored_mesh_is_read_by_descriptor() -> None:
    design = article_study_design(
        publication_types=[], mesh=[{"descriptor": "Cohort Studies", "major_topic": False, "qualifiers": []}]
    )
    assert design is not None
    assert design.label == "Observational study"


def test_designs_are_listed_strongest_first_and_unknown_sorts_last() -> None:
    strengths = [design.strength for design in DESIGNS]
    assert strengths == sorted(strengths, reverse=True)
    assert [design.key for design in DESIGNS] == [
        "meta-analysis",
        "systematic-review",
        "rct",
        "clinical-trial",
        "observational",
        "case-report",
        "review",
        "preclinical",
    ]
    assert design_strength(None) < min(strengths)
