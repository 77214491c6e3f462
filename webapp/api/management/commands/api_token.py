"""`manage.py api_token USERNAME`: print a person's API token, creating it on first use."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.authtoken.models import Token


class Command(BaseCommand):
    help = "Print the API token of a user (created if they have none). Send it as `Authorization: Token <key>`."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            user = get_user_model().objects.get(username=options["username"])
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user named {options['username']!r}; create one with user_create") from None
        token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(token.key)
