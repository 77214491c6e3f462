"""What the generated OpenAPI schema learns after drf-spectacular has read the views (a POSTPROCESSING_HOOKS entry).

Two things no single view can say: the answers DRF gives every view alike (no token, a caller without the role, a
body in a media type no parser reads, a body or query that does not parse or validate), written once here rather than
in each view's `extend_schema`; and
the links between operations (a created question's id is the path of its result, its cancel, its watch...), which
clients and the schema fuzzer (tests/webapp/api/test_schema_fuzz.py) follow.
"""

from __future__ import annotations

from typing import Any

_DETAIL = {"application/json": {"schema": {"$ref": "#/components/schemas/Detail"}}}
_VALIDATION_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ValidationError"}}}

# DRF's 400 body: each field's messages under its name (a nested object's or a list item's under theirs, all the
# way down), the request's as a whole under `non_field_errors`; a body that does not parse gets `detail` alone.
VALIDATION_ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Field name → list of messages (`non_field_errors` for the whole request; a nested field's or a "
    "list item's messages under its own name or index); `detail` alone when the body does not parse.",
    "minProperties": 1,
    "additionalProperties": {
        "anyOf": [
            {"type": "string"},
            {"type": "array", "items": {"type": "string"}, "minItems": 1},
            {"type": "object"},
        ]
    },
}

_UNAUTHENTICATED = "No token (or session) was sent, or not a valid one."
_NO_ROLE = "Signed in without the researcher role (every role includes it)."
_UNSUPPORTED_MEDIA_TYPE = "The body's Content-Type is none of those listed, or missing."


def _link(operation_id: str, description: str, **parameters: str) -> dict[str, Any]:
    return {
        "operationId": operation_id,
        "description": description,
        **({"parameters": parameters} if parameters else {}),
    }


def _question_links(expression: str) -> dict[str, dict[str, Any]]:
    """Everything done to one question, from where its id was read."""
    return {
        "GetQuestion": _link("questions_retrieve", "Its status and result.", question_id=expression),
        "CancelQuestion": _link("questions_cancel_create", "Stop it.", question_id=expression),
        "WatchQuestion": _link("questions_watch_create", "Watch it (once answered).", question_id=expression),
        "UnwatchQuestion": _link("questions_watch_destroy", "Stop watching it.", question_id=expression),
        "DeepCheckQuestion": _link("questions_deep_check_create", "Deep-check it.", question_id=expression),
        "GetDeepCheck": _link("questions_deep_check_retrieve", "Its deep check.", question_id=expression),
        "StopDeepCheck": _link("questions_deep_check_stop_create", "Stop its deep check.", question_id=expression),
    }


# (path, method, status) → the links of that response.
LINKS: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {
    ("/api/v1/questions", "post", "201"): _question_links("$response.body#/id"),
    ("/api/v1/questions", "get", "200"): _question_links("$response.body#/results/0/id"),
    ("/api/v1/questions/{question_id}", "get", "200"): {
        "GetRetrievedArticle": _link(
            "articles_retrieve", "The first paper it retrieved.", pmid="$response.body#/retrieved/0/pmid"
        ),
        "FlagFirstSentence": {
            **_link("flags_create", "Flag its first sentence (once answered)."),
            "requestBody": {"question": "$response.body#/id", "sentence": 0},
        },
    },
    ("/api/v1/questions/{question_id}/deep-check", "post", "202"): {
        "GetDeepCheck": _link(
            "questions_deep_check_retrieve", "Its progress and tree.", question_id="$request.path.question_id"
        ),
        "StopDeepCheck": _link("questions_deep_check_stop_create", "Stop it.", question_id="$request.path.question_id"),
    },
    ("/api/v1/documents", "post", "201"): {
        "GetDocument": _link(
            "documents_retrieve",
            "The first file's document, with its passages.",
            document_id="$response.body#/results/0/document/id",
        ),
        "DeleteDocument": _link("documents_destroy", "Delete it.", document_id="$response.body#/results/0/document/id"),
    },
    ("/api/v1/flags", "post", "201"): {
        "GetFlag": _link("flags_retrieve", "The flag as stored.", flag_id="$response.body#/id"),
    },
    ("/api/v1/flags", "get", "200"): {
        "GetFlag": _link("flags_retrieve", "The newest flag.", flag_id="$response.body#/results/0/id"),
    },
}


def _shared_responses(operation: dict[str, Any]) -> None:
    responses: dict[str, Any] = operation["responses"]
    if operation.get("security"):
        responses.setdefault("401", {"content": _DETAIL, "description": _UNAUTHENTICATED})
        if "403" in responses:
            responses["403"]["description"] += f" Or: {_NO_ROLE[0].lower()}{_NO_ROLE[1:]}"
        else:
            responses["403"] = {"content": _DETAIL, "description": _NO_ROLE}
    takes_input = "requestBody" in operation or any(p["in"] == "query" for p in operation.get("parameters", ()))
    if "requestBody" in operation:
        responses.setdefault("415", {"content": _DETAIL, "description": _UNSUPPORTED_MEDIA_TYPE})
    if takes_input or "400" in responses:
        given = responses.get("400", {})  # a view's own 400 keeps its body and words; common.INVALID has no body
        responses["400"] = {
            "content": given.get("content", _VALIDATION_ERROR),
            "description": given.get("description") or VALIDATION_ERROR_SCHEMA["description"],
        }
    operation["responses"] = dict(sorted(responses.items()))


def postprocess_shared_responses_and_links(
    result: dict[str, Any], generator: object, request: object, public: bool
) -> dict[str, Any]:
    schemas = {**result["components"]["schemas"], "ValidationError": VALIDATION_ERROR_SCHEMA}
    result["components"]["schemas"] = dict(sorted(schemas.items()))
    for path, methods in result["paths"].items():
        for method, operation in methods.items():
            _shared_responses(operation)
            for (link_path, link_method, status), links in LINKS.items():
                if (link_path, link_method) == (path, method):
                    operation["responses"][status]["links"] = links
    return result
