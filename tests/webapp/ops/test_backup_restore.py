"""`manage.py backup` and `manage.py restore`: the drill (a site with questions, answers, flags, a watch, a
notification, a deep check and a library paper over a real corpus, backed up, wiped and restored) on each profile, and
the refusals.

The drills run the commands in processes of their own, as an operator would: the site is made by
tests/webapp/ops/backup_drill.py in its checkout's environment, and read back by it after the restore.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from contextlib import closing
from io import StringIO
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from psycopg import sql

from indexer.library_passages import Passage
from indexer.library_records import passage_records
from tests.e2e.profiles import POSTGRES_SERVER, profile_env
from tests.support import run_with_django_settings, shared_data_dir
from tests.webapp.factories import REVIEW_ABSTRACT_A, REVIEW_ABSTRACT_B
from tests.webapp.ops.backup_drill import STALE_DOCUMENT
from webapp.corpus.models import Article
from webapp.library.engines import library_lexical_index, release_library_engines

# The drills embed a real corpus with the packaged MiniLM (in the processes they start).
pytestmark = pytest.mark.model

ABSTRACTS = 24


def _corpus(folder: Path) -> list[str]:
    """The first abstracts of the shared BioASQ corpus, and the two articles the factories' answers cite (ingested
    like the rest, so the database and both legs hold the same articles)."""
    bioasq, cited = folder / "bioasq.jsonl", folder / "cited.jsonl"
    with gzip.open(shared_data_dir() / "bioasq" / "benchmark" / "corpus.jsonl.gz", "rt") as source:
        # Lines for PMIDs whose abstract BioASQ could not fetch hold a placeholder, which ingestion skips.
        lines = [line for line in source if not json.loads(line).get("text", "").startswith("No document")]
    lines = lines[:ABSTRACTS]
    bioasq.write_text("".join(lines))
    cited.write_text(
        json.dumps({"pmid": "111", "title": "Metformin safety", "abstract": REVIEW_ABSTRACT_A, "year": 2010})
        + "\n"
        + json.dumps({"pmid": "222", "title": "Everolimus and mTORC1", "abstract": REVIEW_ABSTRACT_B})
        + "\n"
    )
    return [str(bioasq), str(cited)]


def _run(env: dict[str, str], *args: str) -> str:
    result = run_with_django_settings(env, *args)
    assert result.returncode == 0, f"{' '.join(args)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return result.stdout


def _state(env: dict[str, str], *populate: str) -> dict[str, Any]:
    command = ["populate", *populate] if populate else ["state"]
    output = _run(env, "-m", "tests.webapp.ops.backup_drill", *command)
    return json.loads(output.strip().splitlines()[-1])


def _assert_site_made(state: dict[str, Any]) -> None:
    """The drill's site holds what it should, so that comparing it after the restore means something."""
    rows = state["rows"]
    counts = {label: len(rows[label]) for label in rows}
    assert counts["corpus.Article"] == ABSTRACTS + 2
    assert counts["qa.Question"] == 3
    assert counts["review.Flag"] == 3
    assert counts["deepcheck.ClaimFlag"] == counts["deepcheck.DeepCheck"] == 1
    assert counts["watch.Watch"] == counts["watch.Notification"] == counts["watch.Recheck"] == 1
    assert all(state["searches"].values()), state["searches"]
    assert counts["library.Document"] == 1
    library = state["library"]
    assert library["held"]["lexical"] == counts["library.Passage"] > 1
    assert library["held"]["vectors"] >= library["held"]["lexical"]
    assert all(library["found"].values()), library["found"]


def _library_rebuilt(output: str, state: dict[str, Any]) -> None:
    passages = len(state["rows"]["library.Passage"])
    assert f"library: indexes rebuilt from the database, 1 documents, {passages} passages" in output


def _restore(env: dict[str, str], backup: Path, *options: str) -> str:
    return _run(env, "manage.py", "restore", str(backup), *options)


