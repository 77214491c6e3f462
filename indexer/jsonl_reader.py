"""Streaming reader for JSON-lines corpora (one article per line), plain or gzip-compressed."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pysbd

from indexer.compressed import GZIP_ERRORS, open_binary
from indexer.errors import CorpusFormatError
from indexer.pubmed_fields import normalise_orcid
from indexer.records import ArticleRecord, Author, MeshHeading, ReadStats

# BioASQ snapshots keep a line for PMIDs whose abstract could not be fetched, with this text in place of the abstract.
_PLACEHOLDER = re.compile(r"^No document found for PMID")
_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
_MAX_TITLE_CHARS = 400


def read_jsonl(path: Path, stats: ReadStats) -> Iterator[ArticleRecord]:
    """Yield one record per line that carries an abstract, filling in `stats` while streaming."""
    with open_binary(path) as stream:
        line_number = 0
        try:
            for line_number, raw_line in enumerate(stream, start=1):
                record = _parse_line(raw_line, path, line_number, stats)
                if record is not None:
                    stats.articles += 1
                    yield record
        except GZIP_ERRORS as exc:
            raise CorpusFormatError(f"{path}: truncated or corrupt gzip data after line {line_number}: {exc}") from exc


def _parse_line(raw_line: bytes, path: Path, line_number: int, stats: ReadStats) -> ArticleRecord | None:
    if not raw_line.strip():
        return None
    item = _decode(raw_line, path, line_number)
    pmid = item.get("pmid")
    if pmid is None or not str(pmid).strip():
        raise CorpusFormatError(f"{path}: line {line_number}: missing 'pmid'")
    title, abstract = _title_and_abstract(item)
    if not abstract or _PLACEHOLDER.match(abstract):
        stats.skipped_without_abstract += 1
        return None
    return ArticleRecord(
        pmid=str(pmid).strip(),
        title=title,
        abstract=abstract,
        journal=_string(item.get("journal")),
        year=_year(item.get("year")),
        authors=_authors(item.get("authors")),
        mesh=tuple(MeshHeading(descriptor=descriptor) for descriptor in _strings(item.get("mesh"))),
        # Optional bibliographic keys: most corpora carry none of them, and "" is the record's own default.
        journal_iso=_string(item.get("journal_iso")),
        volume=_string(item.get("volume")),
        issue=_string(item.get("issue")),
        pages=_string(item.get("pages")),
        pub_date=_string(item.get("pub_date")),
        publication_types=_strings(item.get("publication_types")),
        language=_string(item.get("language")),
        doi=_string(item.get("doi")),
        pmc=_string(item.get("pmc")),
    )


def _authors(value: Any) -> tuple[Author, ...]:
    if not isinstance(value, list):
        return ()
    authors = (_author(entry) for entry in value)
    return tuple(author for author in authors if author is not None)


def _author(entry: Any) -> Author | None:
    """An author given as a plain name ("Smith JA") or as an object with name parts, affiliations and ORCID."""
    if not isinstance(entry, dict):
        name = _string(entry)
        return Author(name=name) if name else None
    personal_name = _string(entry.get("name")) or _personal_name(entry)
    name = personal_name or _string(entry.get("collective_name"))
    if not name:
        return None
    return Author(
        name=name,
        collective=entry.get("collective") is True or not personal_name,
        affiliations=_affiliations(entry.get("affiliations", entry.get("affiliation"))),
        orcid=normalise_orcid(_string(entry.get("orcid"))),
    )


def _affiliations(value: Any) -> tuple[str, ...]:
    # Exports with one affiliation per author often write it as a plain string rather than a list of one.
    if isinstance(value, str):
        return (_string(value),) if value.strip() else ()
    return _strings(value)


def _personal_name(entry: dict[str, Any]) -> str:
    # Written the way PubMed lists authors, so names read alike whichever reader produced them.
    last_name = _string(entry.get("last_name"))
    if not last_name:
        return ""
    initials = _string(entry.get("initials"))
    if initials:
        return f"{last_name} {initials}"
    fore_name = _string(entry.get("fore_name") or entry.get("first_name"))
    return f"{fore_name} {last_name}" if fore_name else last_name


def _decode(raw_line: bytes, path: Path, line_number: int) -> dict[str, Any]:
    try:
        item = json.loads(raw_line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorpusFormatError(f"{path}: line {line_number}: invalid JSON: {exc}") from exc
    if not isinstance(item, dict):
        raise CorpusFormatError(f"{path}: line {line_number}: expected a JSON object, got {type(item).__name__}")
    return item


def _title_and_abstract(item: dict[str, Any]) -> tuple[str, str]:
    title = _string(item.get("title"))
    if "abstract" in item:
        return title, _string(item["abstract"])
    text = _string(item.get("text"))
    # Some exports store title and abstract concatenated in `text`; keep the title once, not twice.
    if title and text.startswith(title):
        return title, text[len(title) :].lstrip()
    if "title" not in item:
        return _split_leading_title(text)
    return title, text


def _split_leading_title(text: str) -> tuple[str, str]:
    """`{pmid, text}` corpora (the BioASQ benchmark) write "Title. Abstract": the first sentence is the title.

    Only a short first sentence followed by more text is taken; otherwise the whole text stays the abstract.
    """
    # Only the head is segmented: pysbd is slow on whole abstracts and the title is at the start.
    sentences = _first_sentence_segmenter().segment(text[: _MAX_TITLE_CHARS + 200])
    if len(sentences) < 2:
        return "", text
    first = sentences[0].strip()
    rest = text[len(sentences[0]) :].strip()
    if not rest or len(first) > _MAX_TITLE_CHARS:
        return "", text
    return first, rest


@cache
def _first_sentence_segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False)


def _string(value: Any) -> str:
    if value is None:
        return ""
    # SciFact-style corpora store the abstract as a list of sentences.
    if isinstance(value, list):
        return " ".join(_string(part) for part in value if _string(part))
    return str(value).strip()


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(text for text in (_string(entry) for entry in value) if text)


def _year(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    match = _YEAR.search(_string(value))
    return int(match.group(1)) if match else None
