"""VeriMed's settings tree: every VERIMED_* variable, typed, validated and documented in one place, and read from there.

`config_from_environment()` reads the environment once, when `webapp/settings.py` is imported, and raises
ImproperlyConfigured naming each bad variable and why. settings.py keeps the tree as the one Django setting `VERIMED`:
code reads `settings.VERIMED.llm.model`, and a test overrides values with pytest-django's `settings` fixture,
`settings.VERIMED = settings.VERIMED.replace(VERIMED_LLM_MODEL="other")`, validated as at start-up.
docs/configuration.md's table is rendered from the same tree (webapp/config_table.py).

Each group gathers one concern; its fields have short names (`llm.timeout_seconds`) and each is read from the variable
it names (`VERIMED_LLM_TIMEOUT_SECONDS`), so the names docker-compose.yml, .env.example and the tests set are unchanged.
The site's own groups (webapp/config_groups.py) name it as their field's `validation_alias`; the generation and
verification groups are the pipeline's own GenerationSettings and VerificationSettings, whose fields name it as
`json_schema_extra={"variable": ...}`, so a pipeline setting is declared once, in the object each answer stores.
Values parse as django-environ parsed them: lists comma-separated, paths resolved, and an empty variable counts as
unset.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from generator.generation_settings import GenerationSettings
from webapp.config_groups import (
    DeploymentConfig,
    EnginesConfig,
    LimitsConfig,
    LlmConfig,
    PathsConfig,
    PubmedConfig,
    TasksConfig,
)
from webapp.qa.verification_settings import VerificationSettings

# The variables that choose an adapter from a library's registry, each of which offers `fake`: a deterministic
# stand-in for fast tests, refused where VERIMED_PRODUCTION is on.
ADAPTER_VARIABLES = (
    "VERIMED_EMBEDDING_BACKEND",
    "VERIMED_LLM_SERVER_KIND",
    "VERIMED_VERIFIER",
    "VERIMED_EVIDENCE_FINDER",
)
TEST_FAKE = "fake"
# The key the embedded profile signs with (public: it is in this file), and the placeholder .env.example ships.
EMBEDDED_SECRET_KEY = "verimed-embedded-default-not-for-production"
PLACEHOLDER_SECRET_KEYS = frozenset({EMBEDDED_SECRET_KEY, "change-me-to-a-long-random-string"})
# Django's own `check --deploy` (security.W009) calls a key shorter than this weak.
MIN_SECRET_KEY_CHARS = 50


class _GroupedVariables(EnvSettingsSource):
    """Each group of the tree read from flat variables, a field from the variable it names.

    pydantic-settings' own source reads nested groups as GROUP__FIELD; the variables keep their historical flat
    names, so this source sorts them into their groups. It keeps the parent's reading of the environment (case
    sensitivity, empty values ignored).
    """

    def __call__(self) -> dict[str, Any]:
        return {
            name: {
                field: self.env_vars[variable]
                for variable, field in group_variables(group.annotation).items()
                if self.env_vars.get(variable) is not None
            }
            for name, group in self.settings_cls.model_fields.items()
        }


class VerimedConfig(BaseSettings):
    model_config = SettingsConfigDict(frozen=True, case_sensitive=True, env_ignore_empty=True)

    deployment: DeploymentConfig = Field(title="Deployment")
    paths: PathsConfig = Field(title="Paths and data")
    engines: EnginesConfig = Field(title="Retrieval engines")
    llm: LlmConfig = Field(title="LLM server")
    generation: GenerationSettings = Field(title="Generation")
    verification: VerificationSettings = Field(title="Verification")
    pubmed: PubmedConfig = Field(title="PubMed files")
    limits: LimitsConfig = Field(title="Limits")
    tasks: TasksConfig = Field(title="Tasks")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (_GroupedVariables(settings_cls),)

    def value(self, variable: str) -> Any:
        """What `variable` is set to in this tree."""
        group, field = variable_places()[variable]
        return getattr(getattr(self, group), field)

    def replace(self, **variables: Any) -> VerimedConfig:
        """This tree with the given variables set to new values, each checked as at start-up (ImproperlyConfigured
        naming the variable): how a test overrides a setting."""
        places = variable_places()
        unknown = sorted(set(variables) - set(places))
        if unknown:
            raise ImproperlyConfigured(f"not a VeriMed setting: {', '.join(unknown)}")
        changed: dict[str, dict[str, Any]] = {}
        for variable, value in variables.items():
            group, field = places[variable]
            # Paths may be given as Path where the field holds text (a checkpoint path or hub id).
            changed.setdefault(group, {})[field] = str(value) if isinstance(value, PurePath) else value
        groups = {}
        for name, fields in changed.items():
            current: BaseModel = getattr(self, name)
            try:
                groups[name] = type(current).model_validate({**current.model_dump(), **fields})
            except ValidationError as error:
                raise ImproperlyConfigured(f"invalid VeriMed settings:\n{_problems(error, group=name)}") from None
        return self.model_copy(update=groups)


def field_variable(field: FieldInfo) -> str | None:
    """The variable a field of the tree is read from; None for a pipeline field the site does not expose."""
    if isinstance(field.validation_alias, str):
        return field.validation_alias
    extra = field.json_schema_extra
    variable = extra.get("variable") if isinstance(extra, dict) else None
    return variable if isinstance(variable, str) else None


def group_variables(group: Any) -> dict[str, str]:
    """The variables a group reads, each with the field it fills."""
    return {
        variable: name for name, field in group.model_fields.items() if (variable := field_variable(field)) is not None
    }


def variable_places() -> dict[str, tuple[str, str]]:
    """Every variable the tree reads, in the tree's order, with its group and field."""
    return {
        variable: (name, field)
        for name, group in VerimedConfig.model_fields.items()
        for variable, field in group_variables(group.annotation).items()
    }


