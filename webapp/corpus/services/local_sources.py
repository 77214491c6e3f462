"""Corpus files an admin may ingest from the site: files under the allowed folders, and uploads.

A path is trusted only after it is resolved (symlinks followed, `..` collapsed) and found inside one of the folders
of VERIMED_INGEST_DIRS, or the upload folder: a form value can name any path at all.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.core.files.uploadedfile import UploadedFile
from django.utils import timezone
from django.utils.text import get_valid_filename

from webapp.corpus.models import PubmedFile

SUPPORTED_SUFFIXES = (".xml", ".xml.gz", ".jsonl", ".jsonl.gz")
SUPPORTED_TEXT = ".xml, .xml.gz, .jsonl or .jsonl.gz"
LISTING_LIMIT = 2000  # a folder of a whole baseline would make an unusable page
_NAME_LIMIT = 128  # PubmedFile.name and Article.source_file
_GZIP_MAGIC = b"\x1f\x8b"


class IngestSourceRejectedError(Exception):
    """A path or upload that may not be ingested; the message tells the admin why."""


@dataclass(frozen=True)
class IngestSource:
    path: Path
    root: Path
    size: int

    @property
    def label(self) -> str:
        return str(self.path.relative_to(self.root))


def ingest_roots() -> list[Path]:
    return [Path(root).resolve() for root in settings.VERIMED.paths.ingest_dirs]


def upload_dir() -> Path:
    return Path(settings.VAR_DIR) / "uploads"


def supported_name(name: str) -> bool:
    lowered = name.lower()
    return not lowered.startswith(".") and lowered.endswith(SUPPORTED_SUFFIXES)


def _root_of(resolved: Path, roots: list[Path]) -> Path | None:
    return next((root for root in roots if resolved.is_relative_to(root)), None)


def ingest_sources(*, limit: int = LISTING_LIMIT) -> list[IngestSource]:
    """Corpus files under the allowed folders, sorted; a symlink that leads outside them is left out."""
    roots = ingest_roots()
    found: dict[Path, IngestSource] = {}
    for root in roots:
        for path in _files_under(root):
            if len(found) >= limit:
                break
            resolved = path.resolve()
            owner = _root_of(resolved, roots)
            if owner is not None and resolved not in found and resolved.is_file():
                found[resolved] = IngestSource(path=resolved, root=owner, size=resolved.stat().st_size)
    return sorted(found.values(), key=lambda source: (str(source.root), source.label))


def _files_under(root: Path) -> Iterator[Path]:
    # os.walk does not descend into symlinked folders: no cycles, no wandering off through a link.
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        for name in sorted(names):
            if supported_name(name):
                yield Path(folder) / name


def ingest_path_resolve(*, path: str) -> Path:
    """The real file a submitted path names, when it is a corpus file inside an allowed folder."""
    if not path.strip():
        raise IngestSourceRejectedError("Choose a file to ingest.")
    candidate = Path(path.strip())
    if not candidate.is_absolute():
        raise IngestSourceRejectedError("Give the file's full path, as listed.")
    resolved = candidate.resolve()
    if _root_of(resolved, ingest_roots()) is None:
        raise IngestSourceRejectedError(
            f"{path} is outside the folders files may be ingested from (VERIMED_INGEST_DIRS)."
        )
    if not resolved.is_file():
        raise IngestSourceRejectedError(f"{path} is not a file.")
    if not supported_name(resolved.name):
        raise IngestSourceRejectedError(f"{resolved.name} is not a {SUPPORTED_TEXT} file.")
    return resolved


def upload_save(*, upload: UploadedFile) -> Path:
    """Keep an uploaded corpus file under VAR_DIR/uploads, after checking its name, size and (gzip) header."""
    try:
        name = get_valid_filename(Path(upload.name or "").name)
    except SuspiciousFileOperation as exc:
        raise IngestSourceRejectedError("The upload has no usable file name.") from exc
    if not supported_name(name):
        raise IngestSourceRejectedError(f"{name} cannot be ingested: upload a {SUPPORTED_TEXT} file.")
    limit = settings.VERIMED.limits.upload_max_bytes
    if upload.size is None or upload.size > limit:
        raise IngestSourceRejectedError(
            f"{name} is {_megabytes(upload.size or 0)}: uploads are limited to {_megabytes(limit)}."
        )
    chunks = upload.chunks()
    first = next(chunks, b"")
    if name.lower().endswith(".gz") and not first.startswith(_GZIP_MAGIC):
        raise IngestSourceRejectedError(f"{name} is named .gz but is not gzip-compressed.")
    directory = upload_dir()
    directory.mkdir(parents=True, exist_ok=True)
    # Unique, sortable names: two uploads of the same file name never overwrite each other.
    target = directory / f"{timezone.now():%Y%m%d%H%M%S}-{uuid.uuid4().hex[:8]}-{name}"
    with target.open("wb") as out:
        out.write(first)
        for chunk in chunks:
            out.write(chunk)
    return target


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def _row_name(path: Path) -> str:
    """A file's row name, which also labels its articles' source: where it lies, kept short enough to store."""
    if path.is_relative_to(upload_dir().resolve()):
        name = f"upload:{path.name}"
    else:
        root = _root_of(path, ingest_roots())
        name = f"local:{path.relative_to(root).as_posix() if root else path.name}"
    if len(name) <= _NAME_LIMIT:
        return name
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    return f"local:{digest}-{path.name[-(_NAME_LIMIT - 17) :]}"


def pubmed_files_for_paths(*, paths: list[Path]) -> list[PubmedFile]:
    """Rows to process these local files in a new job; a file already being processed by a job is refused."""
    rows: list[PubmedFile] = []
    for path in dict.fromkeys(paths):
        name = _row_name(path)
        row, _ = PubmedFile.objects.select_for_update().get_or_create(name=name)
        if row.job_id and row.job and not row.job.finished_at:
            raise IngestSourceRejectedError(f"{path.name} is already being ingested by job {row.job_id}.")
        # Every run reads the file afresh: unchanged articles are left alone by the store, so a re-run is cheap.
        row.source_path, row.url, row.md5, row.size = str(path), "", "", 0
        row.status, row.error, row.started_at, row.finished_at = PubmedFile.Status.PENDING, "", None, None
        row.articles = row.skipped_without_abstract = row.deleted = 0
        row.save()
        rows.append(row)
    return rows
