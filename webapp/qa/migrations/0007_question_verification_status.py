from django.db import migrations, models


def mark_finished_answers_verified(apps, schema_editor):
    # Before this field a question was done only once its verification had run.
    Question = apps.get_model("qa", "Question")
    Question.objects.filter(status="done").update(verification_status="verified")


class Migration(migrations.Migration):
    dependencies = [
        ("qa", "0006_unclear_verdicts"),
    ]

    operations = [
        migrations.AddField(
            model_name="question",
            name="verification_status",
            field=models.CharField(
                blank=True,
                choices=[("verified", "Verified"), ("unavailable", "Unavailable")],
                help_text="blank until the verify stage ends (and for a question that failed or stopped before it)",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="question",
            name="verification_error",
            field=models.TextField(blank=True, help_text="why verification is unavailable"),
        ),
        migrations.RunPython(mark_finished_answers_verified, migrations.RunPython.noop),
    ]
