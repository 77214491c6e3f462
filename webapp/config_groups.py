"""The groups of the settings tree (webapp/config.py) that are the site's own: each VERIMED_* variable as a typed,
documented field. (The generation and verification groups are the pipeline's own settings objects, whose fields name
their variables themselves.)

A field is read from the variable its `validation_alias` names; its `description` is its line in the docs table.
"""

from __future__ import annotations

from collections.abc import Callable
from ipaddress import ip_network
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    IPvAnyNetwork,
    ValidationInfo,
    field_validator,
)

from generator.base import ServerKind
from webapp.qa.verification_settings import comma_separated

BASE_DIR = Path(__file__).resolve().parent.parent
_TRUE_WORDS = ("true", "on", "ok", "y", "yes", "1")  # django-environ's
_FALSE_WORDS = ("false", "off", "no", "n", "0")


def _flag(value: object) -> object:
    # django-environ read every word it did not know as false, so a typo silently turned a switch off.
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS or word in _FALSE_WORDS:
            return word in _TRUE_WORDS
        raise ValueError("expected true or false (or yes/no, on/off, 1/0)")
    return value


Flag = Annotated[bool, BeforeValidator(_flag)]
ResolvedPath = Annotated[Path, AfterValidator(Path.resolve)]
ResolvedPaths = Annotated[list[ResolvedPath], BeforeValidator(comma_separated)]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def _derived(factory: Callable[[dict[str, Any]], Any], *, variable: str, shown: str, description: str) -> Any:
    """A field whose default follows earlier fields of its group; `shown` is that default in the docs table."""
    return Field(
        default_factory=factory,
        validation_alias=variable,
        description=description,
        json_schema_extra={"shown_default": shown},
    )


class _Group(BaseModel):
    # Defaults go through the same validators as variables: paths are resolved either way. By name as well as by
    # variable: VerimedConfig.replace validates a group again from its fields.
    model_config = ConfigDict(frozen=True, validate_default=True, validate_by_name=True, validate_by_alias=True)


class DeploymentConfig(_Group):
    production: Flag = Field(
        False,
        validation_alias="VERIMED_PRODUCTION",
        description="the docker-compose profile: secure cookies, HTTPS redirect, HSTS, TLS proxy headers (each "
        "overridable by its `DJANGO_*` variable); refuses a `DJANGO_SECRET_KEY` that is unset, the embedded default, "
        "`.env.example`'s placeholder or shorter than 50 characters",
    )
    log_level: LogLevel = Field("INFO", validation_alias="VERIMED_LOG_LEVEL", description="the root logger's level")
    trusted_proxies: Annotated[list[IPvAnyNetwork], BeforeValidator(comma_separated)] = Field(
        [ip_network("127.0.0.1"), ip_network("::1")],
        validation_alias="VERIMED_TRUSTED_PROXIES",
        description="addresses or networks (`10.0.0.0/8`), comma-separated, of the TLS proxy in front: only a request "
        "whose connection comes from one of them has its `X-Forwarded-For` believed (where `DJANGO_BEHIND_TLS_PROXY` "
        "is on); any other is counted by its own address, so a client that reaches the app directly cannot pick a "
        "new address for every sign-in try",
        json_schema_extra={"shown_default": "`127.0.0.1,::1`"},
    )


class PathsConfig(_Group):
    var_dir: ResolvedPath = Field(
        BASE_DIR / "var",
        validation_alias="VERIMED_VAR_DIR",
        description="database, broker, indexes, assembled model files, logs",
    )
    data_dir: ResolvedPath = Field(
        BASE_DIR.parent / "shared" / "data",
        validation_alias="VERIMED_DATA_DIR",
        description="the shared real data (read, never copied)",
    )
    index_dir: ResolvedPath = _derived(
        lambda group: group["var_dir"] / "index",
        variable="VERIMED_INDEX_DIR",
        shown="`index/` in `VERIMED_VAR_DIR`",
        description="the embedded engines' indexes (tantivy, Qdrant edge)",
    )
    model_cache: ResolvedPath = _derived(
        lambda group: group["var_dir"] / "models",
        variable="VERIMED_MODEL_CACHE",
        shown="`models/` in `VERIMED_VAR_DIR`",
        description="model files assembled from wheels, and ONNX exports",
    )
    pubmed_dir: ResolvedPath = _derived(
        lambda group: group["var_dir"] / "pubmed",
        variable="VERIMED_PUBMED_DIR",
        shown="`pubmed/` in `VERIMED_VAR_DIR`",
        description="where PubMed files are downloaded to",
    )
    ingest_dirs: ResolvedPaths = _derived(
        lambda group: [group["pubmed_dir"], group["data_dir"] / "pubmed"],
        variable="VERIMED_INGEST_DIRS",
        shown="`VERIMED_PUBMED_DIR`, `pubmed/` in `VERIMED_DATA_DIR`",
        description="comma-separated folders the admin pages may ingest files from (nothing outside them is read)",
    )


