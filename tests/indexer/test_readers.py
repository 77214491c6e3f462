"""Tests for choosing a corpus reader by file name and expanding corpus directories."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from indexer.errors import CorpusFormatError
from indexer.readers import expand_paths, read_articles
from indexer.records import ReadStats

PUBMED_XML = """<?xml version="1.0"?>
<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>42</PMID><Article>
<ArticleTitle>From XML.</ArticleTitle><Abstract><AbstractText>XML abstract.</AbstractText></Abstract>
</Article></MedlineCitation></PubmedArticle></PubmedArticleSet>
"""
JSONL = json.dumps({"pmid": "43", "title": "From JSONL.", "abstract": "JSONL abstract."}) + "\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


@pytest.mark.parametrize(
    ("name", "content", "pmid"),
    [
        ("a.xml", PUBMED_XML, "42"),
        ("a.xml.gz", PUBMED_XML, "42"),
        ("A.XML", PUBMED_XML, "42"),
        ("a.jsonl", JSONL, "43"),
        ("a.jsonl.gz", JSONL, "43"),
    ],
)
def test_it_picks_the_reader_from_the_file_name(tmp_path: Path, name: str, content: str, pmid: str) -> None:
    stats = ReadStats()

    records = list(read_articles(write(tmp_path / name, content), stats))

    assert [record.pmid for record in records] == [pmid]
    assert stats.articles == 1


@pytest.mark.parametrize("name", ["a.json.gz", "a.json", "a.csv", "a.gz", "xml"])
def test_it_rejects_unsupported_file_types_before_reading(tmp_path: Path, name: str) -> None:
    path = tmp_path / name  # never created: the name alone must decide

    with pytest.raises(CorpusFormatError, match="unsupported file type") as raised:
        read_articles(path, ReadStats())

    assert name in str(raised.value)


def test_it_expands_a_directory_into_its_supported_files_recursively_and_sorted(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    for relative in ["b.jsonl", "a.xml.gz", "nested/deeper/c.xml", "nested/d.jsonl.gz", "notes.txt", ".hidden.xml"]:
        write(corpus / relative, "")
    (corpus / "empty_dir.xml").mkdir()

    expanded = expand_paths([corpus])

    assert expanded == [
        corpus / "a.xml.gz",
        corpus / "b.jsonl",
        corpus / "nested" / "d.jsonl.gz",
        corpus / "nested" / "deeper" / "c.xml",
    ]


def test_it_keeps_files_as_given_and_in_order(tmp_path: Path) -> None:
    second = write(tmp_path / "z.jsonl", JSONL)
    first = write(tmp_path / "dir" / "a.xml", PUBMED_XML)

    assert expand_paths([second, tmp_path / "dir"]) == [second, first]


def test_it_reports_a_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.jsonl"

    with pytest.raises(FileNotFoundError, match=r"does not exist: .*nowhere\.jsonl"):
        expand_paths([missing])
