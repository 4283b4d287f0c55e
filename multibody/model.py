"""From a model document to a checked, reference-resolved model (all problems at once).

`load_model(doc)` validates the document with the schema, resolves every reference (index or
name) and checks what each reference must point at, then compiles the numeric model.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from pydantic import ValidationError

from . import programs as P
from . import schema as S
from . import settings as settings_mod
from .capabilities import SUPPORTED_DYNAMIC, data_coordinate_problems, explicit_solver_problems, lie_group_problems
from .convenience import expand_convenience
from .items import BODY_NODES, CONNECTOR_MARKERS, DATA_COORDINATES, MARKER_BODIES, MOTION_JOINTS, OBJECT_TYPES
from .items.declaration import COORDINATE_MARKERS, POSITION_MARKERS, RIGID_MARKERS
from .limits import json_shape
from .motions import BASE_FIELD, EXPRESSION_FIELDS, MotionError, undefined_on_grid
from .outputs import check_sensor_outputs
from .schema_problems import invalid_items, schema_problems
from .system import System
from .values import ExpressionLimits, ModelInvalid, Problem, SimulationCanceled, did_you_mean

TIME_CHECKS = 10_000  # at most this many intervals of the time span, where each law of t is evaluated

# what a reference must point at: item type names, per list (objects: from the item declarations)
LOAD_MARKERS = {
    "ForceVector": (POSITION_MARKERS, "a position marker"),
    "TorqueVector": (RIGID_MARKERS, "a rigid-body marker (BodyRigid, NodeRigid)"),
    "MassProportional": ({"BodyMass"}, "a BodyMass marker"),
    "Coordinate": (COORDINATE_MARKERS, "a NodeCoordinate marker"),
}
_RIGID_NODES = {"RigidBodyEP", "RigidBodyRxyz", "RigidBodyRotVecLG", "RigidBody2D"}
# marker type -> nodes (NodeRigid on a ground point: Exudyn's fixed frame, its rotation the identity)
MARKER_NODES = {"NodeRigid": _RIGID_NODES | {"PointGround"},
                "NodePosition": _RIGID_NODES | {"Point", "PointGround", "Point2D", "Point2DSlope1"},
                "NodeCoordinate": _RIGID_NODES | {"Point", "PointGround", "Point2D", "Point2DSlope1", "GenericODE2",
                                                  "1D"}}
USER_FUNCTION_FIELDS = ("loadVectorUserFunction", "loadUserFunction", "springForceUserFunction")


def build_motion_law(spec, path: str, name: str, budget=None, parameters=None):
    """motion_laws.build_motion_law, imported at the first motion: sympy only for a document with
    expressions."""
    from .motion_laws import build_motion_law as build
    return build(spec, path, name, budget, parameters)


def compile_user_functions(doc, budget):
    """user_function_programs.compile_user_functions, imported at the first user function (sympy)."""
    from .user_function_programs import compile_user_functions as compile_
    return compile_(doc, budget)


@functools.cache
def has_field(cls: type, name: str) -> bool:
    """Whether a schema class has a field (hasattr on a pydantic model is slow when it fails)."""
    return name in cls.model_fields


def item_type(item: Any) -> str:
    for key in ("nodeType", "objectType", "markerType", "loadType", "sensorType", "motionType"):
        if has_field(type(item), key):
            return getattr(item, key)
    raise AssertionError(item)


@dataclass
class LoadedModel:
    """A valid model document, its references resolved to indices, and its compiled form."""
    document: S.ModelDocument
    settings: dict
    names: dict[str, list[str]]  # list kind -> item names (defaults filled in)
    refs: dict[tuple[str, int, str], Any]  # (list, index, field) -> resolved index / list of indices
    motions: list  # compiled motion laws (multibody.motions)
    user_functions: Any = None  # user_function_programs.UserFunctions, None without any
    warnings: list[dict] = field(default_factory=list)
    expanded_document: dict | None = None
    _system: Any = None

    def ref(self, kind: str, index: int, fieldname: str):
        return self.refs[(kind, index, fieldname)]

    @property
    def system(self):
        if self._system is None:
            self._system = System(self)
        return self._system

    def summary(self) -> dict:
        doc = self.document
        return {"name": doc.name, "nodes": len(doc.nodes), "objects": len(doc.objects),
                "markers": len(doc.markers), "loads": len(doc.loads), "sensors": len(doc.sensors),
                "motions": len(doc.motions), "solve": doc.solve.model_dump(),
                "coordinates": sum(S.node_coordinates(n) for n in doc.nodes)}


def _raw_item_name(doc: dict, kind: str, index: int) -> str:
    try:
        name = doc[kind][index].get("name")
    except (KeyError, IndexError, TypeError, AttributeError):
        name = None
    return name if isinstance(name, str) and name else f"{S.LIST_KINDS[kind]}{index}"


def _item_index(path: str, kind: str) -> int | None:
    """i for a path inside kind[i] (kind[i], kind[i].key, kind[i][j]), else None."""
    head = path.partition(".")[0]
    prefix = f"{kind}["
    if not head.startswith(prefix):
        return None
    index = head[len(prefix):].partition("]")[0]
    return int(index) if index.isdigit() else None


def _valid_part(expanded: dict, exc: ValidationError) -> tuple[S.ModelDocument, set[str]] | None:
    """The document without what has schema problems, so that the references of the rest are
    checked too: an item with problems is None at its index (indices stay the user's), a broken
    top-level key takes its default. Also the lists that could not be read at all."""
    bad_items, bad_top = invalid_items(exc)
    kept = {k: v for k, v in expanded.items() if k not in bad_top}
    for kind in S.LIST_KINDS:
        if isinstance(kept.get(kind), list):
            kept[kind] = [it for i, it in enumerate(kept[kind]) if (kind, i) not in bad_items]
    try:
        doc = S.ModelDocument.model_validate(kept)
    except ValidationError:
        return None
    for kind in S.LIST_KINDS:
        if isinstance(kept.get(kind), list):
            valid = iter(getattr(doc, kind))
            setattr(doc, kind, [None if (kind, i) in bad_items else next(valid) for i in range(len(expanded[kind]))])
    return doc, bad_top & set(S.LIST_KINDS)


def load_model(raw: Any, limits: ExpressionLimits | None = None,
               cancel: Callable[[], bool] | None = None) -> LoadedModel:
    """The checked model of a document; ModelInvalid listing every problem. `limits`: what its
    expressions may ask for (ExpressionLimits' defaults when None); SimulationCanceled between
    stages once `cancel()` is true (the API's client went away: its validation stops)."""
    if not isinstance(raw, dict):
        raise ModelInvalid([Problem("$", "a model document must be a JSON object")])
    shape = json_shape(raw)
    if shape.too_deep or shape.early:  # before recursive code, float() or an encoder reads the document
        raise ModelInvalid(([shape.too_deep] if shape.too_deep else []) + shape.values)
    try:
        loaded = _load(raw, limits, cancel)
    except ModelInvalid as exc:  # the schema also refuses non-finite numbers where it types them
        seen = {p.path for p in exc.problems}
        raise ModelInvalid(exc.problems + [p for p in shape.values if p.path not in seen]) from None
    if shape.values:  # in visualization (V*) keys and other untyped places
        raise ModelInvalid(shape.values)
    return loaded


def _load(raw: dict, limits: ExpressionLimits | None, cancel: Callable[[], bool] | None) -> LoadedModel:
    # each convenience item becomes the object at its own index (extra items are appended), so the
    # paths of the expanded document are the user's
    expanded, convenience, deprecations, failed = expand_convenience(raw)
    try:
        doc, schema, unreadable = S.document(expanded), list(convenience), set()
    except ValidationError as exc:
        # a convenience item that could not be expanded fails the schema too (its objectType is no
        # plain type): its own problems say why, and the rest of the document is still checked
        schema = convenience + [p for p in schema_problems(expanded, exc)
                                if _item_index(p.path, "objects") not in failed]
        part = _valid_part(expanded, exc)
        if part is None:
            raise ModelInvalid(schema) from None
        doc, unreadable = part
    loaded = _Checker(doc, limits or ExpressionLimits(), expanded, schema, unreadable, cancel).run()
    loaded.expanded_document = expanded
    loaded.warnings[:0] = deprecations
    return loaded


class _Checker:
    """Resolves references and checks what they point at; collects every problem."""

    def __init__(self, doc: S.ModelDocument, limits: ExpressionLimits, raw: dict, schema: list[Problem],
                 unreadable: set[str], cancel: Callable[[], bool] | None = None):
        """`doc` may hold None for items with schema problems (`schema`); `unreadable` lists are
        not lists at all: references into them are not checked."""
        self.doc, self.limits, self.cancel = doc, limits, cancel
        self.problems: list[Problem] = list(schema)
        self.complete = not schema
        self.unreadable = unreadable
        self.warnings: list[dict] = []
        self._budget = None
        self.refs: dict[tuple[str, int, str], Any] = {}
        self.names = {kind: [_raw_item_name(raw, kind, i) if it is None else it.name or f"{prefix}{i}"
                             for i, it in enumerate(getattr(doc, kind))]
                      for kind, prefix in S.LIST_KINDS.items()}
        self.index = {kind: {} for kind in self.names}  # name -> first index with that name
        for kind, names in self.names.items():
            for i, name in enumerate(names):
                self.index[kind].setdefault(name, i)

    def items(self, kind: str):
        """(index, item) of the items of a list that passed the schema."""
        return ((i, it) for i, it in enumerate(getattr(self.doc, kind)) if it is not None)

    def problem(self, kind: str, index: int, path: str, message: str) -> None:
        self.problems.append(Problem(f"{kind}[{index}]{path}", message, self.names[kind][index]))

    def poll(self) -> None:
        if self.cancel is not None and self.cancel():
            raise SimulationCanceled()

    def run(self) -> LoadedModel:
        self.check_names()
        settings, sp = settings_mod.resolve(self.doc.simulationSettings)
        self.settings = settings
        self.problems += [Problem(p, m, limit=limit[0] if limit else None) for p, m, *limit in sp]
        self.check_solve()
        for stage in (self.resolve_bodies, self.resolve_markers, self.resolve_connectors, self.resolve_loads,
                      self.resolve_sensors):
            self.poll()
            stage()
        motions = self.resolve_motions()
        self.poll()
        user_functions = self.resolve_user_functions()
        self.poll()
        if self.complete:
            self.problems += explicit_solver_problems(self.doc, settings, self.names, self.refs)
            self.problems += lie_group_problems(self.doc, settings, self.names)
            self.problems += data_coordinate_problems(self.doc, settings, self.names)
        loaded = LoadedModel(document=self.doc, settings=settings, names=self.names, refs=self.refs,
                             motions=motions, user_functions=user_functions, warnings=self.warnings)
        self.problems += check_sensor_outputs(loaded)
        if self.problems:
            raise ModelInvalid(self.problems)
        return loaded

    # ---------------------------------------------------------------------------- names
    def check_names(self) -> None:
        for kind, prefix in S.LIST_KINDS.items():
            seen: dict[str, int] = {}
            for i, name in enumerate(self.names[kind]):
                if name in seen:
                    self.problem(kind, i, ".name", f"name {name!r} is already used by {kind}[{seen[name]}]")
                seen.setdefault(name, i)
                tail = name[len(prefix):]
                if name.startswith(prefix) and tail.isdigit() and int(tail) != i:
                    self.problem(kind, i, ".name", f"names of the form {prefix}N are reserved for default names "
                                                   f"({name!r} would be {kind}[{int(tail)}])")

    def check_solve(self) -> None:
        solve = self.doc.solve
        if solve.type == "Dynamic" and solve.solverType not in settings_mod.ENUMS["DynamicSolverType"]:
            names = settings_mod.ENUMS["DynamicSolverType"]
            self.problems.append(Problem("solve.solverType", f"unknown DynamicSolverType {solve.solverType!r}"
                                         + (did_you_mean(solve.solverType, names) or f"; one of {', '.join(names)}")))
        if solve.type == "Dynamic" and solve.solverType in settings_mod.ENUMS["DynamicSolverType"] \
                and solve.solverType not in SUPPORTED_DYNAMIC:
            self.problems.append(Problem("solve.solverType", f"{solve.solverType} is not supported; supported: "
                                                             f"{', '.join(SUPPORTED_DYNAMIC)}"))
        ga = self.doc.simulationSettings.get("timeIntegration", {}).get("generalizedAlpha", {}) \
            if isinstance(self.doc.simulationSettings.get("timeIntegration"), dict) else {}
        if isinstance(ga, dict) and ga.get("useIndex2Constraints") and not ga.get("useNewmark") \
                and solve.solverType == "GeneralizedAlpha":
            self.problems.append(Problem("simulationSettings.timeIntegration.generalizedAlpha.useIndex2Constraints",
                                         "index-2 constraints need useNewmark = true (as in Exudyn; "
                                         "or use solverType TrapezoidalIndex2)"))

    # ----------------------------------------------------------------------- references
    def lookup(self, kind: str, index: int, path: str, target: str, ref: Any, allowed: set[str] | None = None,
               what: str = "") -> int | None:
        """The index `ref` (an index or a name) points at in `target`, or None after a problem."""
        if target in self.unreadable:
            return None
        items = getattr(self.doc, target)
        if isinstance(ref, str):
            idx = self.index[target].get(ref)
            if idx is None:
                self.problem(kind, index, path, f"no {S.LIST_KINDS[target]} named {ref!r}"
                             + did_you_mean(ref, self.names[target]))
                return None
        elif ref == -1 and path.lstrip(".").split("[")[0] not in getattr(self.doc, kind)[index].model_fields_set:
            self.problem(kind, index, path, f"missing: give the index or the name of one of the {target}"
                         + (f" ({what})" if what else ""))
            return None
        elif not 0 <= ref < len(items):
            valid = f"0..{len(items) - 1} or a name" if items else f"there are no {target}"
            self.problem(kind, index, path, f"{ref} is not an index of {target} ({valid})")
            return None
        else:
            idx = ref
        if items[idx] is None:  # an item with schema problems: they say what is wrong with it
            return None
        if allowed is not None:
            t = item_type(items[idx])
            if t not in allowed:
                self.problem(kind, index, path, f"refers to {target}[{idx}] ({self.names[target][idx]}), "
                                                f"a {t}; expected {what or ' or '.join(sorted(allowed))}")
                return None
        return idx

    def resolve_bodies(self) -> None:
        bodies_1d: dict[int, int] = {}  # a Node1D -> the body on it (its frame is that body's)
        for i, obj in self.items("objects"):
            t = obj.objectType
            want = BODY_NODES.get(t)
            what = f"a {' or '.join(sorted(want))} node" if want else ""
            if has_field(type(obj), "nodeNumbers"):  # the coordinates of its nodes, in order
                nodes = [self.lookup("objects", i, f".nodeNumbers[{k}]", "nodes", n, want or None, what)
                         for k, n in enumerate(obj.nodeNumbers)]
                self.refs[("objects", i, "nodeNumbers")] = nodes
                if None not in nodes:
                    if len(set(nodes)) < len(nodes):
                        self.problem("objects", i, ".nodeNumbers", "a node appears twice")
                    n = sum(S.node_coordinates(self.doc.nodes[k]) for k in nodes)
                    check = OBJECT_TYPES[t].node_problems
                    for path, message in check(obj, n) if check else ():
                        self.problem("objects", i, path, message)
            elif want:
                self.refs[("objects", i, "nodeNumber")] = self.lookup("objects", i, ".nodeNumber", "nodes",
                                                                      obj.nodeNumber, want, what)
                node = self.refs[("objects", i, "nodeNumber")]
                key = "inertia" if t == "RotationalMass1D" else "mass"
                if node is not None and self.doc.nodes[node].nodeType == "1D":
                    if node in bodies_1d:
                        self.problem("objects", i, ".nodeNumber", f"its Node1D also carries objects[{bodies_1d[node]}] "
                                     f"({self.names['objects'][bodies_1d[node]]}): one Mass1D or RotationalMass1D "
                                     "per Node1D")
                    bodies_1d[node] = i
                if node is not None and self.doc.nodes[node].nodeType == "PointGround":
                    if obj.mass < 0:  # fixed: its mass acts nowhere, Exudyn's physicsMass=0 ground point
                        self.problem("objects", i, ".mass", f"must not be negative, got {obj.mass}")
                elif key not in obj.model_fields_set:
                    self.problem("objects", i, f".{key}", f"missing: a {t} needs a positive {key}")
                elif getattr(obj, key) <= 0:
                    self.problem("objects", i, f".{key}", f"must be positive, got {getattr(obj, key)}")

    def resolve_connectors(self) -> None:
        self.data_nodes: dict[int, int] = {}  # a GenericData node -> the connector whose data it holds
        for i, obj in self.items("objects"):
            t = obj.objectType
            if t in CONNECTOR_MARKERS:
                allowed, what = CONNECTOR_MARKERS[t]
                ms = [self.lookup("objects", i, f".markerNumbers[{k}]", "markers", m, allowed, what)
                      for k, m in enumerate(obj.markerNumbers)]
                self.refs[("objects", i, "markerNumbers")] = ms
                if None not in ms and self.marker_frame(ms[0]) == self.marker_frame(ms[1]):
                    self.problem("objects", i, ".markerNumbers", "both markers are on the same body or node")
                check = OBJECT_TYPES[t].marker_problems
                for path, message in check(obj, [self.doc.markers[m].markerType for m in ms]) \
                        if check and None not in ms else ():
                    self.problem("objects", i, path, message)
                for k in (0, 1):
                    rm = getattr(obj, f"rotationMarker{k}", None)
                    if rm is not None and rm != S.IDENTITY3:
                        self.warnings.append({"code": "DeprecationWarning", "item": self.names["objects"][i],
                                              "message": f"rotationMarker{k} is deprecated (since Exudyn 1.12.244); "
                                                         f"give the rotation to marker {k} as its localHT"})
            if t in DATA_COORDINATES:
                size = DATA_COORDINATES[t]
                node = self.lookup("objects", i, ".nodeNumber", "nodes", obj.nodeNumber, {"GenericData"},
                                   f"a GenericData node of {size} data coordinates")
                self.refs[("objects", i, "nodeNumber")] = node
                if node is not None and self.doc.nodes[node].numberOfDataCoordinates != size:
                    self.problem("objects", i, ".nodeNumber", f"its GenericData node has "
                                 f"{self.doc.nodes[node].numberOfDataCoordinates} data coordinates; a {t} needs {size}")
                elif node is not None and node in self.data_nodes:
                    self.problem("objects", i, ".nodeNumber", f"its GenericData node is also objects"
                                 f"[{self.data_nodes[node]}]'s: each connector needs its own")
                elif node is not None:
                    self.data_nodes[node] = i

    def marker_frame(self, m: int) -> tuple:
        """What a marker is attached to, to detect connectors between a body and itself."""
        mk = self.doc.markers[m]
        if has_field(type(mk), "bodyNumber"):
            b = self.refs.get(("markers", m, "bodyNumber"))
            if b is None:
                return ("marker", m)
            obj = self.doc.objects[b]
            if obj.objectType == "Ground":
                return ("ground", b)
            return ("node", self.refs.get(("objects", b, "nodeNumber")))
        if mk.markerType == "NodeCoordinate":  # two coordinates of one node may be connected
            return ("coordinate", self.refs.get(("markers", m, "nodeNumber")), mk.coordinate)
        return ("node", self.refs.get(("markers", m, "nodeNumber")))

    def resolve_markers(self) -> None:
        for i, mk in self.items("markers"):
            t = mk.markerType
            if has_field(type(mk), "bodyNumber"):
                allowed = MARKER_BODIES[t]
                self.refs[("markers", i, "bodyNumber")] = self.lookup("markers", i, ".bodyNumber", "objects",
                                                                      mk.bodyNumber, allowed, " or ".join(sorted(allowed)))
            else:
                allowed = MARKER_NODES[t]
                n = self.lookup("markers", i, ".nodeNumber", "nodes", mk.nodeNumber, allowed,
                                " or ".join(sorted(allowed)) + " node")
                self.refs[("markers", i, "nodeNumber")] = n
                if t == "NodeCoordinate" and n is not None:
                    node = self.doc.nodes[n]
                    nc = 3 if node.nodeType == "PointGround" else S.node_coordinates(node)  # ground x, y, z read 0
                    if "coordinate" not in mk.model_fields_set:
                        self.problem("markers", i, ".coordinate", f"missing: which coordinate of {self.names['nodes'][n]} "
                                                                  f"(0..{nc - 1})")
                    elif not 0 <= mk.coordinate < nc:
                        self.problem("markers", i, ".coordinate", f"{mk.coordinate} is not a coordinate of "
                                                                  f"{self.names['nodes'][n]} (0..{nc - 1})")

    def resolve_loads(self) -> None:
        for i, load in self.items("loads"):
            allowed, what = LOAD_MARKERS[load.loadType]
            self.refs[("loads", i, "markerNumber")] = self.lookup("loads", i, ".markerNumber", "markers",
                                                                  load.markerNumber, allowed, what)

    def resolve_sensors(self) -> None:
        targets = {"Node": ("nodeNumber", "nodes"), "Object": ("objectNumber", "objects"),
                   "Body": ("bodyNumber", "objects"), "Marker": ("markerNumber", "markers"),
                   "Load": ("loadNumber", "loads"), "Motion": ("motionNumber", "motions")}
        for i, sensor in self.items("sensors"):
            key, target = targets[sensor.sensorType]
            ref = getattr(sensor, key)
            allowed = set(BODY_NODES) if sensor.sensorType == "Body" else None
            idx = self.lookup("sensors", i, f".{key}", target, ref, allowed,
                              f"a body: {', '.join(sorted(allowed))}" if allowed else "")
            self.refs[("sensors", i, key)] = idx

    def resolve_motions(self) -> list:
        """[(law, joint object index)] per motion; a joint's coordinate takes at most one motion.

        The cheap checks come first: the counts (over them, no expression is parsed), and each
        motion's joint (a motion on a missing joint or on one that has a motion already costs no
        expression work). Then the laws are built under one Budget, and each is evaluated over
        the time span: a law of t alone at the step times, a law of q or u over its declared
        qRange/uRange too (without one, only the run can tell).
        """
        motions, limits = self.doc.motions, self.limits
        joints, on_joint = [], {}
        for i, spec in enumerate(motions):
            if spec is None:  # schema problems of its own
                joints.append(None)
                continue
            joint = self.lookup("motions", i, ".joint", "objects", spec.joint, set(MOTION_JOINTS),
                                f"a {' or '.join(MOTION_JOINTS)} (a joint with one free coordinate)")
            if joint is not None and joint in on_joint:
                self.problem("motions", i, ".joint", f"{self.names['objects'][joint]} already has a motion "
                                                     f"(motions[{on_joint[joint]}]); a coordinate takes one motion")
                joint = None
            elif joint is not None:
                on_joint[joint] = i
            joints.append(joint)
        expressions = sum(getattr(spec, field, None) is not None for spec in motions if spec is not None
                          for field in EXPRESSION_FIELDS) + self.user_function_count()
        over = [Problem("motions", f"{n} {what}; the limit is {getattr(limits, limit)} per document "
                                   f"({limits.name(limit)})", limit=limits.name(limit))
                for what, n, limit in (("motions", len(motions), "max_motions"),
                                       ("expressions (motion laws and user functions)" if self.user_function_count()
                                        else "motion expressions", expressions, "max_expressions"))
                if n > getattr(limits, limit)]
        if over:
            self.problems += over
            return []
        if not motions:
            return []
        from .expressions import BudgetExceeded  # sympy: only for a document with expressions
        budget = self.budget()
        times = self.step_times()
        laws = []
        for i, (spec, joint) in enumerate(zip(motions, joints)):
            self.poll()  # building and checking a law is the costly part of a validation
            if joint is None:
                continue
            name, path = self.names["motions"][i], f"motions[{i}]"
            try:
                law = build_motion_law(spec, path, name, budget, self.doc.parameters)
            except MotionError as exc:
                self.problems += [Problem(p, m, name) for p, m in exc.problems]
                continue
            except BudgetExceeded as exc:  # stop all expression work
                self.problems.append(Problem(path, exc.message, name, limit=exc.limit))
                break
            bad = None if times is None else undefined_on_grid(law, times, getattr(spec, "qRange", None),
                                                                 getattr(spec, "uRange", None))
            if bad is not None:
                k, t, q, u = bad
                field = law.field(k)
                given = getattr(spec, field, None) is not None
                base = BASE_FIELD[law.level]
                at = ", ".join([f"t = {t:.6g}"] + [f"{v} = {x:.6g}" for v, x in (("q", q), ("u", u))
                                                   if v in law.reads[k]])
                self.problems.append(Problem(
                    f"{path}.{field if given else base}",
                    f"{field}{'' if given else f' (derived from {base})'} is undefined or not finite at {at} "
                    "(e.g. a logarithm of 0, a root of a negative number, an overflow)", name))
            laws.append((law, joint))
        return laws

    def budget(self):
        """The one Budget of the document's expressions (motion laws and user functions)."""
        if self._budget is None:
            from .expressions import Budget  # sympy: only for a document with expressions
            limits = self.limits
            self._budget = Budget(limits.max_cost, limits.max_seconds, limits.name("max_cost"),
                                  limits.name("max_seconds"))
        return self._budget

    def user_function_count(self) -> int:
        """Expressions in user functions (a vector's components count one each)."""
        return sum(1 if isinstance(v, str) else len(v) for kind in ("loads", "objects") for _, it in self.items(kind)
                   for v in (getattr(it, f, 0) for f in USER_FUNCTION_FIELDS) if not (isinstance(v, int) and v == 0))

    def resolve_user_functions(self):
        """The user functions compiled (user_function_programs.UserFunctions), None without any; a
        user function of t alone (a load's) is evaluated at the step times, as a motion law is."""
        if not self.user_function_count() or any(p.limit for p in self.problems):
            return None
        from .expressions import BudgetExceeded
        try:
            compiled, problems = compile_user_functions(self.doc, self.budget())
        except BudgetExceeded as exc:
            self.problems.append(Problem("loads" if any(True for _ in self.items("loads")) else "objects", exc.message,
                                         limit=exc.limit))
            return None
        for path, message in problems:
            kind, index = path.split("[")[0], int(path.split("[")[1].split("]")[0])
            self.problems.append(Problem(path, message, self.names[kind][index]))
        times = self.step_times()
        code, consts, start, size = compiled.programs
        x, work = np.zeros(8), np.empty(size)
        for (kind, index), p in compiled.first.items():
            if kind != "loads" or times is None:
                continue
            field = compiled.fields[(kind, index)]
            components = 1 if field == "loadUserFunction" else 3
            for k in range(components):
                bad = P.first_undefined(code, consts, start, p + k, times, x, work)
                if bad >= 0:
                    where = f".{field}" if components == 1 else f".{field}[{k}]"
                    self.problem(kind, index, where, f"{field} is undefined or not finite at t = {times[bad]:.6g} "
                                                     "(e.g. a logarithm of 0, a root of a negative number, an overflow)")
                    break
        return compiled

    def step_times(self) -> np.ndarray | None:
        """The times of the steps (of every k-th when there are more than TIME_CHECKS), None if
        the time settings are themselves in error (reported elsewhere)."""
        ti = self.settings["timeIntegration"]
        t0, t_end, steps = float(ti["startTime"]), float(ti["endTime"]), float(ti["numberOfSteps"])
        if not (math.isfinite(t0) and math.isfinite(t_end) and t_end >= t0 and 1 <= steps < math.inf):
            return None
        n = int(min(round(steps), TIME_CHECKS))
        return t0 + np.arange(n + 1) * ((t_end - t0) / n)
