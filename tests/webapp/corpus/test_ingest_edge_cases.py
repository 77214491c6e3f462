"""Files that are odd but valid: a deletion of a PMID never indexed, and one PMID in two files (versions decide).

Through the product's path: the database, tantivy and the in-process Qdrant engine, with the real MiniLM embedder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.ingest import IngestReport, ingest_paths
from webapp.corpus import engines
from webapp.corpus.models import Article
from webapp.corpus.services.articles import DatabaseArticleSink

pytestmark = [pytest.mark.model, pytest.mark.django_db]


def _citation(pmid: str, title: str, abstract: str, version: int = 1) -> str:
    return (
        f'<PubmedArticle><MedlineCitation><PMID Version="{version}">{pmid}</PMID><Article>'
        "<Journal><Title>Journal of Tests</Title><JournalIssue><PubDate><Year>2021</Year></PubDate></JournalIssue>"
        f"</Journal><ArticleTitle>{title}</ArticleTitle><Abstract><AbstractText>{abstract}</AbstractText></Abstract>"
        "</Article></MedlineCitation></PubmedArticle>"
    )


def _file(path: Path, *items: str) -> Path:
    path.write_text('<?xml version="1.0"?>\n<PubmedArticleSet>\n' + "\n".join(items) + "\n</PubmedArticleSet>\n")
    return path


def _ingest(*paths: Path) -> IngestReport:
    return ingest_paths(
        paths,
        sink=DatabaseArticleSink(),
        lexical=engines.lexical_index(),
        vectors=engines.vector_index(),
        embedder=engines.embedder(),
    )


def _vector_pmids(text: str) -> list[str]:
    vector = engines.embedder().embed([text])[0]
    return [hit.pmid for hit in engines.vector_index().search(vector, limit=10)]


def test_a_deletion_of_a_pmid_never_indexed_changes_nothing_else_and_is_not_an_error(
    own_index: Path, tmp_path: Path
) -> None:
    kept = _file(tmp_path / "base.xml", _citation("501", "Zinc and colds.", "Zinc shortened colds in adults."))
    _ingest(kept)
    update = _file(
        tmp_path / "update.xml",
        '<DeleteCitation><PMID Version="1">999999</PMID><PMID Version="1">501</PMID></DeleteCitation>',
    )

    report = _ingest(update)

    assert report.deleted == 2  # both deletions applied; the unknown one simply had nothing to remove
    assert not Article.objects.filter(pmid__in=["501", "999999"]).exists()
    assert engines.lexical_index().count() == 0
    assert engines.vector_index().count() == 0

    again = _file(tmp_path / "update2.xml", '<DeleteCitation><PMID Version="1">888888</PMID></DeleteCitation>')
    assert _ingest(again).deleted == 1
    assert Article.objects.count() == 0


@pytest.mark.parametrize("order", ["older-file-first", "newer-file-first"])
def test_the_same_pmid_in_two_files_keeps_the_later_version_everywhere(
    own_index: Path, tmp_path: Path, order: str
) -> None:
    first = _file(
        tmp_path / "pubmed26n0001.xml",
        _citation("777", "Aspirin and stroke, first version.", "Aspirin had no effect on stroke.", version=1),
    )
    second = _file(
        tmp_path / "pubmed26n0002.xml",
        _citation("777", "Warfarin and atrial fibrillation.", "Warfarin prevented embolic stroke.", version=2),
    )
    files = (first, second) if order == "older-file-first" else (second, first)
    for path in files:
        _ingest(path)

    article = Article.objects.get(pmid="777")
    assert (article.version, article.title) == (2, "Warfarin and atrial fibrillation.")
    assert Article.objects.count() == 1
    assert engines.lexical_index().count() == 1
    assert [hit.pmid for hit in engines.lexical_index().search("warfarin", limit=5)] == ["777"]
    assert engines.lexical_index().search("aspirin", limit=5) == []
    assert _vector_pmids("warfarin atrial fibrillation") == ["777"]
    assert engines.vector_index().count() == 1  # one point set, not one per version


def test_a_later_file_with_the_same_version_but_new_text_replaces_it(own_index: Path, tmp_path: Path) -> None:
    _ingest(_file(tmp_path / "a.xml", _citation("888", "Old title.", "Statins lowered cholesterol.")))
    _ingest(_file(tmp_path / "b.xml", _citation("888", "Corrected title.", "Statins lowered LDL cholesterol.")))

    assert Article.objects.get(pmid="888").title == "Corrected title."
    assert [hit.pmid for hit in engines.lexical_index().search("corrected", limit=5)] == ["888"]
    assert engines.lexical_index().count() == 1
