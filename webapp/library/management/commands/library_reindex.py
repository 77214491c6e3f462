"""`manage.py library_reindex`: write every library document's passages into the library's indexes again.

For a restore (a backup holds the documents and their passages in the database but not the library's indexes), a
change of embedding model, or indexes lost. It opens the indexes itself: on the embedded profile, stop the stack first
(the worker holds the vector shard)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from webapp.library import indexing
from webapp.library.engines import release_library_engines
from webapp.library.models import Document


class Command(BaseCommand):
    help = "Write every library document's passages into the library's lexical and vector indexes again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--owner", type=int, help="Only this user's documents (their id).")

    def handle(self, *args: Any, **options: Any) -> None:
        documents = Document.objects.filter(deleting=False).order_by("pk")
        if options["owner"] is not None:
            documents = documents.filter(owner_id=options["owner"])
        started = time.perf_counter()
        ids = list(documents.values_list("pk", flat=True))
        try:
            for number, document_id in enumerate(ids, start=1):
                indexing.document_index(document_id=document_id)
                self.stdout.write(f"{number}/{len(ids)} document {document_id} indexed")
        finally:
            release_library_engines()
        self.stdout.write(f"{len(ids)} documents indexed in {time.perf_counter() - started:.1f} s")