def config_variables() -> list[str]:
    """Every variable the tree reads, in the tree's order."""
    return list(variable_places())


def config_from_environment() -> VerimedConfig:
    try:
        config = VerimedConfig()
    except ValidationError as error:
        raise ImproperlyConfigured(f"invalid settings in the environment:\n{_problems(error)}") from None
    _refuse_test_fakes_in_production(config)
    return config


def refuse_weak_secret_key(key: str, *, production: bool) -> None:
    """Stop a production start-up whose DJANGO_SECRET_KEY is unset, a placeholder that ships with the code, or short.

    Sessions, CSRF tokens and password-reset links are signed with the key: a public or guessable one lets anyone forge
    them. Raises ImproperlyConfigured saying why, never the key itself (start-up errors end up in logs).
    """
    if not production:
        return
    advice = "set it to a long random string, e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    if not key or key == EMBEDDED_SECRET_KEY:
        raise ImproperlyConfigured(
            f"VERIMED_PRODUCTION is on but DJANGO_SECRET_KEY is unset or the embedded default: {advice}"
        )
    if key in PLACEHOLDER_SECRET_KEYS:
        raise ImproperlyConfigured(
            f"VERIMED_PRODUCTION is on but DJANGO_SECRET_KEY is .env.example's placeholder: {advice}"
        )
    if len(key) < MIN_SECRET_KEY_CHARS:
        raise ImproperlyConfigured(
            f"VERIMED_PRODUCTION is on but DJANGO_SECRET_KEY has {len(key)} characters, fewer than "
            f"{MIN_SECRET_KEY_CHARS}: {advice}"
        )


def _refuse_test_fakes_in_production(config: VerimedConfig) -> None:
    # The fakes answer from word overlap: a production site running one would publish made-up verdicts.
    if not config.deployment.production:
        return
    fakes = [variable for variable in ADAPTER_VARIABLES if config.value(variable) == TEST_FAKE]
    if fakes:
        raise ImproperlyConfigured(
            f"VERIMED_PRODUCTION is on but {', '.join(f'{variable}={TEST_FAKE}' for variable in fakes)} chooses a "
            "test fake (for fast tests only): choose a real adapter (docs/configuration.md), or turn "
            "VERIMED_PRODUCTION off"
        )


def _problems(error: ValidationError, *, group: str | None = None) -> str:
    lines = []
    for problem in error.errors():
        loc = (group, *problem["loc"]) if group else problem["loc"]
        name = _variable_at(loc) or ".".join(str(part) for part in loc)
        # Never echo what a key variable holds: start-up errors end up in logs.
        shown = "" if name.endswith("_KEY") else f"={problem['input']!r}"
        lines.append(f"  {name}{shown}: {problem['msg']}")
    return "\n".join(lines)


def _variable_at(loc: tuple[Any, ...]) -> str | None:
    """The variable a validation error's location is in: a variable itself, or a group and its field."""
    if len(loc) < 2:
        return None
    if isinstance(loc[1], str) and loc[1].isupper():
        return loc[1]
    return next((variable for variable, place in variable_places().items() if place == tuple(loc[:2])), None)
