from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("qa", "0002_generation_context_and_cancel")]

    operations = [
        migrations.AddField(
            model_name="answersentence",
            name="confidence",
            field=models.FloatField(blank=True, help_text="the strongest confidence behind the verdict", null=True),
        ),
        migrations.AddField(
            model_name="citationverdict",
            name="confidence",
            field=models.FloatField(blank=True, help_text="the classifier's probability of the label", null=True),
        ),
        migrations.AddField(
            model_name="citationverdict",
            name="evidence_spans",
            field=models.JSONField(default=list, help_text="[start, end] character offsets into the abstract"),
        ),
        migrations.AlterField(
            model_name="citationverdict",
            name="evidence_sentences",
            field=models.JSONField(default=list, help_text="indices of the abstract sentences shown as evidence"),
        ),
        migrations.AlterField(
            model_name="citationverdict",
            name="judge_output",
            field=models.TextField(blank=True, help_text="what the classifier said (probabilities or LLM text)"),
        ),
    ]