class TasksConfig(_Group):
    soft_time_limit: int = Field(
        900,
        ge=1,
        validation_alias="VERIMED_TASK_SOFT_TIME_LIMIT",
        description="seconds a Celery task may run before it is asked to stop",
    )
    time_limit: int = Field(
        960, ge=1, validation_alias="VERIMED_TASK_TIME_LIMIT", description="seconds before a Celery task is killed"
    )
    deep_check_lost_minutes: int = Field(
        30,
        ge=1,
        validation_alias="VERIMED_DEEP_CHECK_LOST_MINUTES",
        description="minutes a deep check may stay queued or running without moving before it counts as lost (its "
        "worker died): its page says so, it may be run again, and the queue no longer counts it; longer than "
        "`VERIMED_TASK_TIME_LIMIT`",
    )
    question_lost_minutes: int = Field(
        30,
        ge=1,
        validation_alias="VERIMED_QUESTION_LOST_MINUTES",
        description="minutes a question may stay queued or in a stage without moving before it counts as lost (its "
        "worker died, or the broker lost its task): its page shows it failed with an *Ask again* button, the queue "
        "no longer counts it, and a late copy of its task does nothing; longer than `VERIMED_TASK_TIME_LIMIT`",
    )
    eager: Flag = Field(
        False,
        validation_alias="VERIMED_CELERY_EAGER",
        description="run tasks inside the calling process: for tests and `ask --in-process` only, never with workers",
    )

    @field_validator("deep_check_lost_minutes", "question_lost_minutes")
    @classmethod
    def _longer_than_a_task_runs(cls, minutes: int, info: ValidationInfo) -> int:
        # Shorter, a check still running within its time limit would be shown as lost and could be started twice.
        limit = info.data.get("time_limit")
        if isinstance(limit, int) and minutes * 60 <= limit:
            raise ValueError(f"must be longer than VERIMED_TASK_TIME_LIMIT ({limit} s)")
        return minutes


class PubmedConfig(_Group):
    baseline_url: str = Field(
        "https://ftp.ncbi.nlm.nih.gov/pubmed/baseline/",
        validation_alias="VERIMED_PUBMED_BASELINE_URL",
        description="where `pubmed_sync` lists the baseline files",
    )
    updates_url: str = Field(
        "https://ftp.ncbi.nlm.nih.gov/pubmed/updatefiles/",
        validation_alias="VERIMED_PUBMED_UPDATES_URL",
        description="where `pubmed_sync` lists the daily update files",
    )
    keep_files: Flag = Field(
        False,
        validation_alias="VERIMED_PUBMED_KEEP_FILES",
        description="keep downloaded files; otherwise a file is deleted once indexed",
    )
    download_retries: int = Field(
        5,
        ge=1,
        validation_alias="VERIMED_PUBMED_DOWNLOAD_RETRIES",
        description="failed attempts per file in a row (a transfer that makes progress does not use one up)",
    )
    retry_backoff_seconds: float = Field(
        2.0,
        ge=0,
        validation_alias="VERIMED_PUBMED_RETRY_BACKOFF_SECONDS",
        description="the first wait after a failed attempt (doubling)",
    )
    updates_sync_hour: int = Field(
        3,
        ge=0,
        le=23,
        validation_alias="VERIMED_UPDATES_SYNC_HOUR",
        description="UTC hour of the daily updates sync (sent by `celery beat`)",
    )
    updates_sync_minute: int = Field(
        0, ge=0, le=59, validation_alias="VERIMED_UPDATES_SYNC_MINUTE", description="its minute"
    )


