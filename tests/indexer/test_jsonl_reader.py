"""Tests for the JSON-lines corpus reader."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from indexer.errors import CorpusFormatError
from indexer.jsonl_reader import read_jsonl
from indexer.records import ArticleRecord, Author, MeshHeading, ReadStats
from tests.support import shared_data_dir

DATA_DIR = shared_data_dir()


def write_lines(tmp_path: Path, name: str, lines: list[str], *, compress: bool = False) -> Path:
    path = tmp_path / name
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def write_items(tmp_path: Path, items: list[dict[str, Any]], *, name: str = "corpus.jsonl") -> Path:
    return write_lines(tmp_path, name, [json.dumps(item) for item in items])


def read_all(path: Path) -> tuple[list[ArticleRecord], ReadStats]:
    stats = ReadStats()
    return list(read_jsonl(path, stats)), stats


def read_one(tmp_path: Path, item: dict[str, Any]) -> ArticleRecord:
    records, _ = read_all(write_items(tmp_path, [item]))
    assert len(records) == 1
    return records[0]


def test_it_takes_the_first_sentence_of_a_bare_text_line_as_its_title(tmp_path: Path) -> None:
    text = "RecA-mediated joint molecule formation. Chimeric oligonucleotides were used, e.g. in mice."
    record = read_one(tmp_path, {"pmid": "9671026", "text": text})

    assert record == ArticleRecord(
        pmid="9671026",
        title="RecA-mediated joint molecule formation.",
        abstract="Chimeric oligonucleotides were used, e.g. in mice.",
    )


def test_a_bare_text_line_of_one_sentence_stays_an_untitled_abstract(tmp_path: Path) -> None:
    record = read_one(tmp_path, {"pmid": "1", "text": "Only one sentence here."})

    assert record == ArticleRecord(pmid="1", title="", abstract="Only one sentence here.")


def test_an_explicitly_empty_title_keeps_the_whole_text_as_abstract(tmp_path: Path) -> None:
    text = "Programmed cell death is regulated. The lace plant forms holes."
    record = read_one(tmp_path, {"pmid": "2", "title": "", "text": text})

    assert record == ArticleRecord(pmid="2", title="", abstract=text)


def test_it_reads_title_and_abstract_with_metadata(tmp_path: Path) -> None:
    item = {
        "pmid": 17942999,
        "title": "Neuroplasticity in pitch processing.",
        "abstract": "PURPOSE: To explore it.",
        "journal": "Restorative neurology and neuroscience",
        "year": 2007,
        "authors": ["Chandrasekaran B", "Gandour JT"],
        "mesh": ["Adult", "Pitch Perception"],
    }

    record = read_one(tmp_path, item)

    assert record == ArticleRecord(
        pmid="17942999",
        title="Neuroplasticity in pitch processing.",
        abstract="PURPOSE: To explore it.",
        journal="Restorative neurology and neuroscience",
        year=2007,
        authors=(Author("Chandrasekaran B"), Author("Gandour JT")),
        mesh=(MeshHeading("Adult"), MeshHeading("Pitch Perception")),
    )


def test_it_reads_author_objects_with_name_parts_affiliations_and_orcid(tmp_path: Path) -> None:
    authors = [
        {
            "name": "Smith JA",
            "affiliations": ["Mayo Clinic.", "", "Harvard."],
            "orcid": "https://orcid.org/0000-0001-9921-6968",
        },
        {"last_name": "Doe", "initials": "J", "affiliation": "Oxford."},
        {"last_name": "Roe", "fore_name": "Jane", "orcid": "not-an-orcid"},
        {"collective_name": "STOP-PD Study Group"},
        {"affiliations": ["A nameless entry is dropped."]},
        "Plain N",
    ]

    record = read_one(tmp_path, {"pmid": "1", "text": "Body.", "authors": authors})

    assert record.authors == (
        Author("Smith JA", affiliations=("Mayo Clinic.", "Harvard."), orcid="0000-0001-9921-6968"),
        Author("Doe J", affiliations=("Oxford.",)),
        Author("Jane Roe"),
        Author("STOP-PD Study Group", collective=True),
        Author("Plain N"),
    )


def test_it_reads_optional_citation_keys(tmp_path: Path) -> None:
    item = {
        "pmid": "29768149",
        "title": "Inhaled budesonide-formoterol.",
        "abstract": "Body.",
        "journal_iso": "N Engl J Med",
        "volume": "378",
        "issue": 20,
        "pages": "1865-1876",
        "pub_date": "2018 May 17",
        "publication_types": ["Journal Article", "Randomized Controlled Trial"],
        "language": "eng",
        "doi": "10.1056/NEJMoa1715274",
        "pmc": "PMC6883395",
    }

    record = read_one(tmp_path, item)

    assert (record.journal_iso, record.volume, record.issue, record.pages) == ("N Engl J Med", "378", "20", "1865-1876")
    assert (record.pub_date, record.language, record.doi, record.pmc) == (
        "2018 May 17",
        "eng",
        "10.1056/NEJMoa1715274",
        "PMC6883395",
    )
    assert record.publication_types == ("Journal Article", "Randomized Controlled Trial")


def test_it_strips_the_title_from_a_text_that_starts_with_it(tmp_path: Path) -> None:
    item = {
        "pmid": "S2:4983",
        "title": "White matter in newborns.",
        "text": "White matter in newborns.  Alterations of...",
        "source": "scifact",
    }

    record = read_one(tmp_path, item)

    assert (record.pmid, record.title, record.abstract) == ("S2:4983", "White matter in newborns.", "Alterations of...")


def test_it_keeps_the_whole_text_when_it_does_not_start_with_the_title(tmp_path: Path) -> None:
    record = read_one(tmp_path, {"pmid": "1", "title": "A title.", "text": "Body that repeats nothing."})

    assert (record.title, record.abstract) == ("A title.", "Body that repeats nothing.")


@pytest.mark.parametrize(("year", "expected"), [("2007", 2007), (1998, 1998), (None, None), ("", None), ("n.d.", None)])
def test_it_reads_the_year_from_a_string_or_a_number(tmp_path: Path, year: object, expected: int | None) -> None:
    assert read_one(tmp_path, {"pmid": "1", "text": "Body.", "year": year}).year == expected


def test_it_skips_and_counts_placeholders_and_empty_texts(tmp_path: Path) -> None:
    items = [
        {"pmid": "20301466", "text": "No document found for PMID: 20301466"},
        {"pmid": "2", "text": "Real abstract."},
        {"pmid": "3", "text": "   "},
        {"pmid": "4", "title": "Only a title.", "text": "Only a title."},
    ]

    records, stats = read_all(write_items(tmp_path, items))

    assert [record.pmid for record in records] == ["2"]
    assert (stats.articles, stats.skipped_without_abstract) == (1, 3)


def test_it_ignores_blank_lines(tmp_path: Path) -> None:
    lines = ["", json.dumps({"pmid": "1", "text": "One."}), "   ", json.dumps({"pmid": "2", "text": "Two."}), ""]

    records, _ = read_all(write_lines(tmp_path, "blanks.jsonl", lines))

    assert [record.pmid for record in records] == ["1", "2"]


def test_it_reports_the_file_and_line_of_invalid_json(tmp_path: Path) -> None:
    lines = [json.dumps({"pmid": "1", "text": "One."}), "", '{"pmid": "3", "text": ']

    with pytest.raises(CorpusFormatError, match=r"bad\.jsonl: line 3: invalid JSON"):
        read_all(write_lines(tmp_path, "bad.jsonl", lines))


def test_it_reports_the_line_of_a_record_without_pmid(tmp_path: Path) -> None:
    lines = [json.dumps({"pmid": "1", "text": "One."}), json.dumps({"doc_id": 2, "text": "Two."})]

    with pytest.raises(CorpusFormatError, match=r"nopmid\.jsonl: line 2: missing 'pmid'"):
        read_all(write_lines(tmp_path, "nopmid.jsonl", lines))


@pytest.mark.parametrize("name", ["corpus.jsonl.gz", "corpus_gzipped_without_suffix.jsonl"])
def test_it_reads_gzip_detected_by_magic_bytes(tmp_path: Path, name: str) -> None:
    lines = [json.dumps({"pmid": str(pmid), "text": f"Abstract {pmid}."}) for pmid in range(3)]

    records, stats = read_all(write_lines(tmp_path, name, lines, compress=True))

    assert [record.abstract for record in records] == ["Abstract 0.", "Abstract 1.", "Abstract 2."]
    assert stats.articles == 3


def test_it_raises_corpus_format_error_on_truncated_gzip(tmp_path: Path) -> None:
    lines = [json.dumps({"pmid": str(pmid), "text": f"Abstract number {pmid} " * 20}) for pmid in range(5000)]
    packed = gzip.compress("\n".join(lines).encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(packed[: len(packed) // 2])

    with pytest.raises(CorpusFormatError, match=r"cut\.jsonl\.gz.*truncated or corrupt gzip"):
        read_all(path)


def test_it_reads_the_shared_bioasq_benchmark_corpus() -> None:
    # 3,230 lines, three of which are "No document found for PMID" placeholders.
    records, stats = read_all(DATA_DIR / "bioasq" / "benchmark" / "corpus.jsonl.gz")

    assert (stats.articles, stats.skipped_without_abstract) == (3227, 3)
    assert len({record.pmid for record in records}) == 3227
    assert all(record.abstract and not record.abstract.startswith("No document found") for record in records)


def test_it_reads_the_shared_bioasq_distractors_with_their_metadata() -> None:
    records, _ = read_all(DATA_DIR / "bioasq" / "benchmark" / "distractors.jsonl.gz")
    by_pmid = {record.pmid: record for record in records}

    record = by_pmid["17942999"]
    assert record.author_names == ("Chandrasekaran B", "Gandour JT", "Krishnan A")
    assert (record.journal, record.year) == ("Restorative neurology and neuroscience", 2007)
    assert MeshHeading("Adult") in record.mesh
    assert all(author.name and not author.collective for record in records for author in record.authors)
