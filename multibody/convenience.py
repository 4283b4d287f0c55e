"""Convenience items: Exudyn's `mbs.Create...` helpers written as items of `objects` (SPEC section 1).

`expand_convenience(raw)` replaces each convenience item by the plain items that Exudyn 1.13.6's
helper (exudyn/misc/mainSystemExtensions.py) adds, written as Exudyn's own item dictionaries
(what mbs.GetNode/GetObject/GetMarker/GetLoad return). The helper's object takes the item's place
in `objects`, so object indices do not move; the nodes, markers and loads it needs are appended at
the end of their lists, in the order Exudyn adds them. Joint frames and body-local positions come
from the bodies' reference configuration, as in Exudyn.

Items are given as object indices or names (Exudyn also takes nodes and markers, which a JSON
index cannot tell apart from an object).
"""
from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, field_validator, model_validator

from . import rotations as R
from .field_docs import add_descriptions
from . import schema as S
from .values import Problem

DEFAULT_COLOR = [-1.0, -1.0, -1.0, -1.0]  # exudyn.graphics.color.default: the renderer's default
Color = Annotated[list[S.FiniteFloat], Field(min_length=4, max_length=4)]
Items = Annotated[list[S.Ref], Field(min_length=2, max_length=2, description="two objects, by index or name")]
Rotation = Annotated[S.Matrix3, Field(description="3x3 rotation matrix, row by row")]


# --------------------------------------------------------------------------------- inertia
class _Inertia(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True, json_schema_extra=add_descriptions,
                              defer_build=True)

    def mass_tensor_com(self) -> tuple[float, np.ndarray, np.ndarray]:
        """mass, inertia tensor about the body's reference point, center of mass (RigidBodyInertia)."""
        raise NotImplementedError


class RigidBodyInertia(_Inertia):
    """Exudyn's RigidBodyInertia: the tensor is about the reference point unless inertiaTensorAtCOM."""
    type: Literal["RigidBodyInertia"] = "RigidBodyInertia"
    mass: S.FiniteFloat = Field(gt=0)
    inertiaTensor: S.Matrix3 | None = None
    inertia6D: S.Vector6 | None = Field(None, description="[Jxx,Jyy,Jzz,Jyz,Jxz,Jxy] instead of inertiaTensor")
    com: S.Vector3 = Field(default_factory=lambda: [0.0] * 3)
    inertiaTensorAtCOM: bool = False

    @model_validator(mode="after")
    def one_tensor(self):
        if (self.inertiaTensor is None) == (self.inertia6D is None):
            raise ValueError("give inertiaTensor (3x3) or inertia6D, one of them")
        return self

    def mass_tensor_com(self):
        if self.inertiaTensor is not None:
            tensor = np.array(self.inertiaTensor, float)
        else:
            jxx, jyy, jzz, jyz, jxz, jxy = self.inertia6D
            tensor = np.array([[jxx, jxy, jxz], [jxy, jyy, jyz], [jxz, jyz, jzz]], float)
        com = np.array(self.com, float)
        if self.inertiaTensorAtCOM:  # Steiner: to the reference point, as RigidBodyInertia stores it
            s = R.skew(com)
            tensor = tensor + self.mass * np.dot(s.T, s)
        return self.mass, tensor, com


class InertiaCuboid(_Inertia):
    type: Literal["Cuboid"]
    density: S.FiniteFloat = Field(gt=0)
    sideLengths: Annotated[list[Annotated[float, Field(gt=0, allow_inf_nan=False)]],
                           Field(min_length=3, max_length=3)]

    def mass_tensor_com(self):
        l1, l2, l3 = self.sideLengths
        m = self.density * l1 * l2 * l3
        return m, m / 12. * np.diag([l2**2 + l3**2, l1**2 + l3**2, l1**2 + l2**2]), np.zeros(3)


