"""Many files in one request, each added or refused on its own: one bad file never costs the others."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from webapp.accounts.roles import AnyUser
from webapp.library.admission import DocumentRefusedError, size_in_words
from webapp.library.models import Document
from webapp.library.services import clean_filename, document_upload


@dataclass(frozen=True)
class UploadOutcome:
    filename: str
    document: Document | None
    created: bool
    refusal: str | None
    http_status: int  # 201 added, 200 already there, else the refusal's
    retry_after_seconds: int | None = None  # a refusal that waiting cures (the hourly limit, a busy site)

    @property
    def label(self) -> str:
        if self.refusal is not None:
            return "refused"
        return "added" if self.created else "already in your library"


def uploads_from(*, owner: AnyUser, files: Sequence[UploadedFile]) -> list[UploadOutcome]:
    return [_upload_one(owner=owner, file=file) for file in files]


def _upload_one(*, owner: AnyUser, file: UploadedFile) -> UploadOutcome:
    name = clean_filename(file.name or "")
    limit = settings.VERIMED.limits.library_file_max_bytes
    try:
        # The size Django counted while it received the file: an oversized one is refused before it is read into
        # memory (it waits on disk, Django's temporary file, until the request ends).
        if file.size is not None and file.size > limit:
            raise DocumentRefusedError(
                f"{name}: the file is {size_in_words(file.size)}; a paper may be at most {size_in_words(limit)}",
                http_status=413,
            )
        upload = document_upload(owner=owner, filename=name, data=file.read())
    except DocumentRefusedError as exc:
        return UploadOutcome(
            filename=name,
            document=None,
            created=False,
            refusal=str(exc),
            http_status=exc.http_status,
            retry_after_seconds=exc.retry_after_seconds,
        )
    return UploadOutcome(
        filename=name,
        document=upload.document,
        created=upload.created,
        refusal=None,
        http_status=201 if upload.created else 200,
    )
