"""The SHA-256 of a file, read in blocks: what the model assembly, checkpoint overlays and backups check files by.

In the indexer because it is the one library every other package may import (pyproject's import contracts)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of the file's bytes; a multi-GB file is never held in memory whole."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(8 << 20):
            digest.update(block)
    return digest.hexdigest()
