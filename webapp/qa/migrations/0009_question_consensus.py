from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("qa", "0008_question_semantic_coverage"),
    ]

    operations = [
        migrations.AddField(
            model_name="question",
            name="consensus",
            field=models.JSONField(
                blank=True,
                help_text="for a yes/no question, the verifier's verdicts on its claim against the first retrieved "
                "abstracts (webapp/qa/consensus.py); null for other questions, before verification, or when it could "
                "not be made",
                null=True,
            ),
        ),
    ]
