"""A backup's manifest: what it holds, how each part was taken, the counts to check a restore against, and a checksum
of every file, so that a truncated or altered backup is refused before anything is restored from it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from indexer.file_digest import file_sha256

FORMAT = 1
MANIFEST = "manifest.json"
# The manifest's own checksum: a manifest cut short or edited by hand is caught before its file list is trusted.
MANIFEST_CHECKSUM = "manifest.sha256"


class BackupInvalidError(Exception):
    """The backup cannot be restored as it is (missing, truncated, altered, or of another format)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FileEntry(_Frozen):
    size: int
    sha256: str


class DatabasePart(_Frozen):
    vendor: str  # Django's: sqlite, postgresql
    method: str  # sqlite-backup, pg_dump, dumpdata
    file: str  # relative to the backup
    rows: dict[str, int]  # per table, counted in the snapshot that was saved
    migrations: dict[str, str]  # app -> its latest applied migration


class LegPart(_Frozen):
    backend: str
    name: str  # the folder, index or collection of the generation
    method: str  # "copy": its files are in the backup; "rebuild": restore writes it again from the database
    count: int  # documents (lexical) or points (vectors) when the backup was taken
    path: str = ""  # with "copy": the folder in the backup


class IndexesPart(_Frozen):
    generation: str
    pointer: bool  # whether the index folder held the generation pointer (without one, the first generation is live)
    lexical: LegPart
    vectors: LegPart


class Manifest(_Frozen):
    format: int
    created_at: str
    seconds: float
    profile: str
    app: dict[str, Any]
    database: DatabasePart
    indexes: IndexesPart
    models: dict[str, dict[str, Any]]
    files: dict[str, FileEntry]


def file_entries(root: Path) -> dict[str, FileEntry]:
    """Every file under `root` but the manifest's own two, by path relative to it."""
    return {
        path.relative_to(root).as_posix(): FileEntry(size=path.stat().st_size, sha256=file_sha256(path))
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name not in (MANIFEST, MANIFEST_CHECKSUM)
    }


def manifest_write(root: Path, manifest: Manifest) -> None:
    text = json.dumps(manifest.model_dump(), indent=2, sort_keys=True) + "\n"
    (root / MANIFEST).write_text(text, encoding="utf-8")
    (root / MANIFEST_CHECKSUM).write_text(f"{hashlib.sha256(text.encode()).hexdigest()}  {MANIFEST}\n")


def manifest_verified(root: Path) -> Manifest:
    """The manifest of the backup at `root`, once it and every file it lists are found intact.

    Nothing is written; the first problem found raises BackupInvalidError naming the file and what is wrong with it.
    """
    if not root.is_dir():
        raise BackupInvalidError(f"{root} is not a backup: no such folder")
    manifest_path, checksum_path = root / MANIFEST, root / MANIFEST_CHECKSUM
    if not manifest_path.is_file() or not checksum_path.is_file():
        # A backup killed before its end never gets these: they are written last, before the folder is renamed.
        raise BackupInvalidError(f"{root} is not a complete backup: {MANIFEST} or {MANIFEST_CHECKSUM} is missing")
    raw = manifest_path.read_bytes()
    expected = checksum_path.read_text().split()[0] if checksum_path.read_text().split() else ""
    if hashlib.sha256(raw).hexdigest() != expected:
        raise BackupInvalidError(f"{manifest_path} does not match {MANIFEST_CHECKSUM}: the manifest was altered")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise BackupInvalidError(f"{manifest_path} is not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise BackupInvalidError(f"{manifest_path} is of format {found!r}; this version restores format {FORMAT}")
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        raise BackupInvalidError(f"{manifest_path} does not describe a backup: {exc}") from exc
    _check_files(root, manifest.files)
    return manifest


def _check_files(root: Path, expected: dict[str, FileEntry]) -> None:
    found = {
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and path.name not in (MANIFEST, MANIFEST_CHECKSUM)
    }
    if missing := sorted(set(expected) - found):
        raise BackupInvalidError(f"the backup at {root} is incomplete: {', '.join(missing[:5])} missing")
    if extra := sorted(found - set(expected)):
        raise BackupInvalidError(f"the backup at {root} holds files its manifest does not list: {', '.join(extra[:5])}")
    for name, entry in expected.items():
        path = root / name
        size = path.stat().st_size
        if size != entry.size:
            raise BackupInvalidError(
                f"{name} in the backup is {size:,} bytes where the manifest says {entry.size:,}: the backup is "
                "truncated or damaged"
            )
        if file_sha256(path) != entry.sha256:
            raise BackupInvalidError(
                f"{name} in the backup does not match its checksum: the backup is damaged or altered"
            )
