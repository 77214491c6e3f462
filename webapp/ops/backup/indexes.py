"""The search legs of a backup: the active generation, and each leg's files where they are files (the tantivy and
qdrant-edge folders, qdrant-client's local-mode folder), or what to rebuild it from where the leg lives in a server
(OpenSearch, a Qdrant server): the articles are in the database, and a restore writes them into the leg again.

Opening the vector index takes the lock only one process may hold (the embedded engines): while a backup holds it no
worker or ingest can write to either leg, so the files copied and the database saved describe one moment.
"""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from indexer.chunking import Chunker
from indexer.ingest import IngestReport, embed_records
from webapp.corpus import engines
from webapp.corpus.models import Article
from webapp.corpus.services.articles import article_record
from webapp.corpus.services.generations import (
    INITIAL_GENERATION,
    activate_generation,
    generation_names,
    pointer_path,
)
from webapp.ops.backup.manifest import IndexesPart, LegPart

LEXICAL, VECTORS = "lexical", "vectors"
COPY, REBUILD = "copy", "rebuild"


class IndexBackupError(Exception):
    """A leg could not be saved or restored; the message says why."""


@dataclass(frozen=True)
class Leg:
    """Where one leg of one generation lives with this checkout's settings."""

    role: str  # LEXICAL or VECTORS
    backend: str
    name: str  # folder, index or collection
    folder: Path | None  # its files, when it has files of its own
    server: bool  # an OpenSearch index or a Qdrant server collection, opened just to count or drop


def configured_leg(role: str, generation: str) -> Leg:
    config = settings.VERIMED.engines
    index_dir = Path(settings.VERIMED.paths.index_dir)
    if role == LEXICAL:
        if config.lexical_backend == "tantivy":
            name = f"tantivy-{generation}"
            return Leg(role, "tantivy", name, index_dir / name, server=False)
        return Leg(role, config.lexical_backend, f"{config.opensearch_index}-{generation}", None, server=True)
    if config.vector_backend == "qdrant_edge":
        name = f"qdrant_edge-{generation}"
        return Leg(role, "qdrant_edge", name, index_dir / name, server=False)
    collection = f"{config.qdrant_collection}-{generation}"
    location = config.qdrant_url
    if location.startswith(("http://", "https://")):
        return Leg(role, config.vector_backend, collection, None, server=True)
    # Local mode keeps every collection in one folder; ":memory:" keeps nothing a backup could copy.
    return Leg(role, config.vector_backend, collection, None if location == ":memory:" else Path(location), False)


def _open(role: str, generation: str) -> int:
    index = engines.lexical_index_for(generation) if role == LEXICAL else engines.vector_index_for(generation)
    return index.count()


@contextmanager
def legs_held(generation: str) -> Iterator[dict[str, int]]:
    """Both legs of `generation` open in this process, with their counts, until the block ends.

    The embedded vector engines admit one process: a running worker makes this fail at once, with the engine's own
    message asking whether a worker runs, rather than copying files it is writing.
    """
    try:
        yield {VECTORS: _open(VECTORS, generation), LEXICAL: _open(LEXICAL, generation)}
    finally:
        engines.release_engines()


_BLOCK = 64 * 1024


def _sparse_copy(source: str, target: str) -> str:
    """Copy a file leaving its runs of zeros as holes: qdrant-edge preallocates its files (a few hundred kB of data
    made 167 MB of mostly zeros on disk for 74 points), and a plain copy would write every zero."""
    with open(source, "rb") as reader, open(target, "wb") as writer:
        while block := reader.read(_BLOCK):
            if block == bytes(len(block)):
                writer.seek(len(block), 1)
            else:
                writer.write(block)
        writer.truncate()
    shutil.copystat(source, target)
    return target


def _ignore_locks(folder: str, names: list[str]) -> set[str]:
    # Lock files belong to the process that made them (tantivy's, qdrant-client's), never to a copy.
    return {name for name in names if name.endswith(".lock")}


def leg_backup(role: str, generation: str, count: int, folder: Path) -> LegPart:
    """Copy the leg's files into `folder`/role, or record that a restore rebuilds it."""
    leg = configured_leg(role, generation)
    if leg.folder is None:
        return LegPart(backend=leg.backend, name=leg.name, method=REBUILD, count=count)
    target = folder / role
    if leg.folder.exists():
        shutil.copytree(leg.folder, target, ignore=_ignore_locks, copy_function=_sparse_copy)
    else:
        target.mkdir(parents=True)
    return LegPart(backend=leg.backend, name=leg.name, method=COPY, count=count, path=f"{folder.name}/{role}")


def restore_method(part: LegPart, leg: Leg, *, rebuild: bool) -> str:
    """Copied when the backup holds this leg's files for the engine configured here; rebuilt otherwise."""
    return COPY if part.method == COPY and part.backend == leg.backend and leg.folder and not rebuild else REBUILD


