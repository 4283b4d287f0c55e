"""The model reference (docs/model-reference.md), generated from the schema: every item type with
its parameters (type, default, description), the markers it takes and its output variables with
their columns. `mbserve reference` writes it; a test fails when the file is stale.

The columns are what the core writes: a small model that holds every item type, with a sensor for
each output variable of each item, is solved for one step, and its sensors' columns are read.
"""
from __future__ import annotations

import json
from typing import Any, Literal, get_origin

from pydantic import BaseModel

from . import schema as S
from .api import simulate
from .convenience import CONVENIENCE_ITEMS
from .field_docs import field_description
from .model import CONNECTOR_MARKERS, LOAD_MARKERS, MARKER_BODIES, MARKER_NODES
from .outputs import OUTPUT_VARIABLES, SENSOR_TARGETS, sensor_output_variables
from .settings import ALIASES
from .user_functions import SIGNATURES, arguments_text

COMMAND = "mbserve reference -o docs/model-reference.md"
LIST_TITLES = {"nodes": "Nodes", "objects": "Objects", "markers": "Markers", "loads": "Loads",
               "sensors": "Sensors", "motions": "Motions (Simbody's `Motion`, SPEC section 2)"}


def _zoo() -> dict:
    """One item of every type, each body held by its own joint or spring, and a sensor for every
    output variable of every item."""
    ep = lambda x: {"nodeType": "RigidBodyEP", "referenceCoordinates": [x, 0, 0, 1, 0, 0, 0]}  # noqa: E731
    inertia = [1e-3, 1e-3, 1e-3, 0, 0, 0]
    body = lambda node: {"objectType": "RigidBody", "nodeNumber": node, "mass": 1.0, "inertia": inertia}  # noqa: E731
    rigid = lambda b: {"markerType": "BodyRigid", "bodyNumber": b}  # noqa: E731
    nodes = [ep(0), ep(1), ep(2), ep(3), {"nodeType": "Point", "referenceCoordinates": [0, 1, 0]},
             {"nodeType": "PointGround"}, {"nodeType": "RigidBody2D", "referenceCoordinates": [0, -1, 0]},
             {"nodeType": "RigidBody2D", "referenceCoordinates": [1, -1, 0]},
             {"nodeType": "Point2D", "referenceCoordinates": [2, -1]},
             {"nodeType": "RigidBodyEP", "referenceCoordinates": [5, 0, 0.5, 1, 0, 0, 0]},
             {"nodeType": "RigidBodyRxyz", "referenceCoordinates": [6, 0, 0, 0, 0, 0]},
             {"nodeType": "RigidBodyRotVecLG", "referenceCoordinates": [7, 0, 0, 0, 0, 0]},
             {"nodeType": "GenericODE2", "numberOfODE2Coordinates": 2, "initialCoordinates": [0.1, 0]},
             {"nodeType": "GenericData", "numberOfDataCoordinates": 3},
             {"nodeType": "RigidBodyEP", "referenceCoordinates": [8, 0, 0.49, 1, 0, 0, 0]},
             {"nodeType": "RigidBody2D", "referenceCoordinates": [0, -3, 0]},
             {"nodeType": "RigidBody2D", "referenceCoordinates": [1, -3, 0], "initialVelocities": [0, 1, 0]}]
    objects = [{"objectType": "Ground"}, body(0), body(1), body(2), body(3),
               {"objectType": "MassPoint", "nodeNumber": 4, "mass": 1.0},
               {"objectType": "JointPrismaticX", "markerNumbers": [0, 1]},
               {"objectType": "JointRevoluteZ", "markerNumbers": [0, 2]},
               {"objectType": "JointSpherical", "markerNumbers": [0, 3]},
               {"objectType": "JointGeneric", "markerNumbers": [0, 4]},
               {"objectType": "ConnectorSpringDamper", "markerNumbers": [5, 6], "referenceLength": 1.0,
                "stiffness": 10.0},
               {"objectType": "ConnectorCartesianSpringDamper", "markerNumbers": [5, 6],
                "stiffness": [10.0, 10.0, 10.0]},
               {"objectType": "ConnectorCoordinateSpringDamper", "markerNumbers": [7, 8], "stiffness": 10.0},
               {"objectType": "ConnectorCoordinate", "markerNumbers": [9, 10]},
               {"objectType": "RigidBody2D", "nodeNumber": 6, "mass": 1.0, "inertia": 1e-3},
               {"objectType": "RigidBody2D", "nodeNumber": 7, "mass": 1.0, "inertia": 1e-3},
               {"objectType": "JointRevolute2D", "markerNumbers": [14, 15]},
               {"objectType": "JointPrismatic2D", "markerNumbers": [16, 17]},
               {"objectType": "MassPoint2D", "nodeNumber": 8, "mass": 1.0},
               {"objectType": "ConnectorCartesianSpringDamper", "markerNumbers": [5, 18],
                "stiffness": [10.0, 10.0, 10.0]},
               {"objectType": "ConnectorTorsionalSpringDamper", "markerNumbers": [0, 2], "stiffness": 10.0},
               {"objectType": "ConnectorDistance", "markerNumbers": [5, 6], "distance": 1.0},
               {"objectType": "ConnectorRigidBodySpringDamper", "markerNumbers": [0, 4],
                "stiffness": [[10.0 * (i == j) for j in range(6)] for i in range(6)]},
               body(9), {"objectType": "JointRollingDisc", "markerNumbers": [0, 19], "discRadius": 0.5},
               body(10), {"objectType": "JointSpherical", "markerNumbers": [0, 20]},
               body(11), {"objectType": "JointSpherical", "markerNumbers": [0, 21]},
               {"objectType": "GenericODE2", "nodeNumbers": [12], "massMatrix": [[1.0, 0.0], [0.0, 1.0]],
                "stiffnessMatrix": {"numberOfRows": 2, "numberOfColumns": 2, "triplets": [[0, 0, 10.0], [1, 1, 10.0]]},
                "forceVector": [0.0, 1.0]},
               body(14), {"objectType": "ConnectorRollingDiscPenalty", "markerNumbers": [0, 22], "nodeNumber": 13,
                          "discRadius": 0.5, "contactStiffness": 1e3, "dryFriction": [0.5, 0.5]},
               {"objectType": "BeamGeometricallyExact2D", "nodeNumbers": [15, 16], "length": 1.0,
                "massPerLength": 1.0, "crossSectionInertia": 1e-3, "bendingStiffness": 10.0, "axialStiffness": 100.0,
                "shearStiffness": 100.0}]
    markers = [rigid(0), rigid(1), rigid(2), rigid(3), rigid(4),
               {"markerType": "BodyPosition", "bodyNumber": 0, "localPosition": [0, 0, 0]},
               {"markerType": "BodyPosition", "bodyNumber": 5},
               {"markerType": "NodeCoordinate", "nodeNumber": 5, "coordinate": 0},
               {"markerType": "NodeCoordinate", "nodeNumber": 4, "coordinate": 0},
               {"markerType": "NodeCoordinate", "nodeNumber": 5, "coordinate": 2},
               {"markerType": "NodeCoordinate", "nodeNumber": 4, "coordinate": 2},
               {"markerType": "BodyMass", "bodyNumber": 1},
               {"markerType": "NodeRigid", "nodeNumber": 1},
               {"markerType": "NodePosition", "nodeNumber": 4},
               {"markerType": "BodyPosition", "bodyNumber": 0, "localPosition": [0, -1, 0]},
               {"markerType": "BodyPosition", "bodyNumber": 14}, rigid(14), rigid(15),
               {"markerType": "BodyPosition", "bodyNumber": 18}, rigid(23), rigid(25), rigid(27), rigid(30)]
    # a sphere in contact with the ground's sphere, its data node
    nodes += [{"nodeType": "RigidBodyEP", "referenceCoordinates": [9, 0, 0.19, 1, 0, 0, 0]},
              {"nodeType": "GenericData", "numberOfDataCoordinates": 4, "initialCoordinates": [-0.01, 0, 0, 0]}]
    objects += [body(len(nodes) - 2), {"objectType": "ContactSphereSphere", "markerNumbers": [len(markers),
                                                                                             len(markers) + 1],
                                       "nodeNumber": len(nodes) - 1, "spheresRadii": [0.1, 0.1],
                                       "contactStiffness": 1e3}]
    markers += [{"markerType": "BodyPosition", "bodyNumber": 0, "localPosition": [9, 0, 0]}, rigid(len(objects) - 2)]
    # a mass and a rotor on Node1D nodes, each on a coordinate spring to the ground point
    n1d, o1d, m1d = len(nodes), len(objects), len(markers)
    nodes += [{"nodeType": "1D", "referenceCoordinates": [0.1]}, {"nodeType": "1D", "initialVelocities": [1.0]}]
    objects += [{"objectType": "Mass1D", "nodeNumber": n1d, "mass": 1.0, "referencePosition": [0, 0, -5]},
                {"objectType": "RotationalMass1D", "nodeNumber": n1d + 1, "inertia": 1e-3,
                 "referencePosition": [1, 0, -5]},
                {"objectType": "ConnectorCoordinateSpringDamper", "markerNumbers": [7, m1d], "stiffness": 10.0},
                {"objectType": "ConnectorCoordinateSpringDamper", "markerNumbers": [7, m1d + 1], "stiffness": 10.0}]
    markers += [{"markerType": "NodeCoordinate", "nodeNumber": n1d, "coordinate": 0},
                {"markerType": "NodeCoordinate", "nodeNumber": n1d + 1, "coordinate": 0},
                {"markerType": "BodyPosition", "bodyNumber": o1d}, rigid(o1d + 1), {"markerType": "BodyMass",
                                                                                  "bodyNumber": o1d}]
    # a sphere touching a triangle on the ground, its data node
    nodes += [{"nodeType": "RigidBodyEP", "referenceCoordinates": [10.2, 0.2, 0.09, 1, 0, 0, 0]},
              {"nodeType": "GenericData", "numberOfDataCoordinates": 4, "initialCoordinates": [-0.01, 0, 0, 0]}]
    objects += [body(len(nodes) - 2), {"objectType": "ContactSphereTriangle", "markerNumbers": [len(markers),
                                                                                               len(markers) + 1],
                                       "nodeNumber": len(nodes) - 1, "sphereRadius": 0.1, "contactStiffness": 1e3,
                                       "trianglePoints": [[10, 0, 0], [11, 0, 0], [10, 1, 0]]}]
    markers += [{"markerType": "BodyPosition", "bodyNumber": len(objects) - 2}, rigid(0)]
    loads = [{"loadType": "ForceVector", "markerNumber": 6, "loadVector": [0, 1, 0]},
             {"loadType": "TorqueVector", "markerNumber": 2, "loadVector": [0, 0, 1]},
             {"loadType": "MassProportional", "markerNumber": 11, "loadVector": [1, 0, 0]},
             {"loadType": "Coordinate", "markerNumber": 8, "load": 1.0}]
    motions = [{"motionType": "Steady", "joint": 6, "u": 0.1}]
    doc = {"nodes": nodes, "objects": objects, "markers": markers, "loads": loads, "motions": motions,
           "simulationSettings": {"timeIntegration": {"endTime": 1e-3, "numberOfSteps": 1}}}
    type_key = {"Node": "nodeType", "Object": "objectType", "Marker": "markerType", "Load": "loadType",
                "Motion": "motionType"}
    sensors = []
    for sensor_type, key in type_key.items():
        ref, target = SENSOR_TARGETS[sensor_type]
        for i, item in enumerate(doc[target]):
            for var in OUTPUT_VARIABLES[target][item[key]]:
                sensor = {"sensorType": sensor_type, ref: i, "name": f"{target}{i}_{var}"}
                sensors.append(sensor if var == "_None" else {**sensor, "outputVariableType": var})
    doc["sensors"] = sensors
    return doc


