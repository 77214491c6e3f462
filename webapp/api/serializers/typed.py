"""Serializers derived from the typed payloads of webapp/qa/payloads.py: one field per key, in order, its kind from
the key's type and its words and rules from the key's `Doc`. A nested payload becomes a nested serializer named after
it (CitationVerdictPayload: CitationVerdictSerializer, the schema's CitationVerdict)."""

from __future__ import annotations

import copy
import types
from functools import cache
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints, is_typeddict

from rest_framework import serializers

from webapp.qa.payloads import Doc

_SCALARS: dict[Any, type[serializers.Field]] = {
    int: serializers.IntegerField,
    float: serializers.FloatField,
    str: serializers.CharField,
    bool: serializers.BooleanField,
}
_FORMS: dict[str, type[serializers.Field]] = {"url": serializers.URLField, "date-time": serializers.DateTimeField}


def payload_serializer_class(
    payload: type, *, name: str = "", extra: dict[str, serializers.Field] | None = None
) -> type[serializers.Serializer]:
    """A serializer class describing `payload` (a TypedDict), named `name` (by default after the payload), with the
    `extra` fields after the payload's own."""
    fields: dict[str, Any] = {key: _field(hint) for key, hint in get_type_hints(payload, include_extras=True).items()}
    # DRF orders fields by when they were made: copies made now come after the payload's own.
    fields |= {key: copy.deepcopy(field) for key, field in (extra or {}).items()}
    class_name = name or payload.__name__.removesuffix("Payload") + "Serializer"
    return type(class_name, (serializers.Serializer,), {**fields, "__module__": __name__, "__doc__": payload.__doc__})


@cache
def _nested(payload: type) -> type[serializers.Serializer]:
    return payload_serializer_class(payload)


def _field(hint: Any) -> serializers.Field:
    doc = Doc()
    if get_origin(hint) is Annotated:
        hint, doc = get_args(hint)[:2]
    options: dict[str, Any] = {}
    if get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint):
        options["allow_null"] = True
        (hint,) = [arg for arg in get_args(hint) if arg is not type(None)]
    if doc.help_text:
        options["help_text"] = doc.help_text
    if is_typeddict(hint):
        return _nested(hint)(**options)
    if get_origin(hint) is list:
        (item,) = get_args(hint)
        if is_typeddict(item):
            return _nested(item)(many=True, **options)
        bounds = {"min_length": doc.min_length, "max_length": doc.max_length}
        return serializers.ListField(
            child=_field(item), **options, **{k: v for k, v in bounds.items() if v is not None}
        )
    if get_origin(hint) is dict:
        value = get_args(hint)[1]
        return (
            serializers.DictField(**options) if value is Any else serializers.DictField(child=_field(value), **options)
        )
    if doc.choices is not None:
        return serializers.ChoiceField(choices=list(doc.choices), **options)
    if doc.allow_blank:
        options["allow_blank"] = True
    if doc.min_value is not None:
        options["min_value"] = doc.min_value
    return (_FORMS[doc.form] if doc.form else _SCALARS[hint])(**options)