class InertiaCylinder(_Inertia):
    type: Literal["Cylinder"]
    density: S.FiniteFloat = Field(gt=0)
    length: S.FiniteFloat = Field(gt=0)
    outerRadius: S.FiniteFloat = Field(gt=0)
    axis: Literal[0, 1, 2]
    innerRadius: S.FiniteFloat = Field(0.0, ge=0)

    @model_validator(mode="after")
    def hollow_inside(self):
        if self.innerRadius >= self.outerRadius:
            raise ValueError("innerRadius must be smaller than outerRadius")
        return self

    def mass_tensor_com(self):
        ro, ri = self.outerRadius, self.innerRadius
        m = self.density * self.length * np.pi * (ro**2 - ri**2)
        j_axis = 0.5 * m * (ro**2 + ri**2)
        j_transverse = 1. / 12. * m * (3 * (ro**2 + ri**2) + self.length**2)
        diag = [j_transverse] * 3
        diag[self.axis] = j_axis
        return m, np.diag(diag), np.zeros(3)


class InertiaSphere(_Inertia):
    type: Literal["Sphere"]
    radius: S.FiniteFloat = Field(gt=0)
    mass: S.FiniteFloat | None = Field(None, gt=0)
    density: S.FiniteFloat | None = Field(None, gt=0)

    @model_validator(mode="after")
    def mass_or_density(self):
        if (self.mass is None) == (self.density is None):
            raise ValueError("give mass or density, one of them")
        return self

    def mass_tensor_com(self):
        m = self.mass if self.mass is not None else self.density * (4. / 3. * np.pi * self.radius**3)
        j = 2. * m / 5. * self.radius**2
        return m, np.diag([j, j, j]), np.zeros(3)


INERTIA_TYPES = {"RigidBodyInertia": RigidBodyInertia, "Cuboid": InertiaCuboid, "Cylinder": InertiaCylinder,
                 "Sphere": InertiaSphere}
Inertia = Annotated[Annotated[RigidBodyInertia, Tag("RigidBodyInertia")] | Annotated[InertiaCuboid, Tag("Cuboid")]
                    | Annotated[InertiaCylinder, Tag("Cylinder")] | Annotated[InertiaSphere, Tag("Sphere")],
                    # no type: Exudyn's general RigidBodyInertia; an instance is seen when serializing
                    Discriminator(lambda v: v.get("type", "RigidBodyInertia") if isinstance(v, dict)
                                  else getattr(v, "type", None))]


# --------------------------------------------------------------------------- the helpers
class _Create(BaseModel):
    """Arguments common to the helpers; show and color become the items' visualization keys."""
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True, json_schema_extra=add_descriptions,
                              defer_build=True)
    name: str = ""
    """the created object's name (its node and markers are named after it)"""
    show: bool = True
    """draw it (visualization)"""
    color: Color = Field(default_factory=lambda: list(DEFAULT_COLOR))
    """RGBA color; [-1, -1, -1, -1]: the renderer's default"""


class _Connecting(_Create):
    itemNumbers: Items | None = None
    """the two bodies (objects, by index or name)"""
    bodyNumbers: Items | None = Field(None, description="deprecated name of itemNumbers")


class CreateRigidBody(_Create):
    objectType: Literal["CreateRigidBody"]
    referencePosition: S.Vector3 | None = None
    """position of the body's reference point"""
    referenceRotationMatrix: Rotation | None = None
    """reference rotation (3x3, row by row)"""
    referenceHT: S.HT | None = None
    """reference frame as one transformation"""
    initialVelocity: S.Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """velocity of the reference point at startTime"""
    initialAngularVelocity: S.Vector3 = Field(default_factory=lambda: [0.0] * 3, description="global")
    initialDisplacement: S.Vector3 | None = None
    """displacement from the reference position at startTime"""
    initialRotationMatrix: Rotation | None = None
    """rotation at startTime, relative to the reference"""
    initialHT: S.HT | None = None
    """initial displacement and rotation as one transformation"""
    inertia: Inertia
    """RigidBodyInertia, or a Cuboid, Cylinder or Sphere of a density"""
    gravity: S.Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """a MassProportional load with this acceleration"""
    nodeType: Literal["RotationEulerParameters", "RotationRxyz", "RotationRotationVector"] = Field(
        "RotationEulerParameters", description="NodeType: Euler parameters (a RigidBodyEP node), Tait-Bryan "
        "angles (a RigidBodyRxyz node) or a rotation vector (a RigidBodyRotVecLG node)")
    create2D: Literal[False] = False
    """false only (2D bodies are not supported)"""
    graphicsDataList: list[Any] = Field(default_factory=list)
    """drawing data, kept"""
    graphicsDataUserFunction: S.UnsetUserFunction = 0
    """0: none (a Python user function cannot be sent)"""
    drawSize: S.FiniteFloat = -1.0
    """drawing size of the node; -1: default"""

    @field_validator("nodeType", mode="before")
    @classmethod
    def strip_enum_prefix(cls, v: Any) -> Any:
        return v[len("NodeType."):] if isinstance(v, str) and v.startswith("NodeType.") else v

    @field_validator("referenceRotationMatrix", "initialRotationMatrix")
    @classmethod
    def check_rotation(cls, v, info):
        return None if v is None else S._orthonormal(v, info.field_name)


