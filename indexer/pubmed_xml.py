"""Streaming reader for PubMed and MEDLINE citation XML, plain or gzip-compressed."""

from __future__ import annotations

from collections.abc import Iterator
from io import BufferedIOBase
from pathlib import Path

from lxml import etree

from indexer.compressed import GZIP_ERRORS, open_binary
from indexer.errors import CorpusFormatError
from indexer.pubmed_fields import citation_notice, citation_record, flat_text
from indexer.records import ArticleRecord, ReadStats

# MedlineCitationSet is the pre-2017 MEDLINE baseline layout, where MedlineCitation is not wrapped in PubmedArticle.
_ROOT_TAGS = frozenset({"PubmedArticleSet", "MedlineCitationSet", "PubmedArticle", "MedlineCitation"})
_EVENT_TAGS = ("PubmedArticle", "MedlineCitation", "DeleteCitation")


def read_pubmed_xml(path: Path, stats: ReadStats) -> Iterator[ArticleRecord]:
    """Yield one record per citation with an abstract, filling in `stats` while streaming."""
    with open_binary(path) as stream:
        try:
            yield from _iter_records(stream, path, stats)
        except etree.XMLSyntaxError as exc:
            raise CorpusFormatError(_describe_syntax_error(path, exc)) from exc
        except GZIP_ERRORS as exc:
            raise CorpusFormatError(f"{path}: truncated or corrupt gzip data: {exc}") from exc


def _iter_records(stream: BufferedIOBase, path: Path, stats: ReadStats) -> Iterator[ArticleRecord]:
    context = etree.iterparse(
        stream,
        events=("end",),
        tag=_EVENT_TAGS,
        resolve_entities=False,
        no_network=True,
        huge_tree=False,
        load_dtd=False,
    )
    for _event, element in context:
        if element.tag == "MedlineCitation" and _parent_tag(element) == "PubmedArticle":
            continue  # read together with its PubmedArticle, which still needs it
        if element.tag == "DeleteCitation":
            stats.deleted_pmids.extend(_pmids_to_delete(element))
        else:
            record = _read_citation(element, path, stats)
            if record is not None:
                stats.articles += 1
                yield record
        _release(element)
    _check_root(context.root, path)


def _read_citation(element: etree._Element, path: Path, stats: ReadStats) -> ArticleRecord | None:
    citation = element if element.tag == "MedlineCitation" else element.find("MedlineCitation")
    if citation is None:
        raise CorpusFormatError(f"{path}: line {element.sourceline}: PubmedArticle without MedlineCitation")
    pmid = flat_text(citation.find("PMID"))
    if not pmid:
        raise CorpusFormatError(f"{path}: line {citation.sourceline}: citation without a PMID")
    # PubmedData (article ids, history) is MedlineCitation's sibling; the legacy layout has none, so this is None.
    record = citation_record(pmid, citation, element.find("PubmedData"))
    if record is None:
        stats.skipped_without_abstract += 1
        # Most notices have no abstract; skipped as articles, they must still mark the papers they are about.
        notice = citation_notice(pmid, citation)
        if notice is not None:
            stats.notices.append(notice)
    return record


def _pmids_to_delete(element: etree._Element) -> list[str]:
    pmids = (flat_text(pmid) for pmid in element.iterfind("PMID"))
    return [pmid for pmid in pmids if pmid]


def _parent_tag(element: etree._Element) -> str | None:
    parent = element.getparent()
    return parent.tag if parent is not None else None


def _release(element: etree._Element) -> None:
    # Clearing alone leaves an empty husk per citation under the root; dropping the earlier siblings keeps memory
    # flat however many citations the file holds.
    element.clear()
    parent = element.getparent()
    if parent is None:
        return
    while element.getprevious() is not None:
        del parent[0]


def _check_root(root: etree._Element | None, path: Path) -> None:
    # A well-formed file that is not PubMed XML would otherwise look like an empty one.
    if root is not None and root.tag not in _ROOT_TAGS:
        raise CorpusFormatError(f"{path}: not PubMed XML: root element is <{root.tag}>")


def _describe_syntax_error(path: Path, exc: etree.XMLSyntaxError) -> str:
    where = f" at line {exc.lineno}" if exc.lineno else ""
    return f"{path}: malformed or truncated XML{where}: {exc.msg}"