def output_columns() -> dict[tuple[str, str], dict[str, list[str]]]:
    """(list, item type) -> output variable -> its columns after time, as the core writes them."""
    doc = _zoo()
    results = simulate(doc)
    if results.status != "succeeded":
        raise RuntimeError(f"the reference model failed: {results.error}")
    out: dict[tuple[str, str], dict[str, list[str]]] = {}
    for spec in doc["sensors"]:
        ref, target = SENSOR_TARGETS[spec["sensorType"]]
        item_type = doc[target][spec[ref]][S.TYPE_KEY[target]]
        series = results.sensors[spec["name"]]
        out.setdefault((target, item_type), {})[series.outputVariableType] = series.columns[1:]
    return out


def _type_text(schema: dict, defs: dict) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        fields = defs[name].get("properties", {})
        return "{" + ", ".join(fields) + "}"
    if "anyOf" in schema:
        parts = [_type_text(s, defs) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(dict.fromkeys(parts))
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return " \\| ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type", "any")
    if kind == "array":
        inner = _type_text(schema.get("items", {}), defs)
        low, high = schema.get("minItems"), schema.get("maxItems")
        if low is not None and low == high:
            return f"{low} × {inner}" if " " not in inner else f"{low} × ({inner})"
        return f"list of {inner}"
    return {"number": "number", "integer": "integer", "string": "string", "boolean": "boolean",
            "object": "object"}.get(kind, kind)


