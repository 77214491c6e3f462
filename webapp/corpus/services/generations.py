"""Index generations: a full rebuild writes a new generation beside the live one, then switches a pointer.

The pointer is a small file in VERIMED_INDEX_DIR (a volume every container shares in docker-compose). Every process
re-reads it when it changes and reopens its engines on the new generation, so questions keep being answered from
the old generation until the new one is complete. The generation names the tantivy and qdrant-edge folders, the
OpenSearch index and the Qdrant collection alike.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

INITIAL_GENERATION = "g1"
_POINTER = "ACTIVE_GENERATION"


def pointer_path() -> Path:
    return Path(settings.VERIMED.paths.index_dir) / _POINTER


def active_generation() -> str:
    try:
        name = pointer_path().read_text().strip()
    except FileNotFoundError:
        return INITIAL_GENERATION
    return name or INITIAL_GENERATION


def new_generation_name() -> str:
    # Sortable by time, and unique: microseconds keep two quick rebuilds (tests, a retried task) apart.
    return f"g{datetime.now(tz=UTC).strftime('%Y%m%d%H%M%S%f')}"


def activate_generation(name: str) -> None:
    """Switch every process to `name` at once: the pointer is replaced atomically, never half-written."""
    path = pointer_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(name)
    os.replace(temporary, path)


def remove_generation_folders(*, keep: set[str]) -> list[str]:
    """Delete embedded-engine folders of generations not in `keep` (the live one and the previous, for rollback)."""
    removed: list[str] = []
    root = Path(settings.VERIMED.paths.index_dir)
    if not root.exists():
        return removed
    for folder in root.iterdir():
        generation = _generation_of(folder)
        if folder.is_dir() and generation.startswith("g") and generation not in keep:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
    return removed


def _generation_of(folder: Path) -> str:
    return folder.name.rsplit("-", 1)[-1]


def generation_names() -> list[str]:
    """Generations with embedded-engine folders on disk, oldest first (server indexes are not listed here)."""
    root = Path(settings.VERIMED.paths.index_dir)
    if not root.exists():
        return []
    names = {_generation_of(folder) for folder in root.iterdir() if folder.is_dir()}
    return sorted(name for name in names if name.startswith("g"))


def remove_generation(name: str) -> list[str]:
    """Delete one generation's embedded-engine folders (a rebuild cancelled before its switch)."""
    if name == active_generation():
        raise ValueError(f"generation {name} is active: switch to another before removing it")
    root = Path(settings.VERIMED.paths.index_dir)
    if not root.exists():
        return []
    removed: list[str] = []
    for folder in root.iterdir():
        if folder.is_dir() and _generation_of(folder) == name:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
    return removed
