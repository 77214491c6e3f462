"""The library's own pair of indexes in a restore. A backup holds the library's documents and passages (database rows)
but not these indexes: a restore writes them again from the restored documents, as `manage.py library_reindex` does.
Before that, the target's library indexes must be empty (or cleared with --force): an entry left there from the
target's earlier site would stay searchable by whoever has that owner id in the restored one.
"""

from __future__ import annotations

from pathlib import Path

from indexer.errors import IndexerError
from webapp.library.engines import (
    library_lexical_index,
    library_lexical_options,
    library_vector_index,
    library_vector_options,
    release_library_engines,
)
from webapp.library.indexing import Reindexed, library_reindex
from webapp.ops.backup.indexes import LEXICAL, VECTORS, IndexBackupError, Leg, leg_drop


def library_leg(role: str) -> Leg:
    """Where the library's `role` index lives with this checkout's settings."""
    if role == LEXICAL:
        lexical = library_lexical_options()
        if lexical.folder is not None and lexical.backend == "tantivy":
            return Leg(role, lexical.backend, lexical.folder.name, lexical.folder, server=False)
        return Leg(role, lexical.backend, lexical.index, None, server=True)
    vectors = library_vector_options()
    if vectors.folder is not None and vectors.backend == "qdrant_edge":
        return Leg(role, vectors.backend, vectors.folder.name, vectors.folder, server=False)
    if vectors.url.startswith(("http://", "https://")):
        return Leg(role, vectors.backend, vectors.collection, None, server=True)
    # qdrant-client's local mode: a folder of the library's own (webapp/library/engines.py); ":memory:" keeps nothing.
    return Leg(
        role, vectors.backend, vectors.collection, None if vectors.url == ":memory:" else Path(vectors.url), False
    )


def library_contents() -> list[str]:
    """What the target's library indexes hold, for the restore's check that the target is empty."""
    found = []
    for role in (LEXICAL, VECTORS):
        leg = library_leg(role)
        if leg.folder is not None and leg.folder.exists() and any(leg.folder.iterdir()):
            found.append(f"the library's {role} index {leg.folder}")
        elif leg.server and (count := _server_count(role)):
            found.append(f"{count} entries in the library's {role} index {leg.name}")
    return found


def _server_count(role: str) -> int:
    """Opening a server's index makes it, empty, when it did not exist (the rebuild writes it anyway)."""
    try:
        return (library_lexical_index() if role == LEXICAL else library_vector_index()).count()
    finally:
        release_library_engines()


def library_clear() -> list[str]:
    """With --force: drop the target's library indexes, so that only the restored documents are in them afterwards."""
    release_library_engines()
    dropped = (leg_drop(library_leg(role), owner="the library's ") for role in (LEXICAL, VECTORS))
    return [what for what in dropped if what is not None]


def library_rebuild() -> Reindexed:
    """Every restored document's passages into the library's (empty) indexes."""
    try:
        return library_reindex()
    except IndexerError as exc:
        raise IndexBackupError(
            f"{exc}. The database and the search legs are restored, the library's indexes are not: stop the stack and "
            "run `manage.py library_reindex`"
        ) from exc
