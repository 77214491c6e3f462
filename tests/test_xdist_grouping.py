"""Which tests `make test` keeps together on one pytest-xdist worker (`xdist_group_of` in tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.conftest import xdist_group_of


@pytest.fixture(scope="module")
def made_once_per_module() -> object:
    return object()


def test_a_test_that_shares_a_module_fixture_is_grouped_with_its_module(
    request: pytest.FixtureRequest, made_once_per_module: object
) -> None:
    group = "module-tests/test_xdist_grouping.py"
    assert xdist_group_of(request.node) == group
    assert [mark.args for mark in request.node.iter_markers("xdist_group")] == [(group,)]


def test_a_test_without_one_goes_wherever_a_worker_is_free(request: pytest.FixtureRequest) -> None:
    assert xdist_group_of(request.node) is None