@pytest.fixture(scope="module")
def embedded_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, Any], Path]:
    """An embedded-profile site (SQLite, tantivy, qdrant-edge under its var folder), its state and its backup."""
    from django.conf import settings

    root = tmp_path_factory.mktemp("embedded")
    env = {"VERIMED_VAR_DIR": str(root / "var"), "VERIMED_MODEL_CACHE": str(settings.VERIMED.paths.model_cache)}
    before = _state(env, *_corpus(root))
    _assert_site_made(before)
    backup = root / "backup"
    output = _run(env, "manage.py", "backup", str(backup))
    assert "embedded profile" in output
    return env, before, backup


def test_an_embedded_site_wiped_and_restored_has_every_row_and_the_same_search(
    embedded_site: tuple[dict[str, str], dict[str, Any], Path],
) -> None:
    env, before, backup = embedded_site
    shutil.rmtree(env["VERIMED_VAR_DIR"])
    output = _restore(env, backup)
    assert "lexical 26 documents (copy)" in output
    _library_rebuilt(output, before)
    assert _state(env) == before  # the library's indexes hold and find what they did
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest["indexes"]["generation"] == "g1"
    assert manifest["models"]["embedder"]["model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert manifest["models"]["embedder"]["fingerprint"]
    assert manifest["database"]["rows"]["watch_notification"] == 1


def test_a_forced_restore_that_rebuilds_both_legs_replaces_the_target_and_finds_the_same_articles(
    embedded_site: tuple[dict[str, str], dict[str, Any], Path], tmp_path: Path
) -> None:
    """--force over a checkout holding an older state, and --rebuild-indexes: what a restore does with a leg whose
    files it cannot use (a server's, another embedder's): the articles are indexed and embedded again. The older
    state's library indexes hold a document the backup does not: it is gone from them afterwards."""
    env, before, backup = embedded_site
    var = tmp_path / "checkout-var"
    (var / "index" / "tantivy-g9").mkdir(parents=True)
    (var / "index" / "ACTIVE_GENERATION").write_text("g9")
    shutil.copyfile(backup / "database" / "db.sqlite3", var / "db.sqlite3")
    with closing(sqlite3.connect(var / "db.sqlite3")) as older, older:
        older.execute("DELETE FROM watch_notification")
    checkout = {**env, "VERIMED_VAR_DIR": str(var)}
    _run(checkout, "-m", "tests.webapp.ops.backup_drill", "stale-library")
    output = _restore(checkout, backup, "--force", "--rebuild-indexes")
    assert f"removed {var / 'index' / 'tantivy-g9'}" in output
    assert f"removed {var / 'index' / 'library-tantivy'}" in output
    _library_rebuilt(output, before)
    assert "lexical 26 documents (rebuild)" in output
    assert "(rebuild)" in output.split("vectors", 1)[1]
    assert not (var / "index" / "ACTIVE_GENERATION").exists()  # the backup's site had none: g1 is live
    after = _state(checkout)
    assert after["rows"] == before["rows"]
    assert {query: [hit[0] for hit in hits] for query, hits in after["searches"].items()} == {
        query: [hit[0] for hit in hits] for query, hits in before["searches"].items()
    }
    assert after["library"] == before["library"]
    assert not any(
        hit[0].startswith(f"DOC:{STALE_DOCUMENT}:") for hits in after["library"]["found"].values() for hit in hits
    )


def _wipe_production(env: dict[str, str]) -> None:
    """Drop and recreate the database, delete the OpenSearch index, remove the var folder (qdrant's local mode)."""
    from opensearchpy import OpenSearch

    name = env["DATABASE_URL"].rsplit("/", 1)[1]
    with psycopg.connect(f"{POSTGRES_SERVER}/postgres", autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    client = OpenSearch(hosts=env["VERIMED_OPENSEARCH_URL"])
    for index in ("verimed-articles-g1", "verimed-articles-library"):
        client.indices.delete(index=index)
        assert not client.indices.exists(index=index)
    client.close()
    shutil.rmtree(env["VERIMED_VAR_DIR"])


def test_a_production_site_wiped_and_restored_has_every_row_and_the_same_search(tmp_path: Path) -> None:
    """PostgreSQL (pg_dump), OpenSearch (osmem: rebuilt from the database) and qdrant-client's local folder."""
    from django.conf import settings

    var = tmp_path / "var"
    with profile_env("production", var) as production:
        env = {
            **production,
            "VERIMED_VAR_DIR": str(var),
            "VERIMED_MODEL_CACHE": str(settings.VERIMED.paths.model_cache),
        }
        before = _state(env, *_corpus(tmp_path))
        _assert_site_made(before)
        backup = tmp_path / "backup.tar.gz"
        output = _run(env, "manage.py", "backup", str(backup))
        assert "production profile" in output
        assert "pg_dump" in output
        _wipe_production(env)
        output = _restore(env, backup)
        assert "rebuilding the lexical leg from the database" in output
        assert "lexical 26 documents (rebuild)" in output
        _library_rebuilt(output, before)
        assert _state(env) == before


# The refusals run in this process, against the test database and an index folder of the test's own.


def _damaged(backup: Path, folder: Path, damage: str) -> Path:
    copy = folder / "damaged"
    shutil.copytree(backup, copy)
    database = copy / "database" / "db.sqlite3"
    if damage == "truncated":
        with database.open("r+b") as handle:
            handle.truncate(database.stat().st_size // 2)
    elif damage == "altered":
        data = bytearray(database.read_bytes())
        data[-100] ^= 0xFF
        database.write_bytes(bytes(data))
    else:  # what a backup killed before its end would have lacked
        (copy / "manifest.json").unlink()
    return copy


def _target(index_dir: Path) -> dict[str, Any]:
    return {
        "users": list(User.objects.order_by("pk").values_list("username", flat=True)),
        "articles": Article.objects.count(),
        "index": sorted(str(path.relative_to(index_dir)) for path in index_dir.rglob("*")),
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("truncated", "is .* bytes where the manifest says .*truncated or damaged"),
        ("altered", "does not match its checksum"),
        ("unfinished", "not a complete backup"),
    ],
)
def test_a_damaged_backup_is_refused_even_with_force_and_nothing_changes(
    embedded_site: tuple[dict[str, str], dict[str, Any], Path],
    own_index: Path,
    tmp_path: Path,
    damage: str,
    message: str,
) -> None:
    User.objects.create_user("someone", password="a-long-test-password")
    own_index.mkdir(parents=True)
    (own_index / "tantivy-g7").mkdir()
    before = _target(own_index)
    backup = _damaged(embedded_site[2], tmp_path, damage)
    with pytest.raises(CommandError, match=f"refused: .*{message}.*Nothing was changed"):
        call_command("restore", str(backup), "--force", stdout=StringIO())
    assert _target(own_index) == before


def _earlier_library_entry() -> None:
    """A passage in the library's lexical index, as an earlier site would have left there."""
    passage = Passage(ordinal=0, section="Results", page=None, text="An earlier site's passage.")
    release_library_engines()
    try:
        library_lexical_index().add(passage_records(owner="1", document_id=5, title="Earlier", passages=[passage]))
    finally:
        release_library_engines()


@pytest.mark.django_db
def test_a_restore_into_a_site_with_data_is_refused_and_nothing_changes(
    embedded_site: tuple[dict[str, str], dict[str, Any], Path], own_index: Path
) -> None:
    User.objects.create_user("someone", password="a-long-test-password")
    (own_index / "tantivy-g7").mkdir(parents=True)
    _earlier_library_entry()
    before = _target(own_index)
    with pytest.raises(
        CommandError,
        match=r"refused: the target is not empty: auth_user holds 1 row; generation g7 in .*; "
        r"the library's lexical index .*library-tantivy.*--force",
    ):
        call_command("restore", str(embedded_site[2]), stdout=StringIO())
    assert _target(own_index) == before
    assert connection.vendor == "sqlite"


def test_a_backup_never_overwrites_another(tmp_path: Path) -> None:
    existing = tmp_path / "backup"
    existing.mkdir()
    (existing / "kept").write_text("an earlier backup")
    with pytest.raises(CommandError, match="exists: a backup never overwrites another"):
        call_command("backup", str(existing), stdout=StringIO())
    assert [path.name for path in existing.iterdir()] == ["kept"]