def target_contents(part: IndexesPart, methods: dict[str, str]) -> list[str]:
    """What the configured indexes already hold that a restore would replace; empty for a fresh checkout."""
    found = []
    if pointer_path().exists():
        found.append(f"the generation pointer {pointer_path()}")
    index_dir = Path(settings.VERIMED.paths.index_dir)
    found += [f"generation {name} in {index_dir}" for name in generation_names()]
    for role in (LEXICAL, VECTORS):
        leg = configured_leg(role, part.generation)
        if (
            leg.folder
            and not leg.folder.is_relative_to(index_dir)
            and leg.folder.exists()
            and any(leg.folder.iterdir())
        ):
            found.append(f"the {role} folder {leg.folder}")
        elif leg.server and methods[role] == REBUILD and (count := _server_count(role, part.generation)):
            found.append(f"{count} entries in the {role} index {leg.name}")
    return found


def _server_count(role: str, generation: str) -> int:
    """A server index's entries; opening it makes it, empty, when it did not exist (the rebuild writes it anyway)."""
    try:
        return _open(role, generation)
    finally:
        engines.release_engines()


def indexes_clear(part: IndexesPart) -> list[str]:
    """With --force: remove what the target's indexes hold, so the restored state is the backup's and no more."""
    removed = []
    index_dir = Path(settings.VERIMED.paths.index_dir)
    engines.release_engines()
    for name in generation_names():
        for folder in index_dir.iterdir():
            if folder.is_dir() and folder.name.rsplit("-", 1)[-1] == name:
                shutil.rmtree(folder)
                removed.append(str(folder))
    pointer_path().unlink(missing_ok=True)
    for role in (LEXICAL, VECTORS):
        leg = configured_leg(role, part.generation)
        if leg.folder and leg.folder.is_relative_to(index_dir):
            continue  # a generation's folder, removed above
        if (what := leg_drop(leg)) is not None:
            removed.append(what)
    return removed


def leg_drop(leg: Leg, *, owner: str = "") -> str | None:
    """Remove a leg's folder, or drop its server index; what was removed (`owner` heads a server index's name), or
    None when there was nothing."""
    if leg.folder is not None and leg.folder.exists():
        shutil.rmtree(leg.folder)
        return str(leg.folder)
    if leg.server:
        _server_drop(leg)
        return f"{owner}{leg.role} index {leg.name}"
    return None


def _server_drop(leg: Leg) -> None:
    config = settings.VERIMED.engines
    if leg.role == LEXICAL:
        from opensearchpy import OpenSearch

        client = OpenSearch(hosts=config.opensearch_url)
        try:
            client.indices.delete(index=leg.name, ignore_unavailable=True)
        finally:
            client.close()
        return
    from qdrant_client import QdrantClient

    qdrant = QdrantClient(url=config.qdrant_url, api_key=config.qdrant_api_key, check_compatibility=False)
    try:
        qdrant.delete_collection(leg.name)
    finally:
        qdrant.close()


@contextmanager
def _vector_lock(leg: Leg) -> Iterator[None]:
    """Hold the embedded shard's lock while its files are put in place, so no worker opens it half-copied."""
    if leg.backend != "qdrant_edge" or leg.folder is None:
        yield
        return
    with (leg.folder.parent / f".{leg.folder.name}.lock").open("wb") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise IndexBackupError(f"the vector index {leg.folder} is held by another process: stop the stack") from exc
        yield


def leg_restore_copy(root: Path, role: str, part: LegPart, generation: str) -> None:
    leg = configured_leg(role, generation)
    assert leg.folder is not None  # restore_method copies only legs with a folder
    leg.folder.parent.mkdir(parents=True, exist_ok=True)
    with _vector_lock(leg):
        partial = leg.folder.with_name(f".{leg.folder.name}.restoring")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(root / part.path, partial, copy_function=_sparse_copy)
        if leg.folder.exists():
            shutil.rmtree(leg.folder)
        partial.rename(leg.folder)


def pointer_restore(part: IndexesPart) -> None:
    if part.pointer or part.generation != INITIAL_GENERATION:
        activate_generation(part.generation)


def _articles(*, embedded_only: bool, batch_size: int) -> Iterator[list[Article]]:
    # Keyset pagination by primary key: constant memory at any corpus size.
    queryset = Article.objects.filter(embedded=True) if embedded_only else Article.objects.all()
    last = 0
    while batch := list(queryset.filter(pk__gt=last).order_by("pk")[:batch_size]):
        yield batch
        last = batch[-1].pk


def leg_rebuild(role: str, generation: str, *, batch_size: int = 256) -> int:
    """Write the stored articles into the leg of `generation`, as ingestion had: every article into the lexical leg,
    the embedded ones into the vector leg (those still pending stay so, and the background embedder takes them)."""
    try:
        if role == LEXICAL:
            lexical = engines.lexical_index_for(generation)
            for batch in _articles(embedded_only=False, batch_size=batch_size):
                lexical.add([article_record(article) for article in batch])
            return lexical.count()
        vectors, embedder = engines.vector_index_for(generation), engines.embedder()
        chunker = Chunker(embedder.token_lengths, max_tokens=embedder.max_tokens)
        report = IngestReport()
        for batch in _articles(embedded_only=True, batch_size=batch_size):
            embed_records(
                [article_record(article) for article in batch],
                chunker=chunker,
                embedder=embedder,
                vectors=vectors,
                report=report,
            )
        vectors.optimize()
        return vectors.count()
    finally:
        engines.release_engines()


def leg_count(role: str, generation: str) -> int:
    try:
        return _open(role, generation)
    finally:
        engines.release_engines()