class EnginesConfig(_Group):
    lexical_backend: str = Field(
        "tantivy",
        validation_alias="VERIMED_LEXICAL_BACKEND",
        description="`tantivy` (embedded, under `VERIMED_INDEX_DIR`) or `opensearch`",
    )
    opensearch_url: str = Field(
        "http://127.0.0.1:9200", validation_alias="VERIMED_OPENSEARCH_URL", description="the OpenSearch server"
    )
    opensearch_index: str = Field(
        "verimed-articles",
        validation_alias="VERIMED_OPENSEARCH_INDEX",
        description="the OpenSearch index; its name gets the index generation as suffix",
    )
    vector_backend: str = Field(
        "qdrant_edge",
        validation_alias="VERIMED_VECTOR_BACKEND",
        description="`qdrant_edge` (Qdrant's engine in-process, one process owns it) or `qdrant` (qdrant-client)",
    )
    qdrant_url: str = Field(
        "http://127.0.0.1:6333",
        validation_alias="VERIMED_QDRANT_URL",
        description="a Qdrant server URL, or a folder / `:memory:` for qdrant-client's local mode",
    )
    qdrant_api_key: str | None = Field(
        None, validation_alias="VERIMED_QDRANT_API_KEY", description="the Qdrant server's API key"
    )
    qdrant_collection: str = Field(
        "verimed-chunks", validation_alias="VERIMED_QDRANT_COLLECTION", description="the Qdrant collection"
    )
    embedding_model: str = Field(
        "minilm",
        validation_alias="VERIMED_EMBEDDING_MODEL",
        description="the packaged all-MiniLM-L6-v2, or a sentence-transformers id/path (rebuild the index after a "
        "change)",
    )
    # onnx-int8 by default: 1.56x torch's speed on these CPUs, and on BioASQ dev the default hybrid search's MAP@10
    # was 0.3206 against torch's 0.3229 in the same session (within the 0.005 allowed; benchmarks/HISTORY.md). The
    # dense leg alone loses more (0.329 against 0.339): docker-compose keeps torch, whose GPU needs no int8.
    embedding_backend: str = Field(
        "onnx-int8",
        validation_alias="VERIMED_EMBEDDING_BACKEND",
        description="`onnx-int8` (exported once into the model cache; 1.56x torch's speed here, cosine 0.995 to "
        "torch), `onnx` or `torch`; rebuild the index after changing it; `fake` (hashed words) is for fast tests only",
    )
    torch_threads: int = Field(
        2, ge=1, validation_alias="VERIMED_TORCH_THREADS", description="CPU threads for the embedding and NLI models"
    )
    reranker_model: str = Field(
        str(BASE_DIR / "indexer" / "models" / "verimed-minilm-reranker"),
        validation_alias="VERIMED_RERANKER_MODEL",
        description="the reranker checkpoint (`manage.py train_reranker` makes one); the search setting `rerank` "
        "turns it on",
    )
    reranker_backend: Literal["torch", "onnx-int8"] = Field(
        "onnx-int8",
        validation_alias="VERIMED_RERANKER_BACKEND",
        description="`onnx-int8` (exported once into the model cache) or `torch`",
    )
    background_embedding: Flag = Field(
        True,
        validation_alias="VERIMED_BACKGROUND_EMBEDDING",
        description="index jobs leave embedding to the stack's background embedder (`manage.py embed_pending "
        "--follow`), so the embedded profile's single worker never holds questions behind it; `false` where "
        "workers on the `embed` queue embed each file themselves (docker-compose)",
    )
    background_embedding_poll_seconds: float = Field(
        5.0,
        gt=0,
        validation_alias="VERIMED_BACKGROUND_EMBEDDING_POLL_SECONDS",
        description="how often the stack's background embedder looks for newly stored articles",
    )


