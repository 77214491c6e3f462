"""`manage.py api_token USERNAME [--rotate | --revoke]`: print a person's API token, creating it on first use; or
replace it with a new one, or revoke it."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.authtoken.models import Token

from webapp.accounts.api_tokens import api_token_revoke, api_token_rotate


class Command(BaseCommand):
    help = "Print the API token of a user (created if they have none). Send it as `Authorization: Token <key>`."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        choice = parser.add_mutually_exclusive_group()
        choice.add_argument("--rotate", action="store_true", help="replace the token with a new one and print it")
        choice.add_argument("--revoke", action="store_true", help="delete the token: calls that send it are refused")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            user = get_user_model().objects.get(username=options["username"])
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user named {options['username']!r}; create one with user_create") from None
        if options["revoke"]:
            revoked = api_token_revoke(user=user)
            self.stdout.write("revoked" if revoked else "no token to revoke")
            return
        token = api_token_rotate(user=user) if options["rotate"] else Token.objects.get_or_create(user=user)[0]
        self.stdout.write(token.key)
