"""The three role groups exist in every database, so admins only ever add people to them."""

from __future__ import annotations

from typing import Any

from django.db import migrations

ROLES = ("researcher", "reviewer", "admin")


def create_groups(apps: Any, schema_editor: Any) -> None:
    group = apps.get_model("auth", "Group")
    for name in ROLES:
        group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    initial = True
    dependencies = [("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(create_groups, migrations.RunPython.noop)]
