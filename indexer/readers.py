"""Picks the reader for a corpus file by its name and expands directories into the files they hold."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from indexer.errors import CorpusFormatError
from indexer.jsonl_reader import read_jsonl
from indexer.pubmed_xml import read_pubmed_xml
from indexer.records import ArticleRecord, ReadStats

Reader = Callable[[Path, ReadStats], Iterator[ArticleRecord]]

_READERS: dict[str, Reader] = {
    ".xml": read_pubmed_xml,
    ".xml.gz": read_pubmed_xml,
    ".jsonl": read_jsonl,
    ".jsonl.gz": read_jsonl,
}


def read_articles(path: Path, stats: ReadStats) -> Iterator[ArticleRecord]:
    """Stream the records of one corpus file; an unsupported name fails here, before anything is read."""
    reader = _reader_for(path)
    if reader is None:
        supported = ", ".join(_READERS)
        raise CorpusFormatError(f"unsupported file type for {path}: expected one of {supported}")
    return reader(path, stats)


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Files stay as given; a directory becomes the supported files under it, recursively and sorted."""
    expanded: list[Path] = []
    for path in paths:
        if path.is_dir():
            expanded.extend(_supported_files_under(path))
        elif path.exists():
            expanded.append(path)
        else:
            raise FileNotFoundError(f"corpus path does not exist: {path}")
    return expanded


def _supported_files_under(directory: Path) -> list[Path]:
    return sorted(
        path
        for path in directory.rglob("*")
        # Hidden files are editor backups or macOS "._" resource forks, never corpus data.
        if path.is_file() and not path.name.startswith(".") and _reader_for(path) is not None
    )


def _reader_for(path: Path) -> Reader | None:
    name = path.name.lower()
    return next((reader for suffix, reader in _READERS.items() if name.endswith(suffix)), None)
