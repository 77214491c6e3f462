"""`manage.py model_cards`: the parameter sections of the verifier model cards, rendered from the JSON beside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from verifier.model_card import card_folders, card_parameters, write_card


class Command(BaseCommand):
    help = (
        "Print the generated parameter section of every checkpoint's model card under verifier/models/, or with "
        "--write rewrite it between the card's markers (a card without them gets the section appended)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--models",
            type=Path,
            default=Path(settings.BASE_DIR) / "verifier" / "models",
            help="the folder of checkpoints",
        )
        parser.add_argument("--write", action="store_true", help="rewrite the cards instead of printing the sections")

    def handle(self, *args: Any, models: Path, write: bool, **options: Any) -> None:
        for folder in card_folders(models):
            if not write:
                self.stdout.write(f"## {folder.name}\n{card_parameters(folder)}\n")
            elif write_card(folder):
                self.stdout.write(f"wrote {folder / 'README.md'}")
            else:
                self.stdout.write(f"{folder / 'README.md'} is current")
