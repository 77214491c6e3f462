"""`manage.py library_reindex`: write every library document's passages into the library's indexes again.

For a change of embedding model, or indexes lost (`manage.py restore` does the same itself). It opens the indexes
itself: on the embedded profile, stop the stack first (the worker holds the vector shard)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from webapp.library.indexing import library_reindex


class Command(BaseCommand):
    help = "Write every library document's passages into the library's lexical and vector indexes again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--owner", type=int, help="Only this user's documents (their id).")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.perf_counter()
        done = library_reindex(
            owner_id=options["owner"],
            progress=lambda number, of, document_id: self.stdout.write(f"{number}/{of} document {document_id} indexed"),
        )
        self.stdout.write(
            f"{done.documents} documents indexed ({done.passages} passages) in {time.perf_counter() - started:.1f} s"
        )
