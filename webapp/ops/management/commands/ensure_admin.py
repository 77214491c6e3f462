"""`manage.py ensure_admin`: make sure an admin account exists, and say how to sign in with it."""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from webapp.accounts.roles import ADMIN, user_assign_role


class Command(BaseCommand):
    help = (
        "Create the admin account if none exists. Credentials come from DJANGO_SUPERUSER_USERNAME and "
        "DJANGO_SUPERUSER_PASSWORD; without a password one is generated and written to var/admin-credentials.txt."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        username = os.environ.get("DJANGO_SUPERUSER_USERNAME", "admin")
        credentials_file = settings.VAR_DIR / "admin-credentials.txt"
        if user_model.objects.filter(username=username).exists():
            where = f" (password in {credentials_file})" if credentials_file.exists() else ""
            self.stdout.write(f"admin account: {username}{where}")
            return
        password = os.environ.get("DJANGO_SUPERUSER_PASSWORD") or secrets.token_urlsafe(12)
        admin = user_model.objects.create_superuser(username=username, email="", password=password)
        user_assign_role(user=admin, role=ADMIN)
        if "DJANGO_SUPERUSER_PASSWORD" not in os.environ:
            credentials_file.write_text(f"username: {username}\npassword: {password}\n")
            credentials_file.chmod(0o600)
        self.stdout.write(f"admin account created: username={username} password={password}")
