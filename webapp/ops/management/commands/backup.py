"""`manage.py backup TARGET`: a consistent backup of the site into a new folder (or a .tar.gz / .tar archive).

It holds the database (SQLite's online backup, or `pg_dump` in custom format; Django's dumpdata where pg_dump is
missing), the active index generation, the files of each search leg that has files (tantivy, qdrant-edge, qdrant-client
local mode) or, for a leg in a server (OpenSearch, a Qdrant server), the note that a restore rebuilds it from the
articles in the database, and a manifest: model versions, the app's commit, the rows of every table, the entries of
each leg and a checksum of every file. On the embedded profile the stack must be stopped: the worker holds the vector
index. See docs/production.md, "Backup and restore".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.errors import IndexerError
from webapp.ops.backup.database import DatabaseBackupError
from webapp.ops.backup.service import BackupError, backup_create


class Command(BaseCommand):
    help = "Back up the database, the index generation and both search legs into a new folder or .tar.gz archive."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("target", type=Path, help="A folder (or .tar.gz, .tgz, .tar archive) that does not exist.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = backup_create(target=options["target"])
        except (BackupError, DatabaseBackupError) as exc:
            raise CommandError(str(exc)) from exc
        except IndexerError as exc:
            raise CommandError(
                f"{exc}. Stop the stack (the worker holds the embedded indexes) and back up again"
            ) from exc
        manifest = report.manifest
        legs = manifest.indexes
        rows = manifest.database.rows
        self.stdout.write(
            f"backup written to {report.path} ({report.size / 1e6:.1f} MB on disk, {manifest.profile} profile)\n"
            f"  database: {manifest.database.method}, {sum(rows.values()):,} rows in {len(rows)} tables "
            f"({rows.get('corpus_article', 0):,} articles, {rows.get('qa_question', 0):,} questions)\n"
            f"  generation {legs.generation}: lexical {legs.lexical.backend} {legs.lexical.count:,} documents "
            f"({legs.lexical.method}), vectors {legs.vectors.backend} {legs.vectors.count:,} points "
            f"({legs.vectors.method})\n"
            f"  took {sum(report.timings.steps.values()):.1f} s: {report.timings.line()}"
        )
