"""`manage.py user_create NAME --role reviewer [--password P]`: add a person with a role (or give one a role)."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from webapp.accounts.roles import ROLES, user_assign_role


class Command(BaseCommand):
    help = "Create a user (or update an existing one) and put them in a role group."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", choices=ROLES, default="researcher")
        parser.add_argument("--password", help="Without one, a random password is generated and printed.")
        parser.add_argument("--email", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["username"].strip()
        if not username:
            raise CommandError("a username is required")
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(username=username, defaults={"email": options["email"]})
        password = options["password"]
        if created or password:
            password = password or secrets.token_urlsafe(12)
            user.set_password(password)
            user.save()
        if options["role"] == "admin":
            # Site admins run the Django admin pages too, which check staff and model permissions.
            user.is_staff = user.is_superuser = True
            user.save(update_fields=["is_staff", "is_superuser"])
        user_assign_role(user=user, role=options["role"])
        shown = f" password={password}" if created and not options["password"] else ""
        self.stdout.write(f"{'created' if created else 'updated'} {username} with role {options['role']}{shown}")
