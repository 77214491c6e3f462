"""Read an uploaded PDF article into its identifiers and paragraphs (the shape indexer.jats gives for JATS).

PDFium (pypdfium2) was chosen by measurement: benchmarks/pdf_parsing.py and the "Parsing PDFs" section of
benchmarks/HISTORY.md. It is the fastest of the permissively licensed readers by an order of magnitude, gives each
character's box and font (so reading order, headings and page furniture are worked out here from geometry rather
than taken from the producer's stream order), and renders pages, which OCR of a scanned page needs.

An upload is untrusted. Before PDFium sees it the file must be a PDF by its bytes, within the size limit and
complete (a PDF ends with %%EOF; PDFium would quietly rebuild a truncated file and return half an article). PDFium
then runs in a child process (indexer.pdf_worker) under an address-space and CPU-time limit: a compressed stream that
inflates to gigabytes, or a file that crashes the C++ parser, ends the child with a clear refusal and leaves the
Celery worker alone. A page with no text layer is read by tesseract when it is installed and refused otherwise.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from indexer.full_text import FullText, FullTextError
from indexer.pdf_layout import Line, Page, without_furniture
from indexer.pdf_sections import identifiers, layout, title_of
from indexer.pdf_worker import EXIT_OUT_OF_MEMORY

# Articles with their figures run to a few MB; supplements with scans can reach 50 MB. Past that, not an article.
MAX_PDF_BYTES = 50 * 1024 * 1024
# A long review runs to 60 pages; a thesis is not an article to index, and every page costs time on the worker.
MAX_PDF_PAGES = 200
# Address space for the PDFium child. A 50-page article needs under 100 MB; rendering one page at 300 dpi for OCR
# adds 9 MB, tesseract another 150 MB. Anything that wants more is a bomb or a broken file.
MAX_PDF_MEMORY = 512 * 1024 * 1024
# CPU seconds for the child, and wall seconds for the parent to wait (OCR of scanned pages dominates: ~5 s a page).
MAX_PDF_CPU_S = 120
MAX_PDF_WALL_S = 300.0
# The %PDF- header may follow a little junk (mail gateways prepend some); PDF readers look in the first 1024 bytes.
HEADER_WINDOW = 1024
# %%EOF is the last token of a complete PDF; some producers append a few bytes of padding after it.
TRAILER_WINDOW = 2048
TESSERACT = "tesseract"

_OTHER_FORMATS = (
    (b"PK\x03\x04", "a ZIP archive (a Word .docx or other Office file?)"),
    (b"\xd0\xcf\x11\xe0", "an old Microsoft Office file (.doc)"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"{\\rtf", "an RTF document"),
    (b"\x1f\x8b", "a gzip archive"),
)


def read_pdf(
    data: bytes,
    *,
    max_bytes: int = MAX_PDF_BYTES,
    max_pages: int = MAX_PDF_PAGES,
    ocr: bool = True,
    max_seconds: float = MAX_PDF_WALL_S,
) -> FullText:
    """The article in `data`, or FullTextError saying why it is refused. `ocr=False` refuses scanned pages;
    `max_seconds` bounds the wall time (a caller answering a web request has less than a worker)."""
    if len(data) > max_bytes:
        raise FullTextError(f"the file is {len(data):,} bytes; a PDF may be at most {max_bytes:,} bytes")
    _check_is_pdf(data)
    result = _run_worker(data, max_pages=max_pages, tesseract=_tesseract() if ocr else "", max_seconds=max_seconds)
    pages = [_page(number, page) for number, page in enumerate(result["pages"], 1)]
    # A page with no text that OCR did not read: a scan, or a page that is one figure. A few such pages in a paper
    # are figures and cost nothing; when they are half the file or more, it is a scan and would be indexed empty.
    scanned = [page.number for page in pages if not page.lines and page.ocr is None]
    if scanned and 2 * len(scanned) >= len(pages):
        where = "the whole file" if len(scanned) == len(pages) else f"{len(scanned)} of its {len(pages)} pages"
        how = "OCR is turned off" if not ocr else "OCR (tesseract) is not installed on this server"
        raise FullTextError(
            f"{where} has no text layer (a scan or images of text) and {how}; upload a PDF with selectable text"
        )
    metadata = {str(key): str(value) for key, value in result["metadata"].items()}
    clean = without_furniture(pages)
    article = layout(clean)
    furniture = [
        line for page, kept in zip(pages[:1], clean[:1], strict=True) for line in page.lines if line not in kept.lines
    ]
    doi, pmid = identifiers(metadata, (*furniture, *article.first_lines))
    abstract = [paragraph for paragraph in article.paragraphs if paragraph.section.lower().startswith("abstract")]
    body = tuple(paragraph for paragraph in article.paragraphs if paragraph not in abstract)
    if not body and not abstract:
        raise FullTextError("the PDF holds no article text (only a title, page furniture or references)")
    return FullText(
        title=title_of(metadata, article.title_lines),
        abstract=" ".join(paragraph.text for paragraph in abstract),
        doi=doi,
        pmid=pmid,
        pmcid=None,
        paragraphs=body,
        pages=len(pages),
    )


def _check_is_pdf(data: bytes) -> None:
    head = data[:HEADER_WINDOW]
    if b"%PDF-" not in head:
        lowered = head.lstrip().lower()
        kind = next((name for magic, name in _OTHER_FORMATS if data.startswith(magic)), None)
        if kind is None and lowered.startswith((b"<!doctype html", b"<html", b"<?xml", b"<")):
            kind = "an HTML or XML page (a web page saved with a .pdf name?)"
        raise FullTextError(f"the file is {kind or 'not a PDF'}, not a PDF: it lacks the %PDF- header")
    if b"%%EOF" not in data[-TRAILER_WINDOW:]:
        raise FullTextError("the PDF is incomplete (it does not end with %%EOF): truncated during upload or damaged")


def _tesseract() -> str:
    return shutil.which(TESSERACT) or ""


def _run_worker(data: bytes, *, max_pages: int, tesseract: str, max_seconds: float) -> dict[str, Any]:
    command = [sys.executable, "-m", "indexer.pdf_worker", str(MAX_PDF_MEMORY), str(MAX_PDF_CPU_S), str(max_pages)]
    try:
        done = subprocess.run(
            [*command, tesseract],
            input=data,
            capture_output=True,
            timeout=max_seconds,
            cwd=Path(__file__).resolve().parent.parent,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise FullTextError(
            f"reading the PDF took longer than {max_seconds:.0f} s (a scan of many pages, read by OCR?); refused"
        ) from None
    if done.returncode != 0:
        # An allocation PDFium cannot make under the limit ends in MemoryError, abort or a segfault, by where it
        # happened; past the limit, all of them mean the same to the uploader.
        limit = f"{MAX_PDF_MEMORY // (1024 * 1024)} MB"
        if done.returncode == EXIT_OUT_OF_MEMORY or done.returncode < 0:
            raise FullTextError(
                f"the PDF cannot be unpacked within {limit} of memory: its compressed content expands far beyond "
                "any article's (a decompression bomb) or it is damaged"
            )
        raise FullTextError("the PDF could not be read: it is damaged or uses features the reader does not support")
    result: dict[str, Any] = json.loads(done.stdout)
    error = result.get("error")
    if error == "encrypted":
        raise FullTextError("the PDF is encrypted and needs a password to open; upload an unprotected copy")
    if error == "too_many_pages":
        raise FullTextError(f"the PDF has {result['pages']} pages; at most {max_pages} are accepted for one article")
    if error == "too_much_text":
        raise FullTextError("the PDF holds far more text than an article; refused")
    if error:
        raise FullTextError("the PDF is damaged and could not be opened (its structure is broken)")
    return result


def _page(number: int, raw: dict[str, Any]) -> Page:
    lines = tuple(
        Line(number, float(x0), float(y0), float(x1), float(y1), float(size), bool(bold), str(text))
        for x0, y0, x1, y1, size, bold, text in raw["lines"]
    )
    ocr = tuple(str(block) for block in raw["ocr"]) if raw.get("ocr") is not None else None
    return Page(number, float(raw["width"]), float(raw["height"]), lines, ocr)
