"""The database part of a backup: a consistent snapshot, the rows of every table counted in that same snapshot, and its
restore into an empty database of the same kind.

SQLite is copied with its online backup API (a consistent copy while the site keeps running). PostgreSQL is saved by
`pg_dump` in its custom format from a snapshot exported by the transaction that counts the rows, so the counts are
those of the dump; without `pg_dump` on the PATH, Django's `dumpdata` is the fallback (slower, and it leaves out the
rows `migrate` makes itself, which a restore makes again).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.management import call_command
from django.db import connection, connections, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader

from webapp.ops.backup.manifest import DatabasePart

SQLITE_FILE = "db.sqlite3"
PG_DUMP_FILE = "db.pgdump"
# XML rather than JSON: Django's JSON encoder cuts datetimes to milliseconds, its XML serializer keeps microseconds.
DUMPDATA_FILE = "db.xml"
# Rows `migrate` writes into an empty database by itself (content types, permissions, the role groups of
# accounts/0001): a dumpdata restore lets `migrate` make them again, so it does not compare their counts.
MIGRATION_TABLES = frozenset(
    {"django_migrations", "django_content_type", "auth_permission", "auth_group", "auth_group_permissions"}
)


class DatabaseBackupError(Exception):
    """The database could not be saved or restored; the message says why and what to do."""


def model_tables() -> list[str]:
    """The table of every model of every installed app, many-to-many tables included."""
    return sorted(
        {
            model._meta.db_table
            for model in apps.get_models(include_auto_created=True)
            if model._meta.managed and not model._meta.proxy
        }
    )


def _sqlite_path() -> Path:
    return Path(settings.DATABASES["default"]["NAME"])


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _counts(cursor: Any, existing: set[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table in model_tables():
        if table in existing:
            cursor.execute(f"SELECT COUNT(*) FROM {_quoted(table)}")
            counts[table] = int(cursor.fetchone()[0])
    return counts


def _latest_migrations(cursor: Any) -> dict[str, str]:
    cursor.execute("SELECT app, name FROM django_migrations ORDER BY id")
    latest: dict[str, str] = {}
    for app, name in cursor.fetchall():
        latest[app] = name
    return latest


def database_backup(folder: Path) -> DatabasePart:
    """Save the database into `folder` and count its rows in the same snapshot."""
    folder.mkdir(parents=True, exist_ok=True)
    if connection.vendor == "sqlite":
        return _sqlite_backup(folder)
    if connection.vendor == "postgresql":
        return _postgres_backup(folder)
    raise DatabaseBackupError(f"backups of {connection.vendor} databases are not supported (SQLite and PostgreSQL are)")


def _sqlite_backup(folder: Path) -> DatabasePart:
    source_path = _sqlite_path()
    if not source_path.is_file():
        raise DatabaseBackupError(f"no database at {source_path}: nothing to back up (run `manage.py migrate` first?)")
    target = folder / SQLITE_FILE
    with closing(sqlite3.connect(source_path, timeout=30)) as source, closing(sqlite3.connect(target)) as copy:
        source.backup(copy)
        # One self-contained file: no write-ahead log beside it.
        copy.execute("PRAGMA journal_mode=DELETE")
        cursor = copy.cursor()
        existing = {row[0] for row in cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        rows, migrations = _counts(cursor, existing), _latest_migrations(cursor)
    return DatabasePart(
        vendor="sqlite", method="sqlite-backup", file=f"{folder.name}/{SQLITE_FILE}", rows=rows, migrations=migrations
    )


def _postgres_environment() -> dict[str, str]:
    """libpq's variables for the configured database, so no password appears on a command line."""
    database = settings.DATABASES["default"]
    values = {
        "PGDATABASE": database.get("NAME"),
        "PGUSER": database.get("USER"),
        "PGPASSWORD": database.get("PASSWORD"),
        "PGHOST": database.get("HOST"),
        "PGPORT": database.get("PORT"),
        "PGSSLMODE": (database.get("OPTIONS") or {}).get("sslmode"),
    }
    return {**os.environ, **{key: str(value) for key, value in values.items() if value}}


