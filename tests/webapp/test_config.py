"""The settings tree (webapp/config.py): read from the environment as django-environ read it, refusing a bad value at
start-up by name, the source of the flat settings and the pipeline's, and of the table in docs/configuration.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path, PurePath

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from pytest_django.fixtures import Settings

from generator.generation_settings import GenerationSettings
from tests.support import REPO
from webapp.config import (
    VerimedConfig,
    config_from_environment,
    config_variables,
    group_from_settings,
    group_variables,
)
from webapp.config_groups import BASE_DIR
from webapp.config_table import TABLE_END, TABLE_START, settings_table, with_settings_table
from webapp.qa.pipeline import default_pipeline_settings


@pytest.fixture
def bare_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No VERIMED_* variable set, as on a fresh machine; set the ones a test needs on the returned monkeypatch."""
    for name in list(os.environ):
        if name.startswith("VERIMED_"):
            monkeypatch.delenv(name)
    return monkeypatch


def test_the_configuration_page_shows_the_table_the_tree_renders() -> None:
    page = (REPO / "docs" / "configuration.md").read_text()

    assert with_settings_table(page, settings_table()) == page, (
        "docs/configuration.md differs from webapp/config.py: run "
        "`python manage.py settings_table --write docs/configuration.md`"
    )


def test_the_table_lists_every_variable_of_the_tree_once() -> None:
    listed = re.findall(r"^\| `([A-Z0-9_]+)` \|", settings_table(), flags=re.MULTILINE)

    assert listed == config_variables()
    assert len(set(listed)) == len(listed)
    assert {
        "VERIMED_MAX_QUESTION_CHARS",
        "VERIMED_QUESTIONS_PER_HOUR",
        "VERIMED_MAX_QUEUED_QUESTIONS",
        "VERIMED_LOGIN_FAILURE_LIMIT",
        "VERIMED_UPDATES_SYNC_HOUR",
    } <= set(listed)


def test_writing_the_table_replaces_only_what_lies_between_the_markers() -> None:
    page = f"# Title\nbefore\n{TABLE_START}\nstale rows\n{TABLE_END}\nafter\n"

    written = with_settings_table(page, "| new |")

    assert written == f"# Title\nbefore\n{TABLE_START}\n| new |\n{TABLE_END}\nafter\n"
    with pytest.raises(ValueError, match="markers"):
        with_settings_table("# A page without markers\n", "| new |")


def test_settings_py_reads_no_verimed_variable_itself() -> None:
    source = (REPO / "webapp" / "settings.py").read_text()

    assert not re.findall(r'env\.\w+\(\s*"(VERIMED_\w+)"', source)


def test_the_defaults_are_the_embedded_profile(bare_environment: pytest.MonkeyPatch) -> None:
    config = config_from_environment()

    var = BASE_DIR / "var"
    assert (config.paths.var_dir, config.paths.index_dir, config.paths.pubmed_dir) == (
        var,
        var / "index",
        var / "pubmed",
    )
    assert config.paths.data_dir == (BASE_DIR.parent / "shared" / "data").resolve()
    assert config.paths.ingest_dirs == [var / "pubmed", config.paths.data_dir / "pubmed"]
    assert config.deployment.production is False
    assert config.engines.qdrant_api_key is None
    assert config.generation.max_tokens == 1225
    assert config.verification.verifier_model == str(BASE_DIR / "verifier" / "models" / "verimed-minilm-verifier")


