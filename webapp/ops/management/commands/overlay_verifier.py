"""Store a top-layers warm start as an overlay on the committed checkpoint it started from.

    manage.py overlay_verifier --trained var/models/mpnet-top6 --base verifier/models/verimed-mpnet-verifier \
        --output verifier/models/verimed-mpnet-product-verifier

The trained folder is what `train_verifier --trainable-layers N` wrote (full fp16 weights); the output keeps only the
tensors that differ from the base, with the base's path and hash (verifier.checkpoint_overlay), so that committing a
warm start adds a fraction of a checkpoint. The decision rule and model card are written into the output afterwards,
as for any checkpoint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from verifier.checkpoint_overlay import FULL_WEIGHTS, OVERLAY_WEIGHTS, OverlayError, write_overlay


class Command(BaseCommand):
    help = "Write a trained verifier checkpoint as an overlay (its changed tensors) on the checkpoint it started from."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--trained", type=Path, required=True, help="the trained checkpoint folder (full weights)")
        parser.add_argument(
            "--base", type=Path, required=True, help="the committed checkpoint it was warm-started from"
        )
        parser.add_argument("--output", type=Path, required=True, help="the overlay's folder")

    def handle(self, *args: Any, **options: Any) -> None:
        trained, base, output = options["trained"], options["base"], options["output"]
        for folder in (trained, base):
            if not (folder / FULL_WEIGHTS).is_file():
                raise CommandError(f"{folder} has no {FULL_WEIGHTS}")
        try:
            meta = write_overlay(trained=trained, base=base, output=output)
        except OverlayError as error:
            raise CommandError(str(error)) from None
        size = (output / OVERLAY_WEIGHTS).stat().st_size
        self.stdout.write(
            f"{output}: {meta['changed_tensors']} of {meta['of_tensors']} tensors changed "
            f"({meta['changed_parameters']:,} parameters, {size / 1e6:.1f} MB) on {meta['base']}"
        )
