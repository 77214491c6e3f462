"""Lets `--dist loadgroup` keep each `xdist_group` on one worker under pytest 9.

pytest-xdist 3.8 tells its scheduler a test's group by appending `@group` to the test's node id, through the
attribute pytest 8 kept the id in (`_nodeid`). pytest 9 keeps it as a structured id (`_id`), so the suffix was lost
and every group was spread over the workers: both workers started both e2e stacks and an LLM server each. This hook
runs after pytest-xdist's own and sets the suffix where pytest 9 reads it; it does nothing where the suffix took.
"""

from __future__ import annotations

import pytest
from _pytest.nodeid import NodeId


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on a worker of a `--dist loadgroup` run
        return
    for item in items:
        groups = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                         for mark in item.iter_markers("xdist_group")})  # fmt: skip
        if groups and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")  # type: ignore[attr-defined]
