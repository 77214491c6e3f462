"""`manage.py train_verifier` and `fit_verifier_rule` refuse bad options before any model loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

# Loads a real model (see MARKER_BY_FIXTURE in tests/conftest.py for the automatic cases).
pytestmark = pytest.mark.model


def test_an_unknown_extra_training_source_is_refused_before_training() -> None:
    with pytest.raises(
        CommandError, match=r"unknown extra training source 'pubmed' \(bioasq, pubmedqa, product-shaped or an"
    ):
        call_command("train_verifier", "--extra", "bioasq,pubmed")


def test_fitting_the_rule_needs_a_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no checkpoint in"):
        call_command("fit_verifier_rule", "--model", str(tmp_path))
