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


def test_overlay_verifier_writes_the_changed_tensors_and_refuses_a_folder_without_weights(tmp_path: Path) -> None:
    from io import StringIO

    from tests.verifier.test_checkpoint_overlay import tiny_checkpoint, warm_start_of
    from verifier.checkpoint_overlay import OVERLAY_META, OVERLAY_WEIGHTS

    base, trained, overlay = tmp_path / "base", tmp_path / "trained", tmp_path / "overlay"
    tiny_checkpoint(base, seed=1)
    warm_start_of(base, trained)
    out = StringIO()
    call_command("overlay_verifier", trained=trained, base=base, output=overlay, stdout=out)
    assert (overlay / OVERLAY_WEIGHTS).is_file()
    assert (overlay / OVERLAY_META).is_file()
    assert "tensors changed" in out.getvalue()
    assert "../base" in out.getvalue()
    with pytest.raises(CommandError, match=r"has no model\.safetensors"):
        call_command("overlay_verifier", trained=overlay, base=base, output=tmp_path / "again")
