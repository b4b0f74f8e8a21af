"""Checks tool arguments against the JSON schemas the tools publish (the subset they use).

The schema a model sees is the one the dispatcher enforces: there is no second, hand-written
validation that could drift from it. Supported keywords: ``type`` (object, string, integer,
number, boolean, array), ``properties``, ``required``, ``additionalProperties: false``,
``enum``, ``minLength``/``maxLength``, ``minimum``/``maximum``, ``items``, ``maxItems``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kenning.errors import InvalidInput

__all__ = ["check_arguments", "closed_object"]


def closed_object(properties: Mapping[str, Any], *required: str) -> dict[str, Any]:
    """The schema of a JSON object of these *properties* and no other, the *required* ones
    always given: what every tool's arguments are.

    >>> closed_object({"key": {"type": "string"}}, "key")["required"]
    ['key']
    """
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
}


def _check(value: Any, schema: Mapping[str, Any], where: str) -> None:
    kind = schema.get("type")
    if kind is not None:
        expected = _TYPES[kind]
        is_bool = isinstance(value, bool)
        if not isinstance(value, expected) or (is_bool and kind != "boolean"):
            raise InvalidInput(f"{where} must be of type {kind}, not {type(value).__name__}")
    if "enum" in schema and value not in schema["enum"]:
        raise InvalidInput(f"{where} must be one of {list(schema['enum'])}, not {value!r:.60}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            raise InvalidInput(f"{where} must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise InvalidInput(f"{where} must have at most {schema['maxLength']} characters")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise InvalidInput(f"{where} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise InvalidInput(f"{where} must be at most {schema['maximum']}")
    if isinstance(value, list | tuple):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise InvalidInput(f"{where} must have at most {schema['maxItems']} items")
        for i, item in enumerate(value):
            _check(item, schema.get("items", {}), f"{where}[{i}]")
    if isinstance(value, dict):
        _check_object(value, schema, where)


def _check_object(value: Mapping[str, Any], schema: Mapping[str, Any], where: str) -> None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", ()) if k not in value]
    if missing:
        raise InvalidInput(f"{where} is missing required argument(s) {missing}")
    if schema.get("additionalProperties") is False:
        extra = sorted(k for k in value if k not in properties)
        if extra:
            raise InvalidInput(
                f"{where} has unknown argument(s) {extra[:5]}; allowed: {sorted(properties)}"
            )
    for key, item in value.items():
        if key in properties and item is not None:
            _check(item, properties[key], f"{where}.{key}")


def check_arguments(arguments: object, schema: Mapping[str, Any], *, tool: str) -> dict[str, Any]:
    """Return *arguments* as a dict if they satisfy *schema*; raise ``InvalidInput`` naming
    the argument and what it must be otherwise. ``null`` counts as an omitted argument."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidInput(f"the arguments of {tool} must be a JSON object")
    _check(arguments, schema, tool)
    return {k: v for k, v in arguments.items() if v is not None}
