from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("qa", "0007_question_verification_status"),
    ]

    operations = [
        migrations.AddField(
            model_name="question",
            name="semantic_coverage",
            field=models.FloatField(
                blank=True,
                help_text="share of the stored articles in the vector index when the question was retrieved (the rest "
                "were still being embedded: only the lexical leg could find them); null before retrieval",
                null=True,
            ),
        ),
    ]
