"""Every variation of a sweep checked before anything is queued: the base document with each
parameter's value at its path.

The quick way, when every parameter addresses a number (or a list of numbers) of a node, object,
marker, load or sensor (`objects[3].stiffness`, `loads[0].loadVector[1]`): the base document is
valid, so a variation can only break the schema of the items it changes, which is checked once
per distinct set of an item's values; the core's checks across items (references, a positive
mass) run on the base and on the variations with each parameter's smallest and largest value.
Anything else, or any problem found so, and every variation goes through the core's whole
validation, which names each invalid variation and path (422 `sweep_invalid`).
"""
from __future__ import annotations

import copy
import json
from collections import defaultdict
from typing import Annotated, Any, get_args, get_origin

import multibody
from multibody import schema as S
from pydantic import ValidationError

from store import design
from store.config import Settings

from .errors import ApiError, join_path
from .limits import check_model, expression_limits

MAX_PROBLEMS = 100  # listed in a 422; the message counts them all
ITEM_KINDS = ("nodes", "objects", "markers", "loads", "sensors")  # motions: their laws are checked by the core


def _numbers(annotation: Any, depth: int) -> bool:
    """Whether `depth` list indices into a field of this type reach a float."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if depth == 0:
        return annotation is float
    return get_origin(annotation) is list and _numbers(get_args(annotation)[0], depth - 1)


def item_field(doc: dict, path: str) -> tuple[str, int, list] | None:
    """(kind, index, path inside the item) when a canonical path addresses a number of an item."""
    parts = design.parse_path(path)
    if len(parts) < 3 or parts[0] not in ITEM_KINDS or not isinstance(parts[1], int) or \
            not isinstance(parts[2], str) or not all(isinstance(p, int) for p in parts[3:]):
        return None
    item = doc[parts[0]][parts[1]]
    cls = S.ITEM_TYPES[parts[0]].get(item.get(S.TYPE_KEY[parts[0]])) if isinstance(item, dict) else None
    field = cls.model_fields.get(parts[2]) if cls is not None else None
    if field is None or not _numbers(field.annotation, len(parts) - 3):
        return None
    return parts[0], parts[1], parts[2:]


def _set(node: Any, parts: list, value: Any) -> None:
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value


def _all_valid(doc: dict, paths: list[str], rows: list[tuple], settings: Settings) -> bool:
    """The quick check (module docstring): True when every variation is valid, False when a
    parameter is not an item's number or a problem was found."""
    fields = [item_field(doc, p) for p in paths]
    if any(f is None for f in fields):
        return False
    try:  # the service's limits (steps, rows) do not depend on an item's numbers
        check_model(doc, settings)
    except ApiError:
        return False
    by_item: dict[tuple[str, int], list[int]] = defaultdict(list)
    for k, (kind, index, _) in enumerate(fields):
        by_item[kind, index].append(k)
    for (kind, index), ks in by_item.items():
        item = doc[kind][index]
        cls = S.ITEM_TYPES[kind][item[S.TYPE_KEY[kind]]]
        seen = set()
        for values in rows:
            key = tuple((type(values[k]), values[k]) for k in ks)  # 1 and True are not one value
            try:
                if key in seen:
                    continue
            except TypeError:  # a list where a number belongs
                return False
            seen.add(key)
            changed = {**item, **{fields[k][2][0]: copy.deepcopy(item[fields[k][2][0]]) for k in ks}}
            for k in ks:
                _set(changed, fields[k][2], values[k])
            try:
                cls.model_validate(changed)
            except ValidationError:
                return False
    # numbers now (the schema took them): the corners of the design for the core's own checks
    corners = {0}
    for k in range(len(paths)):
        column = [r[k] for r in rows]
        corners.update((column.index(min(column)), column.index(max(column))))
    limits = expression_limits(settings)
    return all(multibody.validate_document(doc_i, limits).ok
               for doc_i in design.variations(doc, paths, [rows[i] for i in sorted(corners)]))


def _each(doc: dict, spec: design.SweepSpec, paths: list[str], rows: list[tuple], settings: Settings) -> list[tuple]:
    """The core's whole validation of every variation: (document, validation) of each, or 422
    `sweep_invalid` naming each invalid one (its index, values, and problems under variations[i])."""
    out, problems, invalid = [], [], 0
    limits = expression_limits(settings)
    for i, (values, doc_i) in enumerate(zip(rows, design.variations(doc, paths, rows))):
        where = f"variations[{i}]"
        said = ", ".join(f"{p.path} = {json.dumps(v)}" for p, v in zip(spec.parameters, values))
        found = []
        try:
            check_model(doc_i, settings, prefix=where)
            validation = multibody.validate_document(doc_i, limits)
            found = [{"path": join_path(where, p.path), "message": p.message, "item": p.item}
                     for p in validation.problems]
        except ApiError as exc:
            found = exc.problems
        if found:
            invalid += 1
            problems.extend({**p, "variation": i, "message": f"variation {i} ({said}): {p['message']}"}
                            for p in found)
            continue
        out.append((doc_i, validation))
    if invalid:
        raise ApiError(422, "sweep_invalid", f"{invalid} of {len(rows)} variations are invalid; nothing was queued",
                       problems[:MAX_PROBLEMS])
    return out


def checked(doc: dict, spec: design.SweepSpec, paths: list[str], rows: list[tuple], settings: Settings,
            base: multibody.Validation) -> list[tuple]:
    """(document, validation) of every variation (`base`: the valid base document's validation,
    which a variation of an item's numbers shares), or 422 `sweep_invalid`."""
    if base.ok and _all_valid(doc, paths, rows, settings):
        return [(doc_i, base) for doc_i in design.variations(doc, paths, rows)]
    return _each(doc, spec, paths, rows, settings)
