"""The rule every index adapter enforces about owners: a library index holds only owned documents and is searched
only for one owner; any other index holds no owned document. Kept apart from the indexes that hold PubMed, a
researcher's passages cannot reach another person's search by a missing filter: the mistake is refused, loudly."""

from __future__ import annotations

from collections.abc import Iterable

from indexer.base import SearchFilters


class OwnershipError(ValueError):
    """An owned document written to a public index, an unowned one to a library index, or a library index searched
    without an owner: a programming error, never a user's."""


def check_owners(owners: Iterable[str], *, owned: bool) -> None:
    for owner in owners:
        if owned and not owner:
            raise OwnershipError("a library index holds only documents with an owner")
        if not owned and owner:
            raise OwnershipError("an owned document belongs in a library index (owned=True), not a public one")


def check_search(filters: SearchFilters, *, owned: bool) -> bool:
    """Whether the search can find anything: a public index holds no owned document, so an owner's search finds
    nothing there. A library index searched without an owner is refused."""
    if owned and not filters.owner:
        raise OwnershipError("a library index is searched for one owner at a time: SearchFilters.owner is required")
    return owned or not filters.owner
