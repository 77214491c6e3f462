"""Which reader an uploaded file goes to, decided by its bytes: a file's name and declared type are the uploader's
word, and a zip renamed `paper.pdf` must be refused as what it is, not fed to the PDF reader."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from indexer.full_text import FullText, FullTextError
from indexer.jats import MAX_JATS_BYTES, read_jats
from indexer.pdf_text import HEADER_WINDOW, read_pdf

Kind = Literal["pdf", "jats"]

# A PDF's header may follow a little junk (indexer.pdf_text.HEADER_WINDOW); XML may open with a byte-order mark and
# whitespace.
_UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class ReadFile:
    kind: Kind
    article: FullText


def sniff_kind(data: bytes) -> Kind:
    """ "pdf" or "jats" from the file's first bytes, or FullTextError naming what it seems to be instead."""
    if b"%PDF-" in data[:HEADER_WINDOW]:
        return "pdf"
    head = data.removeprefix(_UTF8_BOM).lstrip()[:1]
    if head == b"<":
        return "jats"
    raise FullTextError(f"this is neither a PDF nor JATS XML ({_what_it_is(data)}); upload a PDF or a JATS .xml file")


def read_full_text(data: bytes, *, max_bytes: int, max_pages: int, max_seconds: float) -> ReadFile:
    """The article in an uploaded file, read by the reader its bytes call for; FullTextError says why not.
    `max_seconds` bounds a PDF's reading (OCR of a long scan is what takes time)."""
    if not data:
        raise FullTextError("the file is empty")
    kind = sniff_kind(data)
    if kind == "pdf":
        article = read_pdf(data, max_bytes=max_bytes, max_pages=max_pages, max_seconds=max_seconds)
        return ReadFile(kind=kind, article=article)
    # `max_bytes` is the upload's cap, sized for PDFs with figures; XML has no figures, and parsing a large tree is
    # what costs, so JATS keeps its own, lower cap whatever the upload's is.
    return ReadFile(kind=kind, article=read_jats(data, max_bytes=min(max_bytes, MAX_JATS_BYTES)))


_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"PK\x03\x04", "a zip archive, or an Office document"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"\xd0\xcf\x11\xe0", "an old Office document"),
    (b"{\\rtf", "an RTF document"),
    (b"\x7fELF", "a program"),
    (b"MZ", "a program"),
)


def _what_it_is(data: bytes) -> str:
    for signature, name in _SIGNATURES:
        if data.startswith(signature):
            return f"its contents are {name}"
    return "its contents match neither"