class _AxisJoint(_Connecting):
    position: S.Vector3
    """a point on the joint axis"""
    axis: S.Vector3
    """the joint axis"""
    useGlobalFrame: bool = True
    """position and axis in global coordinates (else in body 0's)"""
    axisRadius: S.FiniteFloat = 0.1
    """drawing radius of the axis"""
    axisLength: S.FiniteFloat = 0.4
    """drawing length of the axis"""


class CreatePrismaticJoint(_AxisJoint):
    objectType: Literal["CreatePrismaticJoint"]


class CreateRevoluteJoint(_AxisJoint):
    objectType: Literal["CreateRevoluteJoint"]


class CreateSphericalJoint(_Connecting):
    objectType: Literal["CreateSphericalJoint"]
    position: S.Vector3
    """the joint's point"""
    constrainedAxes: Annotated[list[Literal[0, 1]], Field(min_length=3, max_length=3)] = Field(
        default_factory=lambda: [1, 1, 1])
    """translations [x, y, z] held (1) or free (0)"""
    useGlobalFrame: bool = True
    """position in global coordinates (else in body 0's)"""
    jointRadius: S.FiniteFloat = 0.1
    """drawing radius"""


class CreateSpringDamper(_Connecting):
    objectType: Literal["CreateSpringDamper"]
    localPosition0: S.Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """the spring's end on body 0, body coordinates"""
    localPosition1: S.Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """the spring's end on body 1, body coordinates"""
    referenceLength: S.FiniteFloat | None = Field(None, ge=0, description="None: distance in the reference configuration")
    stiffness: S.FiniteFloat = 0.0
    """spring stiffness (N/m)"""
    damping: S.FiniteFloat = 0.0
    """damping (N s/m)"""
    force: S.FiniteFloat = 0.0
    """constant force along the spring (N)"""
    velocityOffset: S.FiniteFloat = 0.0
    """velocity subtracted from the length rate in the damping term"""
    springForceUserFunction: S.ScalarUserFunction = 0
    """0: none; or the ConnectorSpringDamper's springForceUserFunction as an expression (see User functions)"""
    drawSize: S.FiniteFloat = -1.0
    """drawing size; -1: default"""


class CreateDistanceConstraint(_Connecting):
    objectType: Literal["CreateDistanceConstraint"]
    localPosition0: S.Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """the constraint's end on body 0, body coordinates"""
    localPosition1: S.Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """the constraint's end on body 1, body coordinates"""
    distance: S.FiniteFloat | None = Field(None, ge=0, description="None: the distance in the reference "
                                           "configuration; 0 (given or found): a JointSpherical instead, as Exudyn")
    drawSize: S.FiniteFloat = -1.0
    """drawing size; -1: default"""


CONVENIENCE_ITEMS = {cls.__name__: cls for cls in (CreateRigidBody, CreatePrismaticJoint, CreateRevoluteJoint,
                                                    CreateSphericalJoint, CreateSpringDamper,
                                                    CreateDistanceConstraint)}
RIGID = {"Ground", "RigidBody"}
BODIES = {"Ground", "RigidBody", "MassPoint"}


