"""`backup_create` and `backup_restore`: the steps of each, in order, with the time each took.

A backup is written into a hidden folder beside its target and renamed into place only once complete (its manifest
is written last), so a backup that is killed leaves nothing that looks like a backup. A restore checks the whole
backup, and that the target is empty, before it changes anything; it ends by writing the library's indexes again from
the restored documents (a backup does not hold them).
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from django.core.management import call_command
from django.db import DatabaseError

from webapp.corpus.services.articles import article_counts_recount
from webapp.corpus.services.generations import active_generation, pointer_path
from webapp.library.indexing import Reindexed
from webapp.ops.backup import database, indexes, library
from webapp.ops.backup.indexes import COPY, LEXICAL, REBUILD, VECTORS, configured_leg
from webapp.ops.backup.manifest import (
    FORMAT,
    BackupInvalidError,
    IndexesPart,
    Manifest,
    file_entries,
    manifest_verified,
    manifest_write,
)
from webapp.ops.backup.model_versions import app_version, embedder_differences, model_versions

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")


class BackupError(Exception):
    """A backup or restore that cannot go on; the message says why and what to do."""


class TargetNotEmptyError(BackupError):
    """The restore's target already holds data."""


@dataclass
class Timings:
    steps: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.steps[name] = self.steps.get(name, 0.0) + time.perf_counter() - began

    def line(self) -> str:
        return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.steps.items())


@dataclass(frozen=True)
class BackupReport:
    path: Path
    manifest: Manifest
    size: int
    timings: Timings


@dataclass(frozen=True)
class RestoreReport:
    manifest: Manifest
    methods: dict[str, str]  # leg -> COPY or REBUILD
    counts: dict[str, int]  # leg -> entries after the restore
    library: Reindexed  # what the library's indexes were rebuilt with
    notes: list[str]
    timings: Timings


def _profile(vendor: str, lexical: str, vectors: str) -> str:
    if (vendor, lexical, vectors) == ("sqlite", "tantivy", "qdrant_edge"):
        return "embedded"
    if (vendor, lexical, vectors) == ("postgresql", "opensearch", "qdrant"):
        return "production"
    return "custom"


def _archive(path: Path) -> bool:
    return path.name.endswith(ARCHIVE_SUFFIXES)


def _without_suffix(name: str) -> str:
    for suffix in ARCHIVE_SUFFIXES:
        name = name.removesuffix(suffix)
    return name or "backup"


