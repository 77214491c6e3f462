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
from indexer.records import ArticleRecord, MeshHeading, ReadStats

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
        authors=_strings(item.get("authors")),
        mesh=tuple(MeshHeading(descriptor=descriptor) for descriptor in _strings(item.get("mesh"))),
    )


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
