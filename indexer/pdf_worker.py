"""The child process that opens an uploaded PDF with PDFium: `python -m indexer.pdf_worker` reads the file on stdin
and writes its text lines, with their positions and fonts, as JSON on stdout.

PDFium is C++ and inflates a stream in full before parsing it, so an 800 kB file can ask it for gigabytes; a damaged
file can crash it. Here it runs under an address-space and CPU-time limit set before it is loaded: a bomb or a crash
ends this process, not the Celery worker, and the parent (indexer.pdf_text) tells the uploader why.
"""

from __future__ import annotations

import ctypes
import json
import resource
import sys
from collections import Counter
from typing import Any

from indexer.pdf_ocr import ocr_page

# Exit codes the parent reads; any other failure (a signal, a crash) is reported as unreadable within the limits.
EXIT_OUT_OF_MEMORY = 3

# A character further from the previous one than this many font sizes starts a new line fragment: the gutter of a
# two-column page or the gap between table cells, even where the producer wrote them as one run of text.
_GAP_IN_SIZES = 1.0
_BOLD_NAMES = ("bold", "black", "heavy", "semibold", "demibold")
_FORCE_BOLD_FLAG = 1 << 18  # PDF font descriptor flag ForceBold
# PDFium's code for a hyphen it recognised at a line end (its text-range call shows it as U+FFFE).
_LINE_END_HYPHEN = "\x02"
# A 1,000-page book is about 3 million characters; the parent must not be handed an unbounded JSON reply.
MAX_TEXT_CHARS = 5_000_000


def main(argv: list[str]) -> int:
    memory, cpu_seconds, max_pages = (int(value) for value in argv[:3])
    tesseract = argv[3] if len(argv) > 3 else ""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    data = sys.stdin.buffer.read()
    try:
        result = _read(data, max_pages=max_pages, tesseract=tesseract)
    except MemoryError:
        return EXIT_OUT_OF_MEMORY
    sys.stdout.write(json.dumps(result))
    return 0


def _read(data: bytes, *, max_pages: int, tesseract: str) -> dict[str, Any]:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as error:
        code = getattr(error, "err_code", None)
        return {"error": "encrypted" if code == pdfium_c.FPDF_ERR_PASSWORD else "damaged", "detail": str(error)}
    count = len(document)
    if count > max_pages:
        return {"error": "too_many_pages", "pages": count}
    metadata = document.get_metadata_dict(skip_empty=True)
    pages = []
    chars = 0
    for index in range(count):
        page = document[index]
        width, height = page.get_size()
        lines = _lines(page.get_textpage())
        chars += sum(len(line[6]) for line in lines)
        if chars > MAX_TEXT_CHARS:
            return {"error": "too_much_text"}
        ocr: list[str] | None = None
        if not any(line[6].strip() for line in lines):
            ocr = ocr_page(page, tesseract) if tesseract else None
        pages.append({"width": width, "height": height, "lines": lines, "ocr": ocr})
    return {"metadata": {key: str(value) for key, value in metadata.items()}, "pages": pages}


def _lines(textpage: Any) -> list[list[Any]]:
    """Line fragments in stream order: [x0, y0, x1, y1, font size, bold, text]. A fragment ends at PDFium's own line
    breaks, at a change of baseline, and at a gap wider than a character."""
    import pypdfium2.raw as pdfium_c

    raw = textpage.raw
    fragments: list[list[Any]] = []
    chars: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []
    sizes: Counter[float] = Counter()
    bold = False
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))

    def close() -> None:
        nonlocal chars, boxes, sizes, bold
        text = "".join(chars).strip()
        if text and boxes:
            fragments.append(
                [
                    round(min(box[0] for box in boxes), 2),
                    round(min(box[2] for box in boxes), 2),
                    round(max(box[1] for box in boxes), 2),
                    round(max(box[3] for box in boxes), 2),
                    sizes.most_common(1)[0][0],
                    bold,
                    text,
                ]
            )
        chars, boxes, sizes, bold = [], [], Counter(), False

    for index in range(textpage.count_chars()):
        char = chr(pdfium_c.FPDFText_GetUnicode(raw, index))
        if char in "\r\n":
            close()
            continue
        if char == _LINE_END_HYPHEN:
            char = "-"  # PDFium flags it as generated, but the hyphen is on the page and the layout joins the word
        elif char.isspace() or pdfium_c.FPDFText_IsGenerated(raw, index) or not char.isprintable():
            if chars and chars[-1] != " ":
                chars.append(" ")
            continue
        pdfium_c.FPDFText_GetCharBox(raw, index, left, right, bottom, top)
        size = round(pdfium_c.FPDFText_GetFontSize(raw, index), 1)
        if boxes:
            previous = boxes[-1]
            off_baseline = abs(bottom.value - previous[2]) > 0.6 * size and abs(top.value - previous[3]) > 0.6 * size
            if off_baseline or left.value - previous[1] > _GAP_IN_SIZES * size or left.value < previous[0] - size:
                close()
        if not boxes:
            bold = _is_bold(raw, index)
        chars.append(char)
        boxes.append((left.value, right.value, bottom.value, top.value))
        sizes[size] += 1
    close()
    return fragments


def _is_bold(raw: Any, index: int) -> bool:
    import pypdfium2.raw as pdfium_c

    if pdfium_c.FPDFText_GetFontWeight(raw, index) >= 600:
        return True
    flags = ctypes.c_int()
    buffer = ctypes.create_string_buffer(128)
    pdfium_c.FPDFText_GetFontInfo(raw, index, buffer, len(buffer), flags)
    name = buffer.value.decode("latin-1").lower()
    return bool(flags.value & _FORCE_BOLD_FLAG) or any(word in name for word in _BOLD_NAMES)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
