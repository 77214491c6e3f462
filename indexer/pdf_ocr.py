"""OCR for a page with no text layer (a scan): PDFium renders it, Debian's `tesseract` CLI reads it.

The image goes to tesseract as a binary PGM on stdin, so nothing is written to disk and no imaging library is
needed. Tesseract runs single-threaded (the development and CI machines have two cores shared with other work) and
under a timeout; it inherits the PDF worker's memory limit.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Any

# 300 dpi is what tesseract is tuned for; an A4 page is then 2480 x 3508 greyscale pixels, 8.7 MB.
OCR_DPI = 300
# A dense page takes tesseract 2-6 s on one core of the development machine; a page that takes much longer is not
# text tesseract can read well anyway.
OCR_TIMEOUT_S = 60.0
# Pixels per side: a page whose MediaBox claims to be a square mile must not become a gigabyte bitmap.
MAX_OCR_SIDE_PX = 6000

_BLANK_LINES = re.compile(r"\n\s*\n")


def ocr_page(page: Any, tesseract: str) -> list[str]:
    """The page's paragraphs as tesseract reads them, one string of lines each; [] where it reads nothing."""
    width, height = page.get_size()
    scale = min(OCR_DPI / 72, MAX_OCR_SIDE_PX / max(width, height, 1))
    bitmap = page.render(scale=scale, grayscale=True)
    pgm = _pgm(bytes(bitmap.buffer), bitmap.width, bitmap.height, bitmap.stride)
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        done = subprocess.run(
            [tesseract, "stdin", "stdout", "-l", "eng", "--dpi", str(round(72 * scale))],
            input=pgm,
            capture_output=True,
            timeout=OCR_TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    text = done.stdout.decode("utf-8", "replace")
    # Line breaks are kept: the layout joins them as it joins a text layer's lines (hyphens included).
    return [block.strip() for block in _BLANK_LINES.split(text) if block.strip()]


def _pgm(buffer: bytes, width: int, height: int, stride: int) -> bytes:
    rows = b"".join(buffer[row * stride : row * stride + width] for row in range(height))
    return b"P5\n%d %d\n255\n" % (width, height) + rows