# ------------------------------------------------------------------------- small numerics
def _matvec(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """a @ v with the summation order fixed, as Exudyn's _MatVec3: numpy's order for small products
    changed between releases, and these bits become marker positions (solver input)."""
    return np.array([a[i][0] * v[0] + a[i][1] * v[1] + a[i][2] * v[2] for i in range(3)])


def _matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b with the summation order fixed (see _matvec)."""
    return np.array([[a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j] for j in range(3)]
                     for i in range(3)])


def orthonormal_basis(vector: np.ndarray) -> np.ndarray:
    """Exudyn's ComputeOrthonormalBasis: a rotation matrix whose first column is the unit vector."""
    v = (1. / np.linalg.norm(vector)) * vector
    # start from the y axis only for a vector close to x, so that the projection stays well conditioned
    n1 = np.array([0., 1., 0.]) if abs(v[0]) > 0.5 and abs(v[1]) < 0.1 and abs(v[2]) < 0.1 else np.array([1., 0., 0.])
    n1 -= np.dot(n1, v) * v
    n1 = (1 / np.linalg.norm(n1)) * n1
    return np.vstack([v, n1, np.cross(v, n1)]).T


def euler_parameters(a: np.ndarray) -> np.ndarray:
    """Exudyn's RotationMatrix2EulerParameters (same formulas, then normalized), so that reference
    coordinates match Exudyn's to the last bit."""
    trace = a[0, 0] + a[1, 1] + a[2, 2] + 1.0
    if abs(trace) > 1e-15:
        s = 0.5 / np.sqrt(abs(trace))
        ep = [0.25 / s, (a[2, 1] - a[1, 2]) * s, (a[0, 2] - a[2, 0]) * s, (a[1, 0] - a[0, 1]) * s]
    else:  # a half turn: divide by the largest component instead (standard signs for θ0; Exudyn flips
        # them in two of its branches, which differs by |θ0| < 2e-8 where this branch is taken)
        i = 0 if a[0, 0] > a[1, 1] and a[0, 0] > a[2, 2] else (1 if a[1, 1] > a[2, 2] else 2)
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(abs(1.0 + a[i, i] - a[j, j] - a[k, k]))
        ep = [0.0] * 4
        ep[1 + i] = 0.25 * s
        ep[1 + j] = (a[i, j] + a[j, i]) / s
        ep[1 + k] = (a[i, k] + a[k, i]) / s
        ep[0] = (a[k, j] - a[j, k]) / s
    ep = np.array(ep)
    return ep * (1. / np.linalg.norm(ep))


def euler_parameters_t(omega: np.ndarray, ep: np.ndarray) -> np.ndarray:
    """θ̇ = ¼ Gᵀ ω for a global angular velocity ω (Exudyn's AngularVelocity2EulerParameters_t)."""
    g = np.array([[-2. * ep[1], 2. * ep[0], -2. * ep[3], 2. * ep[2]],
                  [-2. * ep[2], 2. * ep[3], 2. * ep[0], -2. * ep[1]],
                  [-2. * ep[3], -2. * ep[2], 2. * ep[1], 2. * ep[0]]])
    return 0.25 * (g.T.dot(omega))


def rxyz_rates(omega: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """φ̇ = G⁻¹ ω of Tait-Bryan angles for a global angular velocity ω (Exudyn's AngularVelocity2RotXYZ_t)."""
    c0, s0, c1, s1 = np.cos(rot[0]), np.sin(rot[0]), np.cos(rot[1]), np.sin(rot[1])
    g_inv = (1 / c1) * np.array([[c1, s0 * s1, -c0 * s1], [0, c0 * c1, s0 * c1], [0, -s0, c0]])
    return g_inv @ omega


# CreateRigidBody's nodeType -> (node type, rotation parameters of a matrix, rates of (ω, parameters, matrix));
# a rotation vector's rates are ω̄ = Aᵀ ω (Exudyn's CreateRigidBody takes the given reference matrix)
NODE_TYPES = {"RotationEulerParameters": ("RigidBodyEP", euler_parameters, lambda w, p, a: euler_parameters_t(w, p)),
              "RotationRxyz": ("RigidBodyRxyz", R.tait_bryan_xyz, lambda w, p, a: rxyz_rates(w, p)),
              "RotationRotationVector": ("RigidBodyRotVecLG", R.rotation_vector, lambda w, p, a: a.T @ w)}


def _floats(a) -> list:
    return np.asarray(a, float).tolist()


def _ht(rotation: np.ndarray, translation: np.ndarray) -> list:
    return _floats(np.block([[rotation, np.reshape(translation, (3, 1))], [np.zeros((1, 3)), np.ones((1, 1))]]))


def _frame(ht, position, rotation) -> tuple[np.ndarray, np.ndarray]:
    if ht is not None:
        rotation, position = S.ht_parts(ht)
    return (np.array(position if position is not None else [0.0] * 3, float),
            np.array(rotation if rotation is not None else S.IDENTITY3, float))


def _named(name: str, item: dict) -> dict:
    """An unnamed item keeps no name key: it gets Exudyn's default name from its index."""
    return {**item, "name": name} if name else item


# ----------------------------------------------------------------------------- expansion
def _error_path(loc: tuple) -> str:
    path = ""
    for k, part in enumerate(loc):
        if k and loc[k - 1] == "inertia" and part in INERTIA_TYPES:
            continue  # the union tag pydantic puts into the location
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


class _Expansion:
    def __init__(self, raw: dict):
        self.doc = copy.deepcopy(raw)
        self.objects: list = self.doc["objects"]
        self.lists = {k: self.doc.setdefault(k, []) for k in ("nodes", "markers", "loads")}
        self.names = {k: [self._name(k, i, it) for i, it in enumerate(items)]
                      for k, items in (("objects", self.objects), ("nodes", self.lists["nodes"]))}
        self.problems: list[Problem] = []
        self.warnings: list[dict] = []
        self.failed: set[int] = set()  # convenience items with problems: their own problems say why

    @staticmethod
    def _name(kind: str, i: int, item: Any) -> str:
        name = item.get("name") if isinstance(item, dict) else None
        return name if isinstance(name, str) and name else f"{S.LIST_KINDS[kind]}{i}"

    def problem(self, i: int, path: str, message: str) -> None:
        self.problems.append(Problem(f"objects[{i}]{path}", message, self.names["objects"][i]))
        self.failed.add(i)

    def append(self, kind: str, item: dict) -> int:
        self.lists[kind].append(item)
        if kind == "nodes":
            self.names["nodes"].append(self._name("nodes", len(self.lists["nodes"]) - 1, item))
        return len(self.lists[kind]) - 1

    def run(self) -> tuple[dict, list[Problem], list[dict], set[int]]:
        specs = {}
        for i, item in enumerate(self.objects):
            t = item.get("objectType") if isinstance(item, dict) else None
            if not (isinstance(t, str) and t.startswith("Create")):
                continue
            if t not in CONVENIENCE_ITEMS:
                self.problem(i, ".objectType", f"unknown convenience item {t!r}; supported: {', '.join(CONVENIENCE_ITEMS)}")
                continue
            try:
                specs[i] = CONVENIENCE_ITEMS[t].model_validate(item)
            except ValidationError as exc:
                for err in exc.errors(include_url=False):
                    msg = {"extra_forbidden": f"unknown key {err['loc'][-1]!r}",
                           "value_error": str(err.get("ctx", {}).get("error"))}.get(err["type"], err["msg"])
                    self.problem(i, _error_path(err["loc"]), msg)
        # bodies first: a joint may connect a body that comes later in `objects`
        gravity = {i: self.rigid_body(i, s) for i, s in specs.items() if isinstance(s, CreateRigidBody)}
        for i, spec in specs.items():  # then markers and loads in the order Exudyn adds them
            if isinstance(spec, CreateRigidBody):
                if gravity[i] is None:
                    continue
                m = self.append("markers", {"markerType": "BodyMass", "bodyNumber": i, "Vshow": True})
                self.append("loads", {"loadType": "MassProportional", "markerNumber": m, "loadVector": gravity[i],
                                      "Vshow": True})
            elif isinstance(spec, _AxisJoint):
                self.axis_joint(i, spec)
            elif isinstance(spec, CreateSphericalJoint):
                self.spherical_joint(i, spec)
            elif isinstance(spec, CreateSpringDamper):
                self.spring_damper(i, spec)
            elif isinstance(spec, CreateDistanceConstraint):
                self.distance_constraint(i, spec)
        return self.doc, self.problems, self.warnings, self.failed

    # ---------------------------------------------------------------------- bodies
    def rigid_body(self, i: int, spec: CreateRigidBody) -> list | None:
        """Node and body of CreateRigidBody; returns the gravity vector when it needs a load."""
        for whole, parts in (("referenceHT", ("referencePosition", "referenceRotationMatrix")),
                             ("initialHT", ("initialDisplacement", "initialRotationMatrix"))):
            if getattr(spec, whole) is not None and any(getattr(spec, p) is not None for p in parts):
                self.problem(i, f".{whole}", f"give {whole} or {' and '.join(parts)}, not both")
        if i in self.failed:
            return None
        position, rotation = _frame(spec.referenceHT, spec.referencePosition, spec.referenceRotationMatrix)
        node_type, parameters, rates = NODE_TYPES[spec.nodeType]
        ref = parameters(rotation)
        initial = [0.0] * (3 + len(ref))
        if spec.initialHT is not None or spec.initialDisplacement is not None or spec.initialRotationMatrix is not None:
            displacement, turn = _frame(spec.initialHT, spec.initialDisplacement, spec.initialRotationMatrix)
            # the initial rotation is superimposed on the reference rotation; coordinates are relative to it
            initial = _floats(displacement) + _floats(parameters(rotation @ turn) - ref)
        omega = np.array(spec.initialAngularVelocity, float)
        node = self.append("nodes", _named(spec.name and "Node:" + spec.name, {
            "nodeType": node_type, "referenceCoordinates": _floats(position) + _floats(ref),
            **({"addConstraintEquation": True} if node_type == "RigidBodyEP" else {}), "initialCoordinates": initial,
            # Exudyn takes the rotation rates for the reference rotation, also with an initial rotation
            "initialVelocities": _floats(spec.initialVelocity) + _floats(rates(omega, ref, rotation)),
            # Exudyn 1.13.6 draws the body from (inertia) graphics and sets the node's drawSize to 0
            "Vshow": spec.show, "VdrawSize": 0.0, "Vcolor": spec.color}))
        mass, tensor, com = spec.inertia.mass_tensor_com()
        body = {"objectType": "RigidBody", "mass": float(mass),
                "inertia": _floats([tensor[0, 0], tensor[1, 1], tensor[2, 2], tensor[1, 2], tensor[0, 2], tensor[0, 1]]),
                "centerOfMass": _floats(com), "nodeNumber": node, "Vshow": spec.show}
        if spec.graphicsDataList:
            body["VgraphicsData"] = spec.graphicsDataList
        self.objects[i] = _named(spec.name, body)
        return spec.gravity if np.linalg.norm(spec.gravity) != 0. else None

    def items(self, i: int, spec: _Connecting, allowed: set[str]) -> list[tuple[int, np.ndarray, np.ndarray]] | None:
        """(object index, reference position, reference rotation) of the two items, or None."""
        key, refs = "itemNumbers", spec.itemNumbers
        if spec.bodyNumbers is not None:
            if spec.itemNumbers is not None:
                self.problem(i, ".bodyNumbers", "bodyNumbers is the deprecated name of itemNumbers; give itemNumbers only")
                return None
            key, refs = "bodyNumbers", spec.bodyNumbers
            self.warnings.append({"code": "DeprecationWarning", "item": self.names["objects"][i],
                                  "message": "bodyNumbers is deprecated (since Exudyn 1.12.337); use itemNumbers"})
        if refs is None:
            self.problem(i, ".itemNumbers", "itemNumbers is required: the two objects to connect")
            return None
        out = [self.body(i, f".{key}[{k}]", ref, allowed) for k, ref in enumerate(refs)]
        if None not in out and out[0][0] == out[1][0]:
            self.problem(i, f".{key}", "connects an object with itself")
            return None
        return None if None in out else out

    def lookup(self, kind: str, ref: Any) -> int | None:
        if isinstance(ref, str):
            return self.names[kind].index(ref) if ref in self.names[kind] else None
        items = self.objects if kind == "objects" else self.lists[kind]
        return ref if 0 <= ref < len(items) else None

    def body(self, i: int, path: str, ref: Any, allowed: set[str]):
        j = self.lookup("objects", ref)
        if j is None:
            self.problem(i, path, f"no object named {ref!r}" if isinstance(ref, str)
                         else f"= {ref}, but there are {len(self.objects)} objects")
            return None
        if j in self.failed:
            self.failed.add(i)
            return None
        obj = self.objects[j]
        t = obj.get("objectType") if isinstance(obj, dict) else None
        if t not in allowed:
            self.problem(i, path, f"refers to objects[{j}] ({self.names['objects'][j]}), a {t}; "
                                  f"expected {' or '.join(sorted(allowed))}")
            return None
        try:
            position, rotation = self.reference_frame(obj)
        except (ValidationError, LookupError) as exc:
            why = exc.errors(include_url=False)[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            self.problem(i, path, f"refers to objects[{j}] ({self.names['objects'][j]}), whose reference "
                                  f"configuration cannot be computed: {why}")
            return None
        return j, position, rotation

    def reference_frame(self, obj: dict) -> tuple[np.ndarray, np.ndarray]:
        """Position and rotation of a body's reference point in the reference configuration."""
        if obj["objectType"] == "Ground":
            g = S.ObjectGround.model_validate(obj)
            return _frame(g.referenceHT, g.referencePosition, g.referenceRotation)
        body = (S.ObjectRigidBody if obj["objectType"] == "RigidBody" else S.ObjectMassPoint).model_validate(obj)
        n = self.lookup("nodes", body.nodeNumber)
        if n is None:
            raise LookupError(f"its nodeNumber {body.nodeNumber!r} is not a node")
        raw = self.lists["nodes"][n]
        node_type = raw.get("nodeType") if isinstance(raw, dict) else None
        three = {"RigidBodyRxyz": (S.NodeRigidBodyRxyz, R.rxyz_rotation),
                 "RigidBodyRotVecLG": (S.NodeRigidBodyRotVecLG, R.rotation_vector_matrix)}.get(node_type)
        kind = (three[0] if three else S.NodeRigidBodyEP) if obj["objectType"] == "RigidBody" else S.NodePoint
        q = np.array(kind.model_validate(raw).referenceCoordinates, float)
        return q[:3], (three[1](q[3:]) if three and kind is three[0] else R.ep_rotation(q[3:]) if len(q) == 7
                       else np.eye(3))

    @staticmethod
    def joint_position(spec, bodies) -> np.ndarray:
        """The joint's global position in the reference configuration."""
        (_, p0, a0), _ = bodies
        position = np.array(spec.position, float)
        return position if spec.useGlobalFrame else a0 @ position + p0

    # -------------------------------------------------------------------- connectors
    def axis_joint(self, i: int, spec: _AxisJoint) -> None:
        if not np.any(spec.axis):
            self.problem(i, ".axis", "is the zero vector; the joint axis needs a direction")
        bodies = self.items(i, spec, RIGID)
        if bodies is None or i in self.failed:
            return
        joint_position = self.joint_position(spec, bodies)
        axis = np.array(spec.axis, float)
        frame = orthonormal_basis(axis if spec.useGlobalFrame else bodies[0][2] @ axis)  # axis = x
        if isinstance(spec, CreateRevoluteJoint):  # axis = z; x = -(old z) keeps it a rotation (det +1)
            frame = np.column_stack([-frame[:, 2], frame[:, 1], frame[:, 0]])
        markers = []
        for k, (b, p, a) in enumerate(bodies):
            local = _matvec(a.T, joint_position - p)
            markers.append(self.append("markers", _named(spec.name and f"Marker{k}:{spec.name}", {
                "markerType": "BodyRigid", "bodyNumber": b, "localPosition": _floats(local),
                "localHT": _ht(_matmul(a.T, frame), local), "Vshow": True})))
        joint_type = "JointPrismaticX" if isinstance(spec, CreatePrismaticJoint) else "JointRevoluteZ"
        self.objects[i] = _named(spec.name, {
            "objectType": joint_type, "markerNumbers": markers, "rotationMarker0": _floats(np.eye(3)),
            "rotationMarker1": _floats(np.eye(3)), "activeConnector": True, "Vshow": spec.show,
            "VaxisRadius": spec.axisRadius, "VaxisLength": spec.axisLength, "Vcolor": spec.color})

    def spherical_joint(self, i: int, spec: CreateSphericalJoint) -> None:
        bodies = self.items(i, spec, BODIES)
        if bodies is None:
            return
        joint_position = self.joint_position(spec, bodies)
        markers = [self.append("markers", _named(spec.name and f"Marker{k}:{spec.name}", {
            "markerType": "BodyPosition", "bodyNumber": b, "localPosition": _floats(_matvec(a.T, joint_position - p)),
            "Vshow": True})) for k, (b, p, a) in enumerate(bodies)]
        self.objects[i] = _named(spec.name, {
            "objectType": "JointSpherical", "markerNumbers": markers, "constrainedAxes": spec.constrainedAxes,
            "activeConnector": True, "Vshow": spec.show, "VjointRadius": spec.jointRadius, "Vcolor": spec.color})

    def position_markers(self, spec: CreateSpringDamper | CreateDistanceConstraint,
                         bodies) -> tuple[list[int], float]:
        """The BodyPosition markers at the two local positions, and their distance in the reference
        configuration."""
        locals_ = (spec.localPosition0, spec.localPosition1)
        ends = [p + a @ np.array(local, float) for (_, p, a), local in zip(bodies, locals_)]
        markers = [self.append("markers", _named(spec.name and f"Marker{k}:{spec.name}", {
            "markerType": "BodyPosition", "bodyNumber": b, "localPosition": _floats(local), "Vshow": True}))
            for k, ((b, _, _), local) in enumerate(zip(bodies, locals_))]
        return markers, float(np.linalg.norm(ends[1] - ends[0]))

    def spring_damper(self, i: int, spec: CreateSpringDamper) -> None:
        bodies = self.items(i, spec, BODIES)
        if bodies is None:
            return
        markers, length = self.position_markers(spec, bodies)
        self.objects[i] = _named(spec.name, {
            "objectType": "ConnectorSpringDamper", "markerNumbers": markers,
            "referenceLength": spec.referenceLength if spec.referenceLength is not None else length,
            "stiffness": spec.stiffness, "damping": spec.damping, "force": spec.force,
            "velocityOffset": spec.velocityOffset, "activeConnector": True,
            **({"springForceUserFunction": spec.springForceUserFunction} if spec.springForceUserFunction != 0 else {}),
            "Vshow": spec.show, "VdrawSize": spec.drawSize, "Vcolor": spec.color})

    def distance_constraint(self, i: int, spec: CreateDistanceConstraint) -> None:
        bodies = self.items(i, spec, BODIES)
        if bodies is None:
            return
        markers, length = self.position_markers(spec, bodies)
        distance = spec.distance if spec.distance is not None else length
        if distance != 0:
            self.objects[i] = _named(spec.name, {
                "objectType": "ConnectorDistance", "markerNumbers": markers, "distance": distance,
                "activeConnector": True, "Vshow": spec.show, "VdrawSize": spec.drawSize, "Vcolor": spec.color})
            return
        # a distance of 0 cannot be held by |p1 - p0| (its Jacobian is undefined there): Exudyn's helper
        # makes the two points coincide instead, and says so
        self.warnings.append({"code": "SphericalJointInstead", "item": self.names["objects"][i],
                              "message": "CreateDistanceConstraint with distance 0 creates a JointSpherical "
                                         "(as Exudyn's helper)"})
        self.objects[i] = _named(spec.name, {
            "objectType": "JointSpherical", "markerNumbers": markers, "constrainedAxes": [1, 1, 1],
            "activeConnector": True, "Vshow": spec.show, "VjointRadius": 0.5 * spec.drawSize, "Vcolor": spec.color})


def expand_convenience(raw: dict) -> tuple[dict, list[Problem], list[dict], set[int]]:
    """(the document with convenience items expanded, problems with JSON paths, deprecation warnings,
    the indices of the convenience items that could not be expanded: they stay as they are in the
    document, and their problems, or those of the items they connect, say why).

    A document without convenience items is returned as it is; so is one whose lists are malformed
    (the schema reports that)."""
    objects = raw.get("objects")
    has_items = isinstance(objects, list) and any(
        isinstance(o, dict) and isinstance(o.get("objectType"), str) and o["objectType"].startswith("Create")
        for o in objects)
    if not has_items or any(not isinstance(raw.get(k, []), list) for k in ("nodes", "markers", "loads")):
        return raw, [], [], set()
    return _Expansion(raw).run()