def backup_create(*, target: Path) -> BackupReport:
    """Save the database, the index generation, both legs (or what rebuilds them) and the model versions."""
    target = target.absolute()
    if target.exists():
        raise BackupError(f"{target} exists: a backup never overwrites another; give a new name")
    if not target.parent.is_dir():
        raise BackupError(f"{target.parent} is not a folder")
    began, timings = time.perf_counter(), Timings()
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    try:
        generation = active_generation()
        with ExitStack() as held:
            with timings.step("open the indexes"):
                # Held while the database is saved and their files copied: nothing ingests meanwhile.
                counts = held.enter_context(indexes.legs_held(generation))
            with timings.step("database"):
                database_part = database.database_backup(staging / "database")
            with timings.step("indexes"):
                legs = {
                    role: indexes.leg_backup(role, generation, counts[role], staging / "indexes") for role in counts
                }
        with timings.step("model fingerprints"):
            models = model_versions()
        with timings.step("checksums"):
            files = file_entries(staging)
        manifest = Manifest(
            format=FORMAT,
            created_at=datetime.now(tz=UTC).isoformat(timespec="seconds"),
            seconds=round(time.perf_counter() - began, 3),
            profile=_profile(database_part.vendor, legs[LEXICAL].backend, legs[VECTORS].backend),
            app=app_version(),
            database=database_part,
            indexes=IndexesPart(
                generation=generation, pointer=pointer_path().exists(), lexical=legs[LEXICAL], vectors=legs[VECTORS]
            ),
            models=models,
            files=files,
        )
        manifest_write(staging, manifest)
        with timings.step("archive" if _archive(target) else "rename"):
            _put_in_place(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    # Blocks on disk: the copied vector files are sparse.
    files_written = [target] if target.is_file() else [path for path in target.rglob("*") if path.is_file()]
    size = sum(path.stat().st_blocks * 512 for path in files_written)
    return BackupReport(path=target, manifest=manifest, size=size, timings=timings)


def _put_in_place(staging: Path, target: Path) -> None:
    if _archive(target):
        partial = target.with_name(f".{target.name}.partial")
        try:
            plain = target.name.endswith(".tar")
            with tarfile.open(partial, "w") if plain else tarfile.open(partial, "w:gz") as archive:
                archive.add(staging, arcname=_without_suffix(target.name))
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        return
    if target.exists():
        raise BackupError(f"{target} appeared while the backup was written: it was left alone")
    staging.chmod(0o755)  # mkdtemp's 0700 would keep the backup from an operator of another account
    staging.rename(target)


@contextmanager
def _opened(source: Path) -> Iterator[Path]:
    """The backup's folder: `source` itself, or an archive extracted into a temporary folder."""
    if source.is_file():
        with tempfile.TemporaryDirectory(prefix="verimed-restore-") as folder:
            try:
                with tarfile.open(source) as archive:
                    archive.extractall(folder, filter="data")
            except (tarfile.TarError, EOFError, OSError) as exc:
                raise BackupInvalidError(
                    f"{source} is not a readable backup archive, truncated or damaged ({exc})"
                ) from exc
            entries = list(Path(folder).iterdir())
            if len(entries) != 1 or not entries[0].is_dir():
                raise BackupInvalidError(f"{source} holds no single backup folder")
            yield entries[0]
        return
    yield source


def backup_restore(
    *, source: Path, force: bool = False, rebuild_indexes: bool = False, say: Callable[[str], None] = print
) -> RestoreReport:
    """Restore the backup at `source` (a folder or an archive) into this checkout's database and indexes."""
    timings, notes = Timings(), []
    with ExitStack() as opened:
        if source.is_file():
            with timings.step("unpack"):
                root = opened.enter_context(_opened(source.absolute()))
        else:
            root = opened.enter_context(_opened(source.absolute()))
        with timings.step("check the backup"):
            manifest = manifest_verified(root)
        database.database_restorable(manifest.database)
        if unknown := database.unknown_migrations(manifest.database):
            raise BackupError(
                f"the backup was made by a newer version (commit {manifest.app.get('commit')}): its migrations "
                f"{', '.join(unknown)} are not in this checkout"
            )
        part = manifest.indexes
        methods = {
            role: indexes.restore_method(saved, configured_leg(role, part.generation), rebuild=rebuild_indexes)
            for role, saved in ((LEXICAL, part.lexical), (VECTORS, part.vectors))
        }
        if methods[VECTORS] == COPY and (differences := embedder_differences(manifest.models["embedder"])):
            raise BackupError(
                "the backup's vectors were made by another embedder than this checkout's ("
                + "; ".join(differences)
                + "): configure the same one (VERIMED_EMBEDDING_MODEL, VERIMED_EMBEDDING_BACKEND) or restore with "
                "--rebuild-indexes to embed the articles again with this one"
            )
        with timings.step("check the target"):
            _check_target(part, methods, force=force)
        say(f"restoring the backup of {manifest.created_at} ({manifest.profile} profile)")
        if force:
            with timings.step("clear the target"):
                for removed in [*indexes.indexes_clear(part), *library.library_clear()]:
                    notes.append(f"removed {removed}")
        with timings.step("database"):
            database.database_restore(root, manifest.database, force=force)
            # Compared before migrating: a newer checkout's migrations add tables, content types and permissions.
            wrong = _wrong_rows(manifest)
        if database.migrations_pending():
            with timings.step("migrate"):
                call_command("migrate", interactive=False, verbosity=0)
            notes.append("applied this checkout's migrations newer than the backup")
        # The semantic-coverage figures are kept by triggers on the article table: loaddata (the dumpdata fallback)
        # inserts articles with the triggers on, over a counts row it also loads, so the figures are counted afresh.
        article_counts_recount()
        for role, saved in ((LEXICAL, part.lexical), (VECTORS, part.vectors)):
            if methods[role] == COPY:
                with timings.step(f"{role} copy"):
                    indexes.leg_restore_copy(root, role, saved, part.generation)
        indexes.pointer_restore(part)
        counts: dict[str, int] = {}
        for role in (LEXICAL, VECTORS):
            if methods[role] == REBUILD:
                say(f"rebuilding the {role} leg from the database ({configured_leg(role, part.generation).name})")
                with timings.step(f"{role} rebuild"):
                    counts[role] = indexes.leg_rebuild(role, part.generation)
            else:
                with timings.step("count"):
                    counts[role] = indexes.leg_count(role, part.generation)
        say("rebuilding the library's indexes from its documents in the database")
        with timings.step("library rebuild"):
            rebuilt = library.library_rebuild()
    _check_counts(manifest, methods, counts, wrong, notes)
    return RestoreReport(
        manifest=manifest, methods=methods, counts=counts, library=rebuilt, notes=notes, timings=timings
    )


def _check_target(part: IndexesPart, methods: dict[str, str], *, force: bool) -> None:
    try:
        contents = database.database_contents()
    except DatabaseError as exc:
        raise BackupError(f"cannot read the target database ({exc}): create it, empty, and check DATABASE_URL") from exc
    found = [f"{table} holds {count:,} row{'' if count == 1 else 's'}" for table, count in contents.items()]
    found += indexes.target_contents(part, methods) + library.library_contents()
    if found and not force:
        raise TargetNotEmptyError(
            "the target is not empty: "
            + "; ".join(found[:8])
            + ("; ..." if len(found) > 8 else "")
            + ". Restore into an empty database and index folder, or pass --force to replace what is there"
        )


def _wrong_rows(manifest: Manifest) -> list[str]:
    """Tables whose rows differ from the backup's counts (dumpdata leaves the rows `migrate` makes to it)."""
    rows = database.database_rows()
    skipped = database.MIGRATION_TABLES if manifest.database.method == "dumpdata" else frozenset()
    return [
        f"{table}: {rows.get(table)} rows, {expected} in the backup"
        for table, expected in manifest.database.rows.items()
        if table not in skipped and rows.get(table) != expected
    ]


def _check_counts(
    manifest: Manifest, methods: dict[str, str], counts: dict[str, int], wrong: list[str], notes: list[str]
) -> None:
    for role, saved in ((LEXICAL, manifest.indexes.lexical), (VECTORS, manifest.indexes.vectors)):
        if counts[role] == saved.count:
            continue
        message = f"the {role} leg holds {counts[role]:,}, the backup's held {saved.count:,}"
        if methods[role] == COPY:
            wrong.append(message)
        else:
            # A rebuild writes what the database holds; the backed-up leg may have lagged behind it.
            notes.append(f"{message} (rebuilt from the database)")
    if wrong:
        raise BackupError("the restore finished but does not match the backup: " + "; ".join(wrong))