def _default_text(cls: type[BaseModel], name: str) -> str:
    field = cls.model_fields[name]
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    # Exudyn's "not set" for a reference or index: the user must give it (unless -1 is its only value)
    if (value == -1 or value == [-1, -1]) and get_origin(field.annotation) is not Literal:
        return "required"
    text = json.dumps(value.model_dump() if isinstance(value, BaseModel) else value)
    return f"`{text}`" if len(text) <= 60 else f"`{text[:57]}...`"


def _parameters(cls: type[BaseModel], type_key: str | None) -> list[str]:
    schema = cls.model_json_schema()
    defs = schema.get("$defs", {})
    rows = ["| parameter | type | default | description |", "| --- | --- | --- | --- |"]
    for name in cls.model_fields:
        if name in (type_key, "visualization"):
            continue
        prop = schema["properties"][name]
        description = (field_description(cls, name) or "").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{name}` | {_type_text(prop, defs)} | {_default_text(cls, name)} | {description} |")
    return rows


def _markers_text(kind: str, item_type: str) -> str | None:
    if kind == "objects" and item_type in CONNECTOR_MARKERS:
        allowed, _ = CONNECTOR_MARKERS[item_type]
        return f"`markerNumbers`: two markers of type {', '.join(f'`{t}`' for t in sorted(allowed))}"
    if kind == "loads" and item_type in LOAD_MARKERS:
        allowed, _ = LOAD_MARKERS[item_type]
        return f"`markerNumber`: a marker of type {', '.join(f'`{t}`' for t in sorted(allowed))}"
    if kind == "markers":
        if item_type in MARKER_BODIES:
            return f"`bodyNumber`: an object of type {', '.join(f'`{t}`' for t in sorted(MARKER_BODIES[item_type]))}"
        return f"`nodeNumber`: a node of type {', '.join(f'`{t}`' for t in sorted(MARKER_NODES[item_type]))}"
    return None


def _outputs_text(kind: str, item_type: str, columns: dict) -> list[str]:
    found = columns.get((kind, item_type), {})
    variables = OUTPUT_VARIABLES.get(kind, {}).get(item_type, ())
    if not variables:
        return []
    if variables == ("_None",):
        cols = ", ".join(f"`{c}`" for c in found.get("_None", []))
        return [f"A `Load` sensor (no `outputVariableType`) gives the load's vector: time, {cols}.", ""]
    rows = ["| output variable | columns after `time` |", "| --- | --- |"]
    for var in variables:
        cols = found.get(var, [])
        shown = ", ".join(f"`{c}`" for c in cols) if len(cols) <= 9 else \
            f"`{cols[0]}` … `{cols[-1]}` ({len(cols)} values, row by row)"
        rows.append(f"| `{var}` | {shown} |")
    return rows + [""]


def _item_section(kind: str, item_type: str, cls: type[BaseModel], columns: dict) -> list[str]:
    type_key = S.TYPE_KEY[kind]
    lines = [f"### `{item_type}`", ""]
    if cls.__doc__ and cls.__doc__ is not BaseModel.__doc__ and not cls.__doc__.startswith(cls.__name__ + "("):
        lines += [" ".join(cls.__doc__.split()), ""]
    lines += [f"`{{\"{type_key}\": \"{item_type}\", ...}}`", ""]
    markers = _markers_text(kind, item_type)
    if markers:
        lines += [f"{'Attached to' if kind == 'markers' else 'Markers'}: {markers}.", ""]
    lines += _parameters(cls, type_key) + [""]
    outputs = _outputs_text(kind, item_type, columns)
    if outputs and kind != "sensors":
        lines += ["Output variables (sensors of this item):", ""] + outputs
    return lines


def model_reference() -> str:
    """The text of docs/model-reference.md."""
    columns = output_columns()
    lines = ["# Model reference", "",
             f"Generated from the schema (`multibody/schema.py`) by `{COMMAND}`; do not edit by hand.",
             "A model document (SPEC section 1) holds the lists below; an item is referenced by its index",
             "in its list or by its `name`. Every item also takes `name` and visualization keys (`Vshow`,",
             "`Vcolor`, ...: kept for drawing, not checked). Parameter names and defaults are Exudyn 1.13.6's;",
             "a number is a JSON number (a string such as `\"1.0\"` is an error).", ""]
    for kind, title in LIST_TITLES.items():
        lines += [f"## {title}", ""]
        if kind == "sensors":
            lines += ["The output variables a sensor can ask for are those of the item it reads (listed with",
                      "each item type). Enums are given by name; `\"OutputVariableType.Position\"` works too.", ""]
        for item_type, cls in S.ITEM_TYPES[kind].items():
            lines += _item_section(kind, item_type, cls, columns)
            if kind == "sensors" and item_type in ("Node", "Object", "Body", "Marker"):
                lines += ["`outputVariableType`: one of " + ", ".join(
                    f"`{v}`" for v in sensor_output_variables(item_type)) + ".", ""]
    lines += _user_functions_section()
    lines += ["## Convenience items (Exudyn's `mbs.Create...`)", "",
              "Given in `objects`, expanded at load time into the items Exudyn's helper creates",
              "(`mbserve validate --expanded` shows the result).", ""]
    for item_type, cls in CONVENIENCE_ITEMS.items():
        lines += _item_section("objects", item_type, cls, {})
    lines += ["## Simulation settings", "",
              "`simulationSettings` takes Exudyn 1.13.6's `SimulationSettings` as nested names, with its",
              "defaults; an unknown name is an error. These other names (those SPEC section 4 uses) are accepted for",
              "the same values; give one of the two:", "",
              "| name | same as |", "| --- | --- |"]
    lines += [f"| `{alias}` | `{key}` |" for alias, key in ALIASES.items()]
    lines += ["", "`linearSolver.ignoreSingularJacobian` (as Exudyn's, which honours it in its dense LU only): the",
              "implicit dynamic solvers skip the redundant-constraint check and solve with a singular Newton matrix",
              "(redundant constraints) in their dense LU, up to 1000 unknowns; a redundant joint's force is then",
              "one of many that hold the motion (Exudyn's FullPivLU picks another)."]
    return "\n".join(lines).rstrip() + "\n"


def _user_functions_section() -> list[str]:
    lines = ["## User functions and parameters", "",
             "A `...UserFunction` parameter holds 0 (none) or, instead of Exudyn's Python function, an expression",
             "in the language of the motions (numbers, `pi`, `e`, + - * / **, sin, cos, exp, log, sqrt, abs, min,",
             "max, `a if condition else b`, ...): a string for a scalar result, a list of 3 strings for a vector.",
             "Its names are `t`, the function's arguments under Exudyn's names (a vector's elements by constant",
             "indices, `loadVector[1]`; `mbs` is not available) and the document's `parameters`:",
             "`\"parameters\": {\"omega\": 7.0}` defines named constants for every expression, user functions and",
             "motion laws alike (a sweep may vary `parameters.omega`). It is compiled once per model and evaluated",
             "in the compiled solvers; the Newton matrix takes its exact (symbolic) derivatives. A Python user",
             "function in a model exported from Exudyn (`mbserve.exudyn.export`) is an error that shows this form;",
             "`export(mbs, settings, user_functions=\"translate\")` writes it in this form where it has one (read from",
             "its source, its numeric globals as `parameters`, checked against the Python function at sample",
             "arguments to 1e-12) and keeps the error, with the reason, where not.",
             "", "| item | parameter | arguments | result | example |", "| --- | --- | --- | --- | --- |"]
    for (_, item_type, name), sig in SIGNATURES.items():
        result = "string" if not sig.result else f"list of {sig.result[0]} strings"
        arguments = ", ".join(f"`{a}`" for a in arguments_text(sig).split(", "))
        lines.append(f"| `{item_type}` | `{name}` | {arguments} | {result} | `{json.dumps(sig.example)}` |")
    return lines + ["", "`itemNumber` is the item's index. A load's user function replaces its vector and is not scaled "
                        "by the static solver's load factor (as in Exudyn); `t` is then the load step's time.", ""]


def document_json_schema(ref_template: str = "#/$defs/{model}") -> dict[str, Any]:
    """The model document's JSON schema, each sensor kind's `outputVariableType` an enum of the
    output variables of the items it can read."""
    schema = S.ModelDocument.model_json_schema(ref_template=ref_template)
    for sensor_type, cls in S.ITEM_TYPES["sensors"].items():
        prop = schema["$defs"][cls.__name__]["properties"].get("outputVariableType")
        if prop is not None and sensor_type in ("Node", "Object", "Body", "Marker"):
            prop["enum"] = list(sensor_output_variables(sensor_type))
    return schema
