"""Opening corpus files that may or may not be gzip-compressed."""

from __future__ import annotations

import gzip
import zlib
from io import BufferedIOBase
from pathlib import Path

GZIP_MAGIC = b"\x1f\x8b"
# A truncated gzip surfaces as EOFError, a damaged header or CRC as BadGzipFile, a damaged deflate stream as zlib.error.
GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def open_binary(path: Path) -> BufferedIOBase:
    """Open plain or gzip data by its magic bytes: downloaded files are often renamed or lack the .gz suffix."""
    with path.open("rb") as probe:
        is_gzip = probe.read(len(GZIP_MAGIC)) == GZIP_MAGIC
    return gzip.open(path, "rb") if is_gzip else path.open("rb")
