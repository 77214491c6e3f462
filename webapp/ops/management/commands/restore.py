"""`manage.py restore BACKUP`: restore a backup made by `manage.py backup` into this checkout.

The target (the configured database and indexes) must be empty, unless --force. The whole backup is checked against
its manifest first: a truncated or altered backup is refused and nothing is changed. A search leg whose files the
backup holds for the engine configured here is copied; any other (a server's, or with --rebuild-indexes) is written
again from the restored articles. The rows of every table and the entries of each leg are compared with the manifest
at the end. The library's indexes, which a backup does not hold, are written again from the restored documents. See
docs/production.md, "Backup and restore".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.errors import IndexerError
from webapp.ops.backup.database import DatabaseBackupError
from webapp.ops.backup.indexes import IndexBackupError
from webapp.ops.backup.manifest import BackupInvalidError
from webapp.ops.backup.service import BackupError, TargetNotEmptyError, backup_restore


class Command(BaseCommand):
    help = "Restore a backup (folder or archive) into this checkout's empty database and indexes."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", type=Path, help="The backup folder or archive `manage.py backup` wrote.")
        parser.add_argument(
            "--force", action="store_true", help="Replace the database and indexes even when they hold data."
        )
        parser.add_argument(
            "--rebuild-indexes",
            action="store_true",
            help="Write both search legs again from the restored articles instead of copying them (another embedder).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = backup_restore(
                source=options["source"],
                force=options["force"],
                rebuild_indexes=options["rebuild_indexes"],
                say=self.stdout.write,
            )
        except (BackupInvalidError, TargetNotEmptyError) as exc:
            raise CommandError(f"refused: {exc}. Nothing was changed") from exc
        except (BackupError, DatabaseBackupError, IndexBackupError, IndexerError) as exc:
            raise CommandError(str(exc)) from exc
        manifest, counts = report.manifest, report.counts
        rows = manifest.database.rows
        self.stdout.write(
            f"restored: {manifest.database.method}, {sum(rows.values()):,} rows in {len(rows)} tables as in the "
            f"backup; generation {manifest.indexes.generation}: lexical {counts['lexical']:,} documents "
            f"({report.methods['lexical']}), vectors {counts['vectors']:,} points ({report.methods['vectors']})"
        )
        self.stdout.write(
            f"  library: indexes rebuilt from the database, {report.library.documents:,} documents, "
            f"{report.library.passages:,} passages"
        )
        for note in report.notes:
            self.stdout.write(f"  note: {note}")
        self.stdout.write(f"  took {sum(report.timings.steps.values()):.1f} s: {report.timings.line()}")
