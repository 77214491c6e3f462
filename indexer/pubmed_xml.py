"""Streaming reader for PubMed and MEDLINE citation XML, plain or gzip-compressed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from io import BufferedIOBase
from pathlib import Path

from lxml import etree

from indexer.compressed import GZIP_ERRORS, open_binary
from indexer.errors import CorpusFormatError
from indexer.records import ArticleRecord, MeshHeading, ReadStats

# MedlineCitationSet is the pre-2017 MEDLINE baseline layout, where MedlineCitation is not wrapped in PubmedArticle.
_ROOT_TAGS = frozenset({"PubmedArticleSet", "MedlineCitationSet", "PubmedArticle", "MedlineCitation"})
_EVENT_TAGS = ("PubmedArticle", "MedlineCitation", "DeleteCitation")
# PubMed marks structured-abstract parts it could not classify this way; the label carries no meaning.
_MEANINGLESS_LABELS = frozenset({"UNLABELLED", "UNASSIGNED"})
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")


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
    pmid = _flat_text(citation.find("PMID"))
    if not pmid:
        raise CorpusFormatError(f"{path}: line {citation.sourceline}: citation without a PMID")
    article = citation.find("Article")
    abstract = _abstract(article) if article is not None else ""
    if article is None or not abstract:
        stats.skipped_without_abstract += 1
        return None
    return ArticleRecord(
        pmid=pmid,
        title=_flat_text(article.find("ArticleTitle")) or _flat_text(article.find("VernacularTitle")),
        abstract=abstract,
        journal=_flat_text(article.find("Journal/Title")) or _flat_text(article.find("Journal/ISOAbbreviation")),
        year=_year(article),
        authors=_authors(article),
        mesh=_mesh_headings(citation),
    )


def _abstract(article: etree._Element) -> str:
    parts: list[str] = []
    for part in article.iterfind("Abstract/AbstractText"):
        text = _flat_text(part)
        if not text:
            continue
        label = " ".join((part.get("Label") or "").split())
        parts.append(f"{label}: {text}" if label and label not in _MEANINGLESS_LABELS else text)
    return " ".join(parts)


def _year(article: etree._Element) -> int | None:
    candidates = [
        _flat_text(article.find("Journal/JournalIssue/PubDate/Year")),
        # Free-form ranges such as "1998 Dec-1999 Jan": the first year is when the issue started.
        _flat_text(article.find("Journal/JournalIssue/PubDate/MedlineDate")),
        *(_flat_text(year) for year in article.iterfind("ArticleDate/Year")),
    ]
    for candidate in candidates:
        match = _YEAR.search(candidate)
        if match:
            return int(match.group(1))
    return None


def _authors(article: etree._Element) -> tuple[str, ...]:
    names = (_author_name(author) for author in article.iterfind("AuthorList/Author"))
    return tuple(name for name in names if name)


def _author_name(author: etree._Element) -> str:
    last_name = _flat_text(author.find("LastName"))
    if not last_name:
        return _flat_text(author.find("CollectiveName"))
    initials = _flat_text(author.find("Initials"))
    if initials:
        return f"{last_name} {initials}"
    fore_name = _flat_text(author.find("ForeName"))
    return f"{fore_name} {last_name}" if fore_name else last_name


def _mesh_headings(citation: etree._Element) -> tuple[MeshHeading, ...]:
    headings: list[MeshHeading] = []
    for heading in citation.iterfind("MeshHeadingList/MeshHeading"):
        descriptor = heading.find("DescriptorName")
        name = _flat_text(descriptor)
        if descriptor is None or not name:
            continue
        qualifiers = (_flat_text(qualifier) for qualifier in heading.iterfind("QualifierName"))
        headings.append(
            MeshHeading(
                descriptor=name,
                major_topic=descriptor.get("MajorTopicYN") == "Y",
                qualifiers=tuple(qualifier for qualifier in qualifiers if qualifier),
            )
        )
    return tuple(headings)


def _pmids_to_delete(element: etree._Element) -> list[str]:
    pmids = (_flat_text(pmid) for pmid in element.iterfind("PMID"))
    return [pmid for pmid in pmids if pmid]


def _flat_text(element: etree._Element | None) -> str:
    """All text under `element` with inline markup (<i>, <sup>, ...) dropped and whitespace collapsed."""
    if element is None:
        return ""
    # lxml-stubs type itertext() as str | bytes; text parsed from a document is always str.
    text = "".join(chunk for chunk in element.itertext() if isinstance(chunk, str))
    return " ".join(text.split())


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
