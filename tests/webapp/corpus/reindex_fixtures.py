"""Fixtures of the re-index page tests: an allowed folder holding a small PubMed XML file, and Celery run eagerly
against this test's own empty index (as in test_pubmed_sync)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_django.fixtures import Settings

from webapp.celery import app


def pubmed_xml(*articles: tuple[str, str, str]) -> str:
    """A PubMed XML file of (pmid, title, abstract) citations."""
    citations = "".join(
        f"""<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{pmid}</PMID><Article>
<Journal><Title>Journal of Tests</Title><JournalIssue><PubDate><Year>2021</Year></PubDate></JournalIssue></Journal>
<ArticleTitle>{title}</ArticleTitle><Abstract><AbstractText>{abstract}</AbstractText></Abstract>
</Article></MedlineCitation></PubmedArticle>
"""
        for pmid, title, abstract in articles
    )
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<PubmedArticleSet>\n{citations}</PubmedArticleSet>\n'


CORPUS_XML = pubmed_xml(
    ("41000001", "Zinc lozenges and the common cold.", "Zinc lozenges shortened colds by two days in adults."),
    ("41000002", "Warfarin after atrial fibrillation.", "Warfarin prevented strokes in patients with AF."),
)
MORE_XML = pubmed_xml(
    ("41000003", "Vitamin D and fractures.", "Vitamin D supplements did not prevent fractures in older adults."),
)


# Named fixtures: test modules import the functions, and their parameters keep the short names.
@pytest.fixture(name="allowed_dir")
def allowed_dir_fixture(tmp_path: Path) -> Path:
    folder = (tmp_path / "allowed").resolve()
    (folder / "sub").mkdir(parents=True)
    (folder / "corpus.xml").write_text(CORPUS_XML)
    (folder / "sub" / "more.xml").write_text(MORE_XML)
    (folder / "notes.txt").write_text("not a corpus file")
    return folder


@pytest.fixture(name="eager_indexing")
def eager_indexing_fixture(settings: Settings, tmp_path: Path, own_index: Path, allowed_dir: Path) -> Iterator[Path]:
    """Tasks run in the test process, against engines of this test's own index; ingestion only from allowed_dir."""
    settings.VERIMED = settings.VERIMED.replace(VERIMED_INGEST_DIRS=[allowed_dir])
    settings.VAR_DIR = tmp_path / "var"
    settings.VERIMED = settings.VERIMED.replace(VERIMED_PUBMED_DIR=tmp_path / "downloads")
    settings.VERIMED = settings.VERIMED.replace(VERIMED_PUBMED_DOWNLOAD_RETRIES=2)
    settings.VERIMED = settings.VERIMED.replace(VERIMED_PUBMED_RETRY_BACKOFF_SECONDS=0.01)
    previous = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager, app.conf.task_eager_propagates = True, False
    yield allowed_dir
    app.conf.task_always_eager, app.conf.task_eager_propagates = previous
