import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("qa", "0009_question_consensus"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="question",
            name="parent",
            field=models.ForeignKey(
                blank=True,
                help_text="the question this one follows up",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="follow_ups",
                to="qa.question",
            ),
        ),
        migrations.AddField(
            model_name="question",
            name="thread",
            field=models.ForeignKey(
                blank=True,
                help_text="the thread's first question; null for a question that follows none",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="thread_follow_ups",
                to="qa.question",
            ),
        ),
        migrations.CreateModel(
            name="FollowUpDraft",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("text", models.TextField(help_text="the follow-up as typed")),
                (
                    "proposal",
                    models.TextField(
                        help_text="the standalone question offered for editing; the fallback until rewritten"
                    ),
                ),
                ("note", models.TextField(blank=True, help_text="why the rewrite could not be made")),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("rewriting", "Rewriting"),
                            ("proposed", "Proposed by the model"),
                            ("fallback", "Fallback: the rewrite could not be made"),
                            ("asked", "Asked"),
                        ],
                        default="rewriting",
                        max_length=16,
                    ),
                ),
                ("model", models.CharField(blank=True, help_text="the language model that rewrote it", max_length=200)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "asked",
                    models.ForeignKey(
                        blank=True,
                        help_text="asked from it",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="qa.question",
                    ),
                ),
                (
                    "parent",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="follow_up_drafts", to="qa.question"
                    ),
                ),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "ordering": ["-created_at", "-pk"],
            },
        ),
    ]