def test_values_parse_as_django_environ_parsed_them(bare_environment: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name, value in {
        "VERIMED_VAR_DIR": str(tmp_path / "var" / ".." / "state"),
        "VERIMED_INGEST_DIRS": f"{tmp_path / 'a'},,{tmp_path / 'b' / '..' / 'c'}",
        "VERIMED_VERIFIER_LABELS": "NO_EVIDENCE,SUPPORT,CONTRADICT",
        "VERIMED_PRODUCTION": "yes",
        "VERIMED_PUBMED_KEEP_FILES": "0",
        "VERIMED_QDRANT_API_KEY": "",  # empty counts as unset, as .env.example's `VERIMED_QDRANT_API_KEY=` means
        "VERIMED_LLM_TEMPERATURE": "0.3",
    }.items():
        bare_environment.setenv(name, value)

    config = config_from_environment()

    state = tmp_path / "state"
    assert (config.paths.var_dir, config.paths.index_dir, config.paths.model_cache) == (
        state,
        state / "index",
        state / "models",
    )
    assert config.paths.ingest_dirs == [tmp_path / "a", tmp_path / "c"]
    assert config.verification.verifier_labels == ["NO_EVIDENCE", "SUPPORT", "CONTRADICT"]
    assert (config.deployment.production, config.pubmed.keep_files) == (True, False)
    assert config.engines.qdrant_api_key is None
    assert config.generation.temperature == 0.3


def test_every_bad_value_is_named_with_its_reason(bare_environment: pytest.MonkeyPatch) -> None:
    bare_environment.setenv("VERIMED_LLM_MAX_TOKENS", "8193")  # GenerationSettings' own limit
    bare_environment.setenv("VERIMED_VERIFIER", "deberta")
    bare_environment.setenv("VERIMED_CELERY_EAGER", "treu")  # django-environ read it as false
    bare_environment.setenv("VERIMED_LLM_API_KEY", "secret")

    with pytest.raises(ImproperlyConfigured) as refused:
        config_from_environment()

    message = str(refused.value)
    assert "VERIMED_LLM_MAX_TOKENS='8193': Input should be less than or equal to 8192" in message
    assert "VERIMED_VERIFIER='deberta': Input should be 'cross-encoder', 'llm-judge' or 'fake'" in message
    assert "VERIMED_CELERY_EAGER='treu'" in message
    assert "secret" not in message


def test_a_bad_value_stops_start_up_with_an_error_naming_the_variable(tmp_path: Path) -> None:
    # In a process of its own: this one's settings are loaded already and must stay as they are.
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        env={
            **base,
            "DJANGO_SETTINGS_MODULE": "webapp.settings",
            "VERIMED_VAR_DIR": str(tmp_path),
            "VERIMED_LLM_MAX_TOKENS": "abc",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode != 0
    assert "django.core.exceptions.ImproperlyConfigured: invalid settings in the environment:" in result.stderr
    assert "VERIMED_LLM_MAX_TOKENS='abc': Input should be a valid integer" in result.stderr


def test_every_flat_setting_holds_the_value_of_its_variable() -> None:
    from_environment = config_from_environment()  # this test process's environment, read again

    compared = []
    for name, group in VerimedConfig.model_fields.items():
        for variable, field in group_variables(group.annotation).items():
            if not hasattr(django_settings, variable):
                continue  # it feeds a setting of Django's or Celery's own (VAR_DIR, AXES_*, CELERY_*, LOGGING)
            flat, value = getattr(django_settings, variable), getattr(getattr(from_environment, name), field)
            assert (str(flat) if isinstance(flat, PurePath) and isinstance(value, str) else flat) == value, variable
            compared.append(variable)
    assert len(compared) >= 40


@pytest.mark.parametrize("group", ["engines", "llm", "generation", "verification"])
def test_the_pipeline_groups_read_from_the_flat_settings_equal_the_tree(group: str) -> None:
    model = VerimedConfig.model_fields[group].annotation
    assert model is not None

    assert group_from_settings(model, django_settings) == getattr(config_from_environment(), group)


def test_the_pipeline_follows_the_flat_settings_a_test_overrides(settings: Settings) -> None:
    settings.VERIMED_LLM_MAX_TOKENS = 150
    settings.VERIMED_VERIFIER_MODEL = Path("/models/deberta")
    settings.VERIMED_VERIFIER_LABELS = ["NO_EVIDENCE", "SUPPORT", "CONTRADICT"]
    settings.VERIMED_LLM_MODEL = "other-model"

    pipeline = default_pipeline_settings()

    assert pipeline.generation.max_tokens == 150
    assert pipeline.generation.sampling().max_tokens == 150
    assert pipeline.verification.verifier_model == "/models/deberta"
    assert pipeline.verification.verifier_labels == ["NO_EVIDENCE", "SUPPORT", "CONTRADICT"]
    assert pipeline.llm_model == "other-model"
    assert type(pipeline.generation) is GenerationSettings  # the plain pipeline object, as stored


def test_an_overridden_flat_setting_is_checked_as_at_start_up(settings: Settings) -> None:
    settings.VERIMED_LLM_MAX_TOKENS = 5

    with pytest.raises(ImproperlyConfigured, match=r"VERIMED_LLM_MAX_TOKENS=5: Input should be greater than or equal"):
        default_pipeline_settings()
