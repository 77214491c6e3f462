"""`manage.py settings_table`: the configuration table rendered from the settings tree, printed or written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from webapp.config_table import settings_table, with_settings_table


class Command(BaseCommand):
    help = (
        "Print the table of VERIMED_* variables (default, meaning) rendered from webapp/config.py, or with --write "
        "replace the one between the settings-table markers of a Markdown page."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--write", type=Path, metavar="PAGE", help="e.g. docs/configuration.md")

    def handle(self, *args: Any, write: Path | None, **options: Any) -> None:
        table = settings_table()
        if write is None:
            self.stdout.write(table)
            return
        try:
            write.write_text(with_settings_table(write.read_text(), table))
        except (OSError, ValueError) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"wrote the settings table into {write}")
