"""Model cards whose parameter sections are rendered from the JSON beside the checkpoint (verifier/model_card.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support import REPO
from verifier.model_card import (
    PARAMETERS_END,
    PARAMETERS_START,
    card_folders,
    card_parameters,
    with_card_parameters,
    write_card,
)

MODELS = REPO / "verifier" / "models"
CHECKPOINTS = card_folders(MODELS)


def test_the_committed_checkpoints_have_cards_to_generate() -> None:
    assert {"verimed-minilm-verifier", "verimed-mpnet-verifier"} <= {folder.name for folder in CHECKPOINTS}


@pytest.mark.parametrize("folder", CHECKPOINTS, ids=lambda folder: folder.name)
def test_each_model_card_shows_the_parameters_its_json_renders(folder: Path) -> None:
    card = (folder / "README.md").read_text(encoding="utf-8")

    assert with_card_parameters(card, card_parameters(folder)) == card, (
        f"{folder.name}/README.md differs from the JSON beside it: run `python manage.py model_cards --write`"
    )


def _copy_of(name: str, tmp_path: Path) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for source in (MODELS / name).glob("*.json"):
        shutil.copyfile(source, folder / source.name)
    shutil.copyfile(MODELS / name / "README.md", folder / "README.md")
    return folder


def test_a_card_goes_stale_when_its_bottom_line_rule_changes(tmp_path: Path) -> None:
    folder = _copy_of("verimed-minilm-verifier", tmp_path)
    card = (folder / "README.md").read_text(encoding="utf-8")
    rule = json.loads((folder / "bottom_line.json").read_text())
    rule["relevance_power"] = 7.5
    (folder / "bottom_line.json").write_text(json.dumps(rule))

    assert with_card_parameters(card, card_parameters(folder)) != card
    assert write_card(folder)
    assert "| `relevance_power` | 7.5 |" in (folder / "README.md").read_text(encoding="utf-8")
    assert not write_card(folder)


def test_the_section_shows_every_stored_field_even_one_it_has_no_words_for(tmp_path: Path) -> None:
    folder = tmp_path / "new-checkpoint"
    folder.mkdir()
    (folder / "decision.json").write_text(json.dumps({"temperature": 1.25, "new_knob": [1, 2]}))

    section = card_parameters(folder)

    assert "| `temperature` | 1.25 |" in section
    assert "| `new_knob` | 1, 2 |" in section


def test_a_new_checkpoint_folder_with_an_overlay_gets_a_card(tmp_path: Path) -> None:
    folder = tmp_path / "verimed-new-verifier"
    folder.mkdir()
    (folder / "overlay.json").write_text(
        json.dumps({"base": "../base", "base_sha256": "ab" * 32, "changed_tensors": 70, "of_tensors": 199})
    )
    (folder / "training.json").write_text(
        json.dumps({"config": {"backbone": "/home/someone/models/base", "learning_rate": 2e-5}, "train_examples": 9})
    )
    (tmp_path / "no-json-here").mkdir()

    assert card_folders(tmp_path) == [folder]
    assert write_card(folder)
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert card.startswith("# Model card: verimed-new-verifier\n")
    assert PARAMETERS_START in card
    assert PARAMETERS_END in card
    assert "| `changed_tensors` | 70 |" in card
    assert "| `learning_rate` | 2e-05 |" in card
    # A path on the machine that trained it is not the reader's: only its last part is shown.
    assert "/home/someone" not in card
    assert ".../base" in card


def test_writing_replaces_only_what_lies_between_the_markers() -> None:
    card = f"# Card\nbefore\n{PARAMETERS_START}\nstale\n{PARAMETERS_END}\nafter\n"

    assert (
        with_card_parameters(card, "| new |")
        == f"# Card\nbefore\n{PARAMETERS_START}\n| new |\n{PARAMETERS_END}\nafter\n"
    )
