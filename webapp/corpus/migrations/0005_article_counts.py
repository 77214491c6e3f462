"""The articles stored and those in the vector index, kept in one row by triggers on the article table, so that
each question's semantic coverage line reads one row instead of counting the table twice (two full scans per question
on PostgreSQL at PubMed's size). Triggers rather than the Python writers: every write keeps the figures right, the
ingest and embedding jobs, a deletion, the admin, a bulk statement, another process.

PostgreSQL counts once per statement from its transition tables (a batch of 10,000 rows updates the row once, and
only when a figure moves); SQLite has row triggers only, cheap there (one writer, no row locks). On SQLite a
migration that remakes corpus_article (most AlterFields) drops its triggers with the old table: such a migration
must install them again (`install_triggers`), and tests/webapp/corpus/test_article_counts.py fails until it does.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

POSTGRESQL_FUNCTION = """
CREATE OR REPLACE FUNCTION corpus_article_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    articles_moved bigint := 0;
    embedded_moved bigint := 0;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT count(*), count(*) FILTER (WHERE embedded) INTO articles_moved, embedded_moved FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT -count(*), -count(*) FILTER (WHERE embedded) INTO articles_moved, embedded_moved FROM old_rows;
    ELSE
        SELECT (SELECT count(*) FROM new_rows WHERE embedded) - (SELECT count(*) FROM old_rows WHERE embedded)
            INTO embedded_moved;
    END IF;
    IF articles_moved <> 0 OR embedded_moved <> 0 THEN
        UPDATE corpus_articlecounts
            SET articles = articles + articles_moved, embedded = embedded + embedded_moved WHERE id = 1;
    END IF;
    RETURN NULL;
END
$$
"""
POSTGRESQL = [
    POSTGRESQL_FUNCTION,
    "CREATE TRIGGER corpus_article_counts_insert AFTER INSERT ON corpus_article REFERENCING NEW TABLE AS new_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION corpus_article_counts()",
    "CREATE TRIGGER corpus_article_counts_update AFTER UPDATE ON corpus_article "
    "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION corpus_article_counts()",
    "CREATE TRIGGER corpus_article_counts_delete AFTER DELETE ON corpus_article REFERENCING OLD TABLE AS old_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION corpus_article_counts()",
]
POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS corpus_article_counts_insert ON corpus_article",
    "DROP TRIGGER IF EXISTS corpus_article_counts_update ON corpus_article",
    "DROP TRIGGER IF EXISTS corpus_article_counts_delete ON corpus_article",
    "DROP FUNCTION IF EXISTS corpus_article_counts()",
]
SQLITE = [
    "CREATE TRIGGER IF NOT EXISTS corpus_article_counts_insert AFTER INSERT ON corpus_article BEGIN "
    "UPDATE corpus_articlecounts SET articles = articles + 1, embedded = embedded + NEW.embedded WHERE id = 1; END",
    "CREATE TRIGGER IF NOT EXISTS corpus_article_counts_update AFTER UPDATE OF embedded ON corpus_article "
    "WHEN OLD.embedded <> NEW.embedded BEGIN "
    "UPDATE corpus_articlecounts SET embedded = embedded + NEW.embedded - OLD.embedded WHERE id = 1; END",
    "CREATE TRIGGER IF NOT EXISTS corpus_article_counts_delete AFTER DELETE ON corpus_article BEGIN "
    "UPDATE corpus_articlecounts SET articles = articles - 1, embedded = embedded - OLD.embedded WHERE id = 1; END",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS corpus_article_counts_insert",
    "DROP TRIGGER IF EXISTS corpus_article_counts_update",
    "DROP TRIGGER IF EXISTS corpus_article_counts_delete",
]
# After the triggers, in the same transaction: on PostgreSQL CREATE TRIGGER holds writers off until the commit, so no
# write falls between the count and the triggers.
FILL = (
    "INSERT INTO corpus_articlecounts (id, articles, embedded) "
    "SELECT 1, COUNT(*), COALESCE(SUM(CASE WHEN embedded THEN 1 ELSE 0 END), 0) FROM corpus_article"
)


def _statements(schema_editor: Any, by_vendor: dict[str, list[str]]) -> list[str]:
    vendor = schema_editor.connection.vendor
    if vendor not in by_vendor:
        raise NotImplementedError(f"the article counts' triggers are written for PostgreSQL and SQLite, not {vendor}")
    return by_vendor[vendor]


def install_triggers(apps: Any, schema_editor: Any) -> None:
    for statement in _statements(schema_editor, {"postgresql": POSTGRESQL, "sqlite": SQLITE}):
        schema_editor.execute(statement, params=None)


def install(apps: Any, schema_editor: Any) -> None:
    install_triggers(apps, schema_editor)
    schema_editor.execute(FILL, params=None)


def uninstall(apps: Any, schema_editor: Any) -> None:
    for statement in _statements(schema_editor, {"postgresql": POSTGRESQL_DROP, "sqlite": SQLITE_DROP}):
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("corpus", "0004_retractions")]

    operations = [
        migrations.CreateModel(
            name="ArticleCounts",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("articles", models.BigIntegerField(default=0)),
                ("embedded", models.BigIntegerField(default=0)),
            ],
            options={"verbose_name_plural": "article counts"},
        ),
        migrations.RunPython(install, uninstall),
    ]
