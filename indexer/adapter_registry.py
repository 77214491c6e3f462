"""Adapters chosen by a setting's value: import strings keyed by that value, imported only when chosen.

Each library keeps its registries in its own `registry.py`. An adapter's heavy imports (torch, a server's client)
stay inside the adapter's module, so a process loads only what its settings choose: the web process, which never
classifies a claim, never imports torch. The generic part lives here because indexer is the one library the other
two may import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, cast

Options = TypeVar("Options")
Adapter = TypeVar("Adapter")


class UnknownAdapterError(ValueError):
    """A setting names no registered adapter; the message lists the ones there are."""


class AdapterRegistry(Generic[Options, Adapter]):
    def __init__(self, role: str, factories: Mapping[str, str], *, key: Callable[[Options], str]) -> None:
        """`factories` maps each setting value to "module:callable", a callable that builds the adapter from Options;
        `key` reads the setting value from the Options."""
        self.role = role
        self.factories = dict(factories)
        self.key = key

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.factories)

    def factory(self, name: str) -> Callable[[Options], Adapter]:
        if name not in self.factories:
            raise UnknownAdapterError(f"unknown {self.role} {name!r} (available: {', '.join(self.names)})")
        module_name, _, attribute = self.factories[name].partition(":")
        target: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
        return cast("Callable[[Options], Adapter]", target)

    def build(self, options: Options) -> Adapter:
        """The adapter the options name, built from them."""
        return self.factory(self.key(options))(options)
