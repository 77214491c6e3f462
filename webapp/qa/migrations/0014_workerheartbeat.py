from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("qa", "0013_question_closest_candidate"),
    ]

    operations = [
        migrations.CreateModel(
            name="WorkerHeartbeat",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "name",
                    models.CharField(help_text="the worker's node name, e.g. llm@host", max_length=255, unique=True),
                ),
                ("queues", models.CharField(help_text="the queues it consumes, comma-separated", max_length=255)),
                ("beat_at", models.DateTimeField()),
            ],
        ),
    ]