class LlmConfig(_Group):
    base_url: str = Field(
        "http://127.0.0.1:8081/v1",
        validation_alias="VERIMED_LLM_BASE_URL",
        description="OpenAI-compatible endpoint (llama.cpp, vLLM)",
    )
    model: str = Field(
        "qwen2.5-coder-1.5b-instruct",
        validation_alias="VERIMED_LLM_MODEL",
        description="served model name (`qwen2.5-coder-0.5b-instruct` is faster and weaker; install the "
        "`model-qwen05` extra)",
    )
    server_kind: ServerKind = Field(
        "llama.cpp",
        validation_alias="VERIMED_LLM_SERVER_KIND",
        description="`llama.cpp` or `vllm` (option names and the tokenizer endpoint differ); `fake` (no server: "
        "answers from the prompt's abstracts by word overlap) is for fast tests only",
    )
    api_key: str = Field("not-needed", validation_alias="VERIMED_LLM_API_KEY", description="the endpoint's API key")
    timeout_seconds: float = Field(
        300.0, gt=0, validation_alias="VERIMED_LLM_TIMEOUT_SECONDS", description="seconds one request may take"
    )
    max_retries: int = Field(
        2, ge=0, validation_alias="VERIMED_LLM_MAX_RETRIES", description="the client's retries of a failed request"
    )


class LimitsConfig(_Group):
    max_question_chars: int = Field(
        2000,
        ge=1,
        validation_alias="VERIMED_MAX_QUESTION_CHARS",
        description="the longest question accepted (the ask form, the API and `question_create` alike)",
    )
    questions_per_hour: int = Field(
        30,
        ge=0,
        validation_alias="VERIMED_QUESTIONS_PER_HOUR",
        description="questions one person may ask in any hour (0: no limit); past it the page and the API answer 429",
    )
    model_actions_per_hour: int = Field(
        60,
        ge=0,
        validation_alias="VERIMED_MODEL_ACTIONS_PER_HOUR",
        description="model work one person may start in any hour, each of these counting one: a question, a "
        "follow-up's rewrite, a deep check (or a run again), a re-check on request (0: no limit); past it the pages "
        "and the API answer 429",
    )
    max_queued_questions: int = Field(
        100,
        ge=0,
        validation_alias="VERIMED_MAX_QUEUED_QUESTIONS",
        description="questions, deep checks and library documents being indexed, queued or running at once, before "
        "new work (a question, a follow-up's rewrite, a deep check, a re-check, a library upload or indexing) is "
        'refused with "busy, try again" (0: no limit)',
    )
    upload_max_bytes: int = Field(
        200 * 1024 * 1024,
        ge=1,
        validation_alias="VERIMED_UPLOAD_MAX_BYTES",
        description="largest file an admin may upload to index, in bytes (200 MiB)",
    )
    library_file_max_bytes: int = Field(
        50 * 1024 * 1024,
        ge=1,
        validation_alias="VERIMED_LIBRARY_FILE_MAX_BYTES",
        description="largest paper a researcher may upload to their library, in bytes (50 MiB; a typeset article is "
        "a few MB)",
    )
    library_max_pages: int = Field(
        200,
        ge=1,
        validation_alias="VERIMED_LIBRARY_MAX_PAGES",
        description="most pages an uploaded PDF may have (a long review runs to 60; every page costs the worker time)",
    )
    library_max_documents: int = Field(
        500,
        ge=0,
        validation_alias="VERIMED_LIBRARY_MAX_DOCUMENTS",
        description="documents one researcher's library may hold (0: no limit)",
    )
    library_max_bytes: int = Field(
        1024 * 1024 * 1024,
        ge=0,
        validation_alias="VERIMED_LIBRARY_MAX_BYTES",
        description="bytes of files one researcher's library may hold, all documents together (1 GiB; 0: no limit)",
    )
    library_actions_per_hour: int = Field(
        30,
        ge=0,
        validation_alias="VERIMED_LIBRARY_ACTIONS_PER_HOUR",
        description="library work one researcher may start in any hour, each of these counting one: a file uploaded "
        "(read, whether kept or refused; the same file again is free), an indexing queued again (0: no limit); past "
        "it the page and the API answer 429",
    )
    login_failure_limit: int = Field(
        5,
        ge=0,
        validation_alias="VERIMED_LOGIN_FAILURE_LIMIT",
        description="wrong passwords in a row for one username from one address (page or API token) before that "
        "pair is refused with 429 (0: no limit)",
    )
    login_cooloff_minutes: int = Field(
        15,
        ge=0,
        validation_alias="VERIMED_LOGIN_COOLOFF_MINUTES",
        description="minutes a refused username and address wait; every try meanwhile starts the wait again",
    )
