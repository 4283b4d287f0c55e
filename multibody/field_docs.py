"""Field descriptions from attribute docstrings (the string after a field), read when a document
shows them (the model reference, the JSON schema) instead of when the schema classes are made.

pydantic's use_attribute_docstrings reads the source of every class as it is created: 0.1-0.4 s of
every process that imports the core, most of the cold start of `mbserve run` on a small model.
Here the schema classes name `json_schema_extra=add_descriptions` in their config instead; their
JSON schema gets the same descriptions, at the same places, as use_attribute_docstrings gave.
"""
from __future__ import annotations

import ast
import functools
import inspect
import sys
from typing import Any


@functools.cache
def _module_docstrings(module: str) -> dict[str, dict[str, str]]:
    """class qualname -> {field: docstring} of a module's classes, from one parse of its source;
    as pydantic reads them: a string statement right after an annotated name, in the class's own body."""
    found: dict[str, dict[str, str]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if not isinstance(node, ast.ClassDef):
                continue
            docs = found[prefix + node.name] = {}
            for before, stmt in zip(node.body, node.body[1:]):
                if (isinstance(before, ast.AnnAssign) and isinstance(before.target, ast.Name)
                        and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                        and isinstance(stmt.value.value, str)):
                    docs[before.target.id] = inspect.cleandoc(stmt.value.value)
            visit(node.body, prefix + node.name + ".")

    try:
        source = inspect.getsource(sys.modules[module])
    except (OSError, TypeError):  # no source (as pydantic: then no descriptions)
        return found
    visit(ast.parse(source).body, "")
    return found


def field_description(cls: type, name: str) -> str | None:
    """The description of field `name` of a pydantic class: its Field(description=...), else the
    docstring after it in the class that annotates it last (inherited fields keep their base's)."""
    field = cls.model_fields[name]
    if field.description is not None:
        return field.description
    owner = next(c for c in cls.__mro__ if name in vars(c).get("__annotations__", {}))
    return _module_docstrings(owner.__module__).get(owner.__qualname__, {}).get(name)


def add_descriptions(schema: dict[str, Any], cls: type) -> None:
    """pydantic's json_schema_extra hook: the fields' descriptions into the class's JSON schema."""
    properties = schema.get("properties", {})
    for name, field in cls.model_fields.items():
        if field.description is None and name in properties:  # else pydantic has written it
            description = field_description(cls, name)
            if description is not None:
                properties[name]["description"] = description