def _postgres_backup(folder: Path) -> DatabasePart:
    pg_dump = shutil.which("pg_dump")
    with transaction.atomic(), connection.cursor() as cursor:
        # One snapshot for the counts and the dump alike: rows written meanwhile are in neither.
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        existing = set(connection.introspection.table_names(cursor))
        rows, migrations = _counts(cursor, existing), _latest_migrations(cursor)
        if pg_dump:
            cursor.execute("SELECT pg_export_snapshot()")
            snapshot = cursor.fetchone()[0]
            target = folder / PG_DUMP_FILE
            _run(
                [pg_dump, "--format=custom", f"--snapshot={snapshot}", "--no-owner", "--no-privileges",
                 f"--file={target}"],
                what="pg_dump",
            )  # fmt: skip
            method, name = "pg_dump", PG_DUMP_FILE
        else:
            call_command(
                "dumpdata", "--natural-foreign", "--natural-primary", "--exclude=contenttypes",
                "--exclude=auth.permission", "--format=xml", f"--output={folder / DUMPDATA_FILE}", verbosity=0,
            )  # fmt: skip
            method, name = "dumpdata", DUMPDATA_FILE
    return DatabasePart(
        vendor="postgresql", method=method, file=f"{folder.name}/{name}", rows=rows, migrations=migrations
    )


def _run(command: list[str], *, what: str) -> None:
    result = subprocess.run(command, env=_postgres_environment(), capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise DatabaseBackupError(f"{what} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")


# What makes a database a site's rather than a fresh one: a site that holds anything has people, articles, questions
# or index jobs. Asked of these tables, not of every table, because migrations may seed others (content types,
# permissions, role groups, counters).
SITE_MODELS = ("auth.User", "corpus.Article", "qa.Question", "corpus.IndexJob")


def database_contents() -> dict[str, int]:
    """The site tables of the configured database that hold rows; empty for a fresh database."""
    if connection.vendor == "sqlite" and not _sqlite_path().is_file():
        return {}
    tables = {apps.get_model(label)._meta.db_table for label in SITE_MODELS}
    with connection.cursor() as cursor:
        existing = tables & set(connection.introspection.table_names(cursor))
        return {table: count for table, count in _counts(cursor, existing).items() if count}


def database_rows() -> dict[str, int]:
    with connection.cursor() as cursor:
        return _counts(cursor, set(connection.introspection.table_names(cursor)))


def unknown_migrations(part: DatabasePart) -> list[str]:
    """The backup's latest migrations this checkout does not have: it was made by a newer version."""
    known = set(MigrationLoader(None, ignore_no_migrations=True).disk_migrations)
    return sorted(f"{app}.{name}" for app, name in part.migrations.items() if (app, name) not in known)


def database_restorable(part: DatabasePart) -> None:
    """Refuse, before anything changes, a database this checkout cannot restore the backup's into."""
    if part.vendor != connection.vendor:
        raise DatabaseBackupError(
            f"the backup holds a {part.vendor} database but this checkout is configured for {connection.vendor} "
            "(DATABASE_URL): restore it into the same kind of database"
        )
    if part.method == "pg_dump" and not shutil.which("pg_restore"):
        raise DatabaseBackupError("this backup was made with pg_dump: pg_restore must be on the PATH to restore it")
    if part.method not in ("sqlite-backup", "pg_dump", "dumpdata"):
        raise DatabaseBackupError(f"unknown database backup method {part.method!r}")


def database_restore(root: Path, part: DatabasePart, *, force: bool) -> None:
    """Replace the configured database with the backup's (the target was found empty, or `force` was given)."""
    database_restorable(part)
    source = root / part.file
    connections.close_all()  # nothing of this process may hold the old database open while it is replaced
    if part.method == "sqlite-backup":
        _sqlite_restore(source)
    elif part.method == "pg_dump":
        pg_restore = shutil.which("pg_restore")
        assert pg_restore is not None  # database_restorable
        # --clean --if-exists drops what the dump recreates (nothing, in an empty database; the tables `migrate`
        # made in one that was migrated); one transaction: a failure leaves the database as it was.
        _run(
            [pg_restore, "--no-owner", "--no-privileges", "--single-transaction", "--exit-on-error", "--clean",
             "--if-exists", f"--dbname={settings.DATABASES['default']['NAME']}", str(source)],
            what="pg_restore",
        )  # fmt: skip
    else:
        call_command("migrate", interactive=False, verbosity=0)
        if force:
            call_command("flush", interactive=False, verbosity=0)
        call_command("loaddata", str(source), verbosity=0)


def _sqlite_restore(source: Path) -> None:
    target = _sqlite_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.restoring")
    shutil.copyfile(source, partial)
    # The old file's write-ahead log must not be replayed onto the restored one.
    for suffix in ("-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    os.replace(partial, target)


def migrations_pending() -> bool:
    executor = MigrationExecutor(connection)
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))
