"""The model document (SPEC section 1) as pydantic models: every item type's parameters once,
with Exudyn's names and defaults. Validation, the OpenAPI schema and the docs derive from here.

Visualization keys (`Vshow`, `VaxisRadius`, ..., or a `visualization` object) are accepted on
every item and kept, unchecked, for drawing. References to other items are an index or a name.
"""
from __future__ import annotations

import functools
import keyword
import math
import re
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator, model_validator

from .field_docs import add_descriptions
from .motions import MotionSpec
from .values import did_you_mean


FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Vector1 = Annotated[list[FiniteFloat], Field(min_length=1, max_length=1)]
Vector2 = Annotated[list[FiniteFloat], Field(min_length=2, max_length=2)]
Vector3 = Annotated[list[FiniteFloat], Field(min_length=3, max_length=3)]
Vector4 = Annotated[list[FiniteFloat], Field(min_length=4, max_length=4)]
Vector6 = Annotated[list[FiniteFloat], Field(min_length=6, max_length=6)]
Vector7 = Annotated[list[FiniteFloat], Field(min_length=7, max_length=7)]
Matrix3 = Annotated[list[Vector3], Field(min_length=3, max_length=3)]
Matrix4 = Annotated[list[Vector4], Field(min_length=4, max_length=4)]
Ref = Union[int, str]  # an index in its list, or the item's name
UnsetUserFunction = Annotated[Literal[0], Field(
    description="user functions are Python code and cannot be sent to a service; 0 (unset) only")]
# a user function as an expression (SPEC section 1; its arguments: user_functions.SIGNATURES)
ScalarUserFunction = Union[Literal[0], str]
VectorUserFunction = Union[Literal[0], Annotated[list[str], Field(min_length=3, max_length=3)]]
PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# names an expression gives its own meaning (expressions.SYMBOLS, CONSTANTS, FUNCTIONS; sympy-free here)
RESERVED_NAMES = frozenset({"t", "q", "u", "pi", "e", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
                            "cosh", "tanh", "exp", "log", "sqrt", "abs", "sign", "floor", "ceil", "min", "max", "step",
                            "smoothstep", "where"})

_VIS_KEY = re.compile(r"^V[A-Za-z]")
IDENTITY3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


class RotationTranslation(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True, json_schema_extra=add_descriptions,
                              defer_build=True)
    rotation: Matrix3 = Field(default_factory=lambda: [r[:] for r in IDENTITY3])
    """3x3 rotation matrix, row by row"""
    translation: Vector3 = Field(default_factory=lambda: [0.0, 0.0, 0.0])
    """[x, y, z]"""


HT = Annotated[Union[Matrix4, RotationTranslation],
               Field(description="4x4 homogeneous transformation (row by row) or {rotation, translation}")]


def ht_parts(ht: Any) -> tuple[list[list[float]], list[float]]:
    """(3x3 rotation, translation) of an HT given either way."""
    if isinstance(ht, RotationTranslation):
        return ht.rotation, ht.translation
    return [row[:3] for row in ht[:3]], [row[3] for row in ht[:3]]


# item names appear in URLs (GET /v1/jobs/{id}/sensors/{name}) and in sweep paths (objects[name]):
# letters, digits and _ - . : @ ~ + only, and not "." or ".." (which clients resolve away)
NAME_PATTERN = re.compile(r"(?!\.\.?$)[A-Za-z0-9_.:@~+-]{1,128}")
NAME_RULE = "1 to 128 letters (A-Z, a-z), digits and _ - . : @ ~ +, not '.' or '..'"


class Item(BaseModel):
    """Common to all items: a name, visualization keys kept aside, no unknown keys, strict types
    (a string is not a number)."""
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True, json_schema_extra=add_descriptions,
                              defer_build=True)
    name: str = ""
    """the item's name, to refer to it instead of its index; default: Exudyn's node0, object1, marker2, ...;
    1 to 128 letters (A-Z, a-z), digits and _ - . : @ ~ +, not '.' or '..' (names appear in URLs)"""

    @field_validator("name")
    @classmethod
    def url_safe_name(cls, name: str) -> str:
        if name and not NAME_PATTERN.fullmatch(name):
            raise ValueError(f"the name {name[:40]!r} has characters that are not allowed; a name is {NAME_RULE}")
        return name
    visualization: dict[str, Any] = Field(default_factory=dict, description="drawing parameters, kept unchecked")

    @model_validator(mode="before")
    @classmethod
    def collect_visualization(cls, data: Any) -> Any:
        if isinstance(data, dict):
            vis = {k: v for k, v in data.items() if isinstance(k, str) and _VIS_KEY.match(k)}
            if vis:
                data = {k: v for k, v in data.items() if k not in vis}
                data["visualization"] = {**vis, **(data.get("visualization") or {})}
        return data


def _orthonormal(m: list[list[float]], what: str) -> list[list[float]]:
    cols = list(zip(*m))
    for i in range(3):
        for j in range(3):
            dot = sum(a * b for a, b in zip(cols[i], cols[j]))
            if abs(dot - (1.0 if i == j else 0.0)) > 1e-6:
                raise ValueError(f"{what} is not a rotation matrix (columns not orthonormal)")
    det = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
           + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
    if det < 0:
        raise ValueError(f"{what} is a reflection (determinant -1), not a rotation")
    return m


# ------------------------------------------------------------------------------------ nodes
class NodeRigidBodyEP(Item):
    nodeType: Literal["RigidBodyEP"]
    referenceCoordinates: Vector7 = Field(default_factory=lambda: [0.0] * 7,
                                          description="[x,y,z, θ0,θ1,θ2,θ3] (Euler parameters)")
    initialCoordinates: Vector7 = Field(default_factory=lambda: [0.0] * 7, description="q at startTime, added to reference")
    initialVelocities: Vector7 = Field(default_factory=lambda: [0.0] * 7, description="q̇ at startTime")
    addConstraintEquation: bool = True
    """add the Euler parameters' normalization constraint (Exudyn's default)"""

    @field_validator("referenceCoordinates")
    @classmethod
    def unit_ep(cls, v: list[float]) -> list[float]:
        if abs(math.sqrt(sum(x * x for x in v[3:])) - 1.0) > 1e-6:
            raise ValueError("the Euler parameters (entries 3..6) must have unit length")
        return v


class NodeRigidBodyRxyz(Item):
    """A rigid-body node whose rotation coordinates are Tait-Bryan angles x-y-z (A = Rx(φ0) Ry(φ1) Rz(φ2)):
    no algebraic constraint, singular at φ1 = ±π/2."""
    nodeType: Literal["RigidBodyRxyz"]
    referenceCoordinates: Vector6 = Field(default_factory=lambda: [0.0] * 6,
                                          description="[x,y,z, φ0,φ1,φ2] (Tait-Bryan angles x-y-z, rad)")
    initialCoordinates: Vector6 = Field(default_factory=lambda: [0.0] * 6,
                                        description="q at startTime, added to reference")
    initialVelocities: Vector6 = Field(default_factory=lambda: [0.0] * 6, description="q̇ at startTime (angle rates)")


class NodeRigidBodyRotVecLG(Item):
    """A rigid-body node whose rotation coordinates are a rotation vector ν (A = exp(ν̃)) and whose rotation rates
    are the body-axis angular velocity ω̄ (Exudyn's Lie group node): the solvers update ν by composition,
    ν ∘ exp(Δ), not by adding; no algebraic constraint, no singularity."""
    nodeType: Literal["RigidBodyRotVecLG"]
    referenceCoordinates: Vector6 = Field(default_factory=lambda: [0.0] * 6,
                                          description="[x,y,z, ν0,ν1,ν2] (position, rotation vector in rad)")
    initialCoordinates: Vector6 = Field(default_factory=lambda: [0.0] * 6,
                                        description="q at startTime, added to reference")
    initialVelocities: Vector6 = Field(default_factory=lambda: [0.0] * 6,
                                       description="[vx,vy,vz, ω̄0,ω̄1,ω̄2] at startTime (ω̄ in body axes)")


class NodePoint(Item):
    nodeType: Literal["Point"]
    referenceCoordinates: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """[x, y, z] reference position"""
    initialCoordinates: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """displacement [x, y, z] at startTime, added to the reference"""
    initialVelocities: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """velocity [vx, vy, vz] at startTime"""


class NodePointGround(Item):
    """A ground point: no coordinates; NodeCoordinate markers on it read 0."""
    nodeType: Literal["PointGround"]
    referenceCoordinates: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """[x, y, z] position of the ground point"""


class NodeRigidBody2D(Item):
    """A planar rigid-body node: x, y and the rotation φ about the z axis."""
    nodeType: Literal["RigidBody2D"]
    referenceCoordinates: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """[x, y, φ] reference position and rotation about z (rad)"""
    initialCoordinates: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """[x, y, φ] at startTime, added to the reference"""
    initialVelocities: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """[vx, vy, ω] at startTime"""


class NodePoint2D(Item):
    """A planar point node: x and y."""
    nodeType: Literal["Point2D"]
    referenceCoordinates: Vector2 = Field(default_factory=lambda: [0.0] * 2)
    """[x, y] reference position"""
    initialCoordinates: Vector2 = Field(default_factory=lambda: [0.0] * 2)
    """displacement [x, y] at startTime, added to the reference"""
    initialVelocities: Vector2 = Field(default_factory=lambda: [0.0] * 2)
    """velocity [vx, vy] at startTime"""


class NodePoint2DSlope1(Item):
    """A planar ANCF node: a position [x, y] and the slope r' = ∂r/∂x along the cable's axis (ANCFCable2D)."""
    nodeType: Literal["Point2DSlope1"]
    referenceCoordinates: Vector4 = Field(default_factory=lambda: [0.0, 0.0, 1.0, 0.0])
    """[x, y, r'x, r'y] reference position and slope (a straight cable along x: slope [1, 0])"""
    initialCoordinates: Vector4 = Field(default_factory=lambda: [0.0] * 4)
    """displacements of [x, y, r'x, r'y] at startTime, added to the reference"""
    initialVelocities: Vector4 = Field(default_factory=lambda: [0.0] * 4)
    """their rates at startTime"""


class NodeGenericODE2(Item):
    """n second-order coordinates without a position or rotation (ObjectGenericODE2 gives them M, K, D;
    NodeCoordinate markers, CoordinateSpringDampers and ConnectorCoordinates act on them)."""
    nodeType: Literal["GenericODE2"]
    numberOfODE2Coordinates: Annotated[int, Field(ge=1)]
    """n, the number of coordinates"""
    referenceCoordinates: list[FiniteFloat] = Field(default_factory=list)
    """n reference values (default zeros; at least one of the three vectors is given)"""
    initialCoordinates: list[FiniteFloat] = Field(default_factory=list)
    """n coordinates at startTime, added to the reference (default zeros)"""
    initialCoordinates_t: list[FiniteFloat] = Field(default_factory=list)
    """n velocities at startTime (default zeros)"""

    @model_validator(mode="after")
    def sizes(self):
        n = self.numberOfODE2Coordinates
        keys = ("referenceCoordinates", "initialCoordinates", "initialCoordinates_t")
        for key in keys:
            if getattr(self, key) and len(getattr(self, key)) != n:
                raise ValueError(f"{key} has {len(getattr(self, key))} entries, numberOfODE2Coordinates is {n}")
        # a given vector makes the document as long as the node's state: n stays within the request's size
        if not any(getattr(self, key) for key in keys):
            raise ValueError(f"give referenceCoordinates, initialCoordinates or initialCoordinates_t with the node's "
                             f"{n} values (the others default to zeros)")
        for key in keys:
            if not getattr(self, key):
                setattr(self, key, [0.0] * n)
        return self

    @property
    def initialVelocities(self) -> list[float]:  # the name the other nodes use
        return self.initialCoordinates_t


class Node1D(Item):
    """One ODE2 coordinate: a position along (ObjectMass1D) or a rotation about (ObjectRotationalMass1D) an axis of
    the body that sits on it; NodeCoordinate markers, CoordinateSpringDampers and ConnectorCoordinates act on it."""
    nodeType: Literal["1D"]
    referenceCoordinates: Vector1 = Field(default_factory=lambda: [0.0])
    """[q_ref] reference coordinate"""
    initialCoordinates: Vector1 = Field(default_factory=lambda: [0.0])
    """[q] at startTime, added to the reference"""
    initialVelocities: Vector1 = Field(default_factory=lambda: [0.0])
    """[q̇] at startTime"""


MAX_DATA_COORDINATES = 1000  # a NodeGenericData's; the connectors that use one take 3


class NodeGenericData(Item):
    """Data coordinates of a connector with a discontinuous iteration (ConnectorRollingDiscPenalty): set after
    each Newton solve, fixed during it; no ODE2 coordinates."""
    nodeType: Literal["GenericData"]
    numberOfDataCoordinates: Annotated[int, Field(ge=0, le=MAX_DATA_COORDINATES)] = 0
    """n, the number of data coordinates"""
    initialCoordinates: list[FiniteFloat] = Field(default_factory=list)
    """n values at startTime (default zeros)"""

    @model_validator(mode="after")
    def size(self):
        n = self.numberOfDataCoordinates
        if not self.initialCoordinates:
            self.initialCoordinates = [0.0] * n
        elif len(self.initialCoordinates) != n:
            raise ValueError(f"initialCoordinates has {len(self.initialCoordinates)} entries, "
                             f"numberOfDataCoordinates is {n}")
        return self


NODE_COORDINATES = {"RigidBodyEP": 7, "RigidBodyRxyz": 6, "RigidBodyRotVecLG": 6, "RigidBody2D": 3, "Point": 3,
                    "PointGround": 0, "Point2D": 2, "Point2DSlope1": 4, "GenericData": 0,
                    "1D": 1}  # ODE2 coordinates of the node types with a fixed number


def node_coordinates(node) -> int:
    """The node's number of ODE2 coordinates."""
    return node.numberOfODE2Coordinates if node.nodeType == "GenericODE2" else NODE_COORDINATES[node.nodeType]


Node = Annotated[Union[NodeRigidBodyEP, NodeRigidBodyRxyz, NodeRigidBodyRotVecLG, NodePoint, NodePointGround,
                       NodeRigidBody2D, NodePoint2D, NodePoint2DSlope1, NodeGenericODE2, NodeGenericData, Node1D],
                 Field(discriminator="nodeType")]


# ---------------------------------------------------------------------------------- objects
class ObjectGround(Item):
    objectType: Literal["Ground"]
    referencePosition: Vector3 | None = None
    """position of the ground frame"""
    referenceRotation: Matrix3 | None = None
    """rotation of the ground frame (3x3, row by row)"""
    referenceHT: HT | None = None
    """the ground frame as one transformation, instead of referencePosition/Rotation"""

    @field_validator("referenceRotation")
    @classmethod
    def check_rotation(cls, v):
        return None if v is None else _orthonormal(v, "referenceRotation")


class ObjectRigidBody(Item):
    objectType: Literal["RigidBody"]
    nodeNumber: Ref = -1
    """its RigidBodyEP, RigidBodyRxyz or RigidBodyRotVecLG node (index or name)"""
    mass: FiniteFloat = 0.0
    """mass in kg; must be positive"""
    inertia: Vector6 = Field(default_factory=lambda: [0.0] * 6,
                             description="[Jxx,Jyy,Jzz,Jyz,Jxz,Jxy] about the reference point, body axes")
    centerOfMass: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """center of mass relative to the reference point, body axes"""


class ObjectMassPoint(Item):
    objectType: Literal["MassPoint"]
    nodeNumber: Ref = -1
    """its Point node (index or name); or a PointGround node: a fixed point whose mass acts nowhere"""
    mass: FiniteFloat = 0.0
    """mass in kg; must be positive (on a PointGround node: not negative)"""


class ObjectRigidBody2D(Item):
    """A planar rigid body on a RigidBody2D node: M = diag(m, m, J), or with the center of mass b away
    from the node M = [[m I, m ∂(A b)/∂φ], [m ∂(A b)/∂φᵀ, J]] and the centrifugal force m φ̇² A b."""
    objectType: Literal["RigidBody2D"]
    nodeNumber: Ref = -1
    """its RigidBody2D node (index or name)"""
    mass: FiniteFloat = 0.0
    """mass in kg; must be positive"""
    inertia: FiniteFloat = 0.0
    """moment of inertia about the z axis through the node (kg m²), not through the center of mass; must be positive"""
    centerOfMass: Vector2 = Field(default_factory=lambda: [0.0] * 2)
    """center of mass relative to the node, body axes"""


class ObjectMassPoint2D(Item):
    """A planar mass point on a Point2D node: M = diag(m, m)."""
    objectType: Literal["MassPoint2D"]
    nodeNumber: Ref = -1
    """its Point2D node (index or name)"""
    mass: FiniteFloat = 0.0
    """mass in kg; must be positive"""


class _Connector(Item):
    markerNumbers: Annotated[list[Ref], Field(min_length=2, max_length=2)] = Field(default_factory=lambda: [-1, -1])
    """[marker 0, marker 1]: the two markers it connects (index or name)"""
    activeConnector: bool = True
    """false: switched off (no constraint or force)"""


class _RotationMarkers(_Connector):
    rotationMarker0: Matrix3 = Field(default_factory=lambda: [r[:] for r in IDENTITY3],
                                     description="deprecated: give the rotation as marker 0's localHT")
    rotationMarker1: Matrix3 = Field(default_factory=lambda: [r[:] for r in IDENTITY3],
                                     description="deprecated: give the rotation as marker 1's localHT")

    @field_validator("rotationMarker0", "rotationMarker1")
    @classmethod
    def check_rotation(cls, v, info):
        return _orthonormal(v, info.field_name)


class ObjectJointPrismaticX(_RotationMarkers):
    objectType: Literal["JointPrismaticX"]


class ObjectJointRevoluteZ(_RotationMarkers):
    objectType: Literal["JointRevoluteZ"]


class ObjectJointRevolute2D(_Connector):
    """A planar revolute joint: the x and y of marker 1's position equal those of marker 0 (position markers)."""
    objectType: Literal["JointRevolute2D"]


class ObjectJointPrismatic2D(_Connector):
    """A planar prismatic joint between two rigid-body markers: (p1 - p0)ᵀ A1 n1 = 0 and, with
    constrainRotation, (A0 t0)ᵀ A1 n1 = 0 (t0 = axisMarker0, n1 = normalMarker1; neither normalized)."""
    objectType: Literal["JointPrismatic2D"]
    axisMarker0: Vector3 = Field(default_factory=lambda: [1.0, 0.0, 0.0])
    """the sliding axis t0 in marker 0's frame"""
    normalMarker1: Vector3 = Field(default_factory=lambda: [0.0, 1.0, 0.0])
    """the normal n1 to the sliding axis in marker 1's frame"""
    constrainRotation: bool = True
    """also hold the relative rotation (false: marker 1 may turn; its multiplier stays 0)"""


class ObjectJointSpherical(_Connector):
    objectType: Literal["JointSpherical"]
    constrainedAxes: Annotated[list[Literal[0, 1]], Field(min_length=3, max_length=3)] = Field(
        default_factory=lambda: [1, 1, 1])
    """translations [x, y, z] held (1) or free (0)"""


class ObjectJointGeneric(_RotationMarkers):
    objectType: Literal["JointGeneric"]
    constrainedAxes: Annotated[list[Literal[0, 1]], Field(min_length=6, max_length=6)] = Field(
        default_factory=lambda: [1] * 6)
    """[x, y, z, rx, ry, rz] in marker 0's joint frame: held (1) or free (0)"""
    offsetUserFunctionParameters: Vector6 = Field(default_factory=lambda: [0.0] * 6)
    """parameters of offsetUserFunction (Exudyn); no effect without one"""
    offsetUserFunction: UnsetUserFunction = 0
    """0: none (a Python user function cannot be sent)"""
    offsetUserFunction_t: UnsetUserFunction = 0
    """0: none (a Python user function cannot be sent)"""
    alternativeConstraints: Literal[False] = Field(False, description="the alternative (triple product) "
                                                   "rotation constraints are not supported")


class ObjectConnectorSpringDamper(_Connector):
    objectType: Literal["ConnectorSpringDamper"]
    referenceLength: FiniteFloat = 0.0
    """length at which the spring force is zero"""
    stiffness: FiniteFloat = 0.0
    """spring stiffness (N/m)"""
    damping: FiniteFloat = 0.0
    """damping (N s/m)"""
    force: FiniteFloat = 0.0
    """constant force added along the spring (N), positive in tension"""
    velocityOffset: FiniteFloat = 0.0
    """velocity subtracted from the length rate in the damping term"""
    springForceUserFunction: ScalarUserFunction = 0
    """0: none; or the force as an expression over t, deltaL (L - L0), deltaL_t (the length rate minus velocityOffset), stiffness, damping, force, itemNumber; it replaces k·deltaL + d·deltaL_t + force"""


class ObjectConnectorCartesianSpringDamper(_Connector):
    objectType: Literal["ConnectorCartesianSpringDamper"]
    stiffness: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """stiffness per global axis [kx, ky, kz]"""
    damping: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """damping per global axis [dx, dy, dz]"""
    offset: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """displacement [x, y, z] of marker 1 from marker 0 at zero force"""
    springForceUserFunction: VectorUserFunction = 0
    """0: none; or the force [Fx, Fy, Fz] as 3 expressions over t, displacement[i] (marker 1 minus marker 0), velocity[i], stiffness[i], damping[i], offset[i], itemNumber"""


class ObjectConnectorCoordinateSpringDamper(_Connector):
    objectType: Literal["ConnectorCoordinateSpringDamper"]
    stiffness: FiniteFloat = 0.0
    """stiffness between the two coordinates"""
    damping: FiniteFloat = 0.0
    """damping between the two coordinates"""
    offset: FiniteFloat = 0.0
    """difference q1 - q0 at zero force"""
    springForceUserFunction: ScalarUserFunction = 0
    """0: none; or the force as an expression over t, displacement (q1 - q0), velocity, stiffness, damping, offset, itemNumber"""


class ObjectConnectorCoordinate(_Connector):
    objectType: Literal["ConnectorCoordinate"]
    offset: FiniteFloat = 0.0
    """the constraint is factor1·q1 - q0 = offset"""
    factor1: FiniteFloat = 1.0
    """factor of marker 1's coordinate"""
    velocityLevel: bool = False
    """constrain the coordinates' velocities instead: factor1·q̇1 - q̇0 = offset"""
    offsetUserFunction: UnsetUserFunction = 0
    """0: none (a Python user function cannot be sent)"""
    offsetUserFunction_t: UnsetUserFunction = 0
    """0: none (a Python user function cannot be sent)"""


Object = Annotated[Union[
    ObjectGround, ObjectRigidBody, ObjectMassPoint, ObjectRigidBody2D, ObjectMassPoint2D, ObjectJointPrismaticX,
    ObjectJointRevoluteZ, ObjectJointRevolute2D, ObjectJointPrismatic2D, ObjectJointSpherical, ObjectJointGeneric,
    ObjectConnectorSpringDamper, ObjectConnectorCartesianSpringDamper, ObjectConnectorCoordinateSpringDamper,
    ObjectConnectorCoordinate,
], Field(discriminator="objectType")]


# ---------------------------------------------------------------------------------- markers
class MarkerBodyRigid(Item):
    markerType: Literal["BodyRigid"]
    bodyNumber: Ref = -1
    """the body (RigidBody, RigidBody2D or Ground; index or name)"""
    localPosition: Vector3 | None = None
    """position in body coordinates"""
    localHT: HT | None = None
    """frame in body coordinates (rotation and position); overrides localPosition"""


class MarkerBodyPosition(Item):
    markerType: Literal["BodyPosition"]
    bodyNumber: Ref = -1
    """the body (index or name)"""
    localPosition: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """position in body coordinates"""


class MarkerBodyMass(Item):
    markerType: Literal["BodyMass"]
    bodyNumber: Ref = -1
    """the body whose mass a MassProportional load acts on (index or name)"""


class MarkerNodeCoordinate(Item):
    markerType: Literal["NodeCoordinate"]
    nodeNumber: Ref = -1
    """the node (index or name)"""
    coordinate: int = -1
    """which of the node's coordinates (0-based); required"""


class MarkerNodeRigid(Item):
    markerType: Literal["NodeRigid"]
    nodeNumber: Ref = -1
    """the RigidBodyEP, RigidBodyRxyz, RigidBodyRotVecLG or RigidBody2D node (index or name)"""
    localHT: HT | None = None
    """frame relative to the node's frame"""


class MarkerNodePosition(Item):
    markerType: Literal["NodePosition"]
    nodeNumber: Ref = -1
    """the node (index or name)"""


Marker = Annotated[Union[MarkerBodyRigid, MarkerBodyPosition, MarkerBodyMass, MarkerNodeCoordinate,
                         MarkerNodeRigid, MarkerNodePosition], Field(discriminator="markerType")]


# ------------------------------------------------------------------------------------ loads
class LoadForceVector(Item):
    loadType: Literal["ForceVector"]
    markerNumber: Ref = -1
    """the position marker it acts at (index or name)"""
    loadVector: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """force [Fx, Fy, Fz] in N, global axes (body axes with bodyFixed)"""
    bodyFixed: bool = False
    """the vector turns with the body (body axes)"""
    loadVectorUserFunction: VectorUserFunction = 0
    """0: none; or the vector as 3 expressions over t and loadVector[i]; it replaces loadVector (the static solver's load factor does not scale it)"""


class LoadTorqueVector(Item):
    loadType: Literal["TorqueVector"]
    markerNumber: Ref = -1
    """the rigid-body marker it acts at (index or name)"""
    loadVector: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """torque [Mx, My, Mz] in N m, global axes (body axes with bodyFixed)"""
    bodyFixed: bool = False
    """the vector turns with the body (body axes)"""
    loadVectorUserFunction: VectorUserFunction = 0
    """0: none; or the vector as 3 expressions over t and loadVector[i]; it replaces loadVector (the static solver's load factor does not scale it)"""


class LoadMassProportional(Item):
    loadType: Literal["MassProportional"]
    markerNumber: Ref = -1
    """the BodyMass marker of the body (index or name)"""
    loadVector: Vector3 = Field(default_factory=lambda: [0.0] * 3, description="acceleration, e.g. gravity")
    loadVectorUserFunction: VectorUserFunction = 0
    """0: none; or the acceleration as 3 expressions over t and loadVector[i]; it replaces loadVector (the static solver's load factor does not scale it)"""


class LoadCoordinate(Item):
    loadType: Literal["Coordinate"]
    markerNumber: Ref = -1
    """the NodeCoordinate marker (index or name)"""
    load: FiniteFloat = 0.0
    """generalized force on the coordinate"""
    loadUserFunction: ScalarUserFunction = 0
    """0: none; or the load as an expression over t and load; it replaces load (the static solver's load factor does not scale it)"""


Load = Annotated[Union[LoadForceVector, LoadTorqueVector, LoadMassProportional, LoadCoordinate],
                 Field(discriminator="loadType")]


# ---------------------------------------------------------------------------------- sensors
OUTPUT_VARIABLE_TYPES = (
    "Distance", "Position", "Displacement", "DisplacementLocal", "Velocity", "VelocityLocal", "Acceleration",
    "AccelerationLocal", "RotationMatrix", "Rotation", "AngularVelocity", "AngularVelocityLocal",
    "AngularAcceleration", "AngularAccelerationLocal", "CoordinatesTotal", "Coordinates", "Coordinates_t",
    "Coordinates_tt", "SlidingCoordinate", "Director1", "Director2", "Director3", "Force", "ForceLocal",
    "Torque", "TorqueLocal", "StrainLocal", "StressLocal", "CurvatureLocal", "ConstraintEquation",
    "KineticEnergy", "PotentialEnergy", "HomogeneousTransformation", "HomogeneousTransformationLocal",
    "Coordinate", "Coordinate_t", "Coordinate_tt",
)


class _Sensor(Item):
    writeToFile: bool = True
    """Exudyn's sensor file; accepted, the results hold every sensor"""
    fileName: str = ""
    """Exudyn's sensor file name; accepted, not used"""
    storeInternal: bool = False
    """accepted; every sensor is stored"""


class _OutputSensor(_Sensor):
    outputVariableType: str
    """what to measure: an output variable of the item (see its type)"""

    @field_validator("outputVariableType", mode="before")
    @classmethod
    def strip_enum_prefix(cls, v: Any) -> Any:
        if isinstance(v, str) and v.startswith("OutputVariableType."):
            return v[len("OutputVariableType."):]
        return v

    @field_validator("outputVariableType")
    @classmethod
    def known_output(cls, v: str) -> str:
        if v not in OUTPUT_VARIABLE_TYPES:
            raise ValueError(f"unknown OutputVariableType {v!r}{did_you_mean(v, OUTPUT_VARIABLE_TYPES)}")
        return v


class SensorNode(_OutputSensor):
    sensorType: Literal["Node"]
    nodeNumber: Ref = -1
    """the node it reads (index or name)"""


class SensorObject(_OutputSensor):
    sensorType: Literal["Object"]
    objectNumber: Ref = -1
    """the object it reads (index or name)"""


class SensorBody(_OutputSensor):
    sensorType: Literal["Body"]
    bodyNumber: Ref = -1
    """the body it reads (index or name)"""
    localPosition: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    """the point it reads, in body coordinates"""


class SensorMarker(_OutputSensor):
    sensorType: Literal["Marker"]
    markerNumber: Ref = -1
    """the marker it reads (index or name)"""


class SensorLoad(_Sensor):
    sensorType: Literal["Load"]
    loadNumber: Ref = -1
    """the load it reads (index or name)"""
    outputVariableType: str = Field("_None", description="a load sensor gives the load's vector")

    @field_validator("outputVariableType", mode="before")
    @classmethod
    def load_output(cls, v: Any) -> Any:
        return "_None" if v in (None, "_None", "OutputVariableType._None") else v


class SensorMotion(_Sensor):
    sensorType: Literal["Motion"]
    motionNumber: Ref = -1
    """the motion it reads (index or name)"""
    outputVariableType: Literal["Coordinate", "Coordinate_t", "Coordinate_tt", "Force"]
    """the joint coordinate, its rate, its acceleration, or the force (torque) of the motion"""

    @field_validator("outputVariableType", mode="before")
    @classmethod
    def strip_enum_prefix(cls, v: Any) -> Any:
        return v[len("OutputVariableType."):] if isinstance(v, str) and v.startswith("OutputVariableType.") else v


Sensor = Annotated[Union[SensorNode, SensorObject, SensorBody, SensorMarker, SensorLoad, SensorMotion],
                   Field(discriminator="sensorType")]


class Solve(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=add_descriptions, defer_build=True)
    type: Literal["Dynamic", "Static"] = "Dynamic"
    """a time integration (Dynamic) or a static solve with load steps (Static)"""
    solverType: str = "GeneralizedAlpha"
    """Exudyn's DynamicSolverType name"""

    @field_validator("solverType", mode="before")
    @classmethod
    def strip_prefix(cls, v: Any) -> Any:
        if isinstance(v, str) and v.startswith("DynamicSolverType."):
            return v[len("DynamicSolverType."):]
        return v


class ModelDocument(BaseModel):
    """A model: Exudyn item lists, Simbody-style motions, settings and the kind of solve."""
    # built once the item modules have added their object types (items, rebuild_objects)
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=add_descriptions, defer_build=True)
    name: str = ""
    nodes: list[Node] = Field(default_factory=list)
    objects: list[Object] = Field(default_factory=list)
    markers: list[Marker] = Field(default_factory=list)
    loads: list[Load] = Field(default_factory=list)
    sensors: list[Sensor] = Field(default_factory=list)
    motions: list[MotionSpec] = Field(default_factory=list)
    parameters: dict[str, FiniteFloat] = Field(default_factory=dict)
    """named constants that every expression (user functions, motion laws) may use: {"name": number}"""
    simulationSettings: dict[str, Any] = Field(default_factory=dict,
                                               description="Exudyn's SimulationSettings, nested names")
    solve: Solve = Field(default_factory=Solve)

    @field_validator("parameters")
    @classmethod
    def parameter_names(cls, parameters: dict[str, float]) -> dict[str, float]:
        for name in parameters:
            if not PARAMETER_NAME.fullmatch(name) or keyword.iskeyword(name):
                raise ValueError(f"parameter name {name[:40]!r}: a name is a letter or _ followed by letters, "
                                 "digits and _ (at most 64), not a Python keyword")
            if name in RESERVED_NAMES:
                raise ValueError(f"parameter name {name!r} is taken by the expression language (t, q, u, pi, e "
                                 "and the function names)")
        return parameters


LIST_KINDS = {"nodes": "node", "objects": "object", "markers": "marker", "loads": "load",
              "sensors": "sensor", "motions": "motion"}
TYPE_KEY = {"nodes": "nodeType", "objects": "objectType", "markers": "markerType", "loads": "loadType",
            "sensors": "sensorType", "motions": "motionType"}


def _members(union) -> dict[str, type[BaseModel]]:
    """type name -> item class of a discriminated union of items."""
    classes = get_args(get_args(union)[0])
    key = next(k for k in TYPE_KEY.values() if k in classes[0].model_fields)
    return {get_args(cls.model_fields[key].annotation)[0]: cls for cls in classes}


ITEM_TYPES = {kind: _members(union) for kind, union in (
    ("nodes", Node), ("objects", Object), ("markers", Marker), ("loads", Load), ("sensors", Sensor),
    ("motions", MotionSpec))}


def add_object_type(cls: type[Item], rebuild: bool = True) -> None:
    """Accept documents with an object type whose schema class is declared in its item module
    (items.register); the OpenAPI union follows. rebuild=False: not yet (rebuild_objects(), once
    for several types: each rebuild of the document's schema costs ~10 ms)."""
    ITEM_TYPES["objects"][get_args(cls.model_fields["objectType"].annotation)[0]] = cls
    if rebuild:
        rebuild_objects()


def remove_object_type(name: str) -> None:
    """Undo add_object_type (a test's own item type)."""
    del ITEM_TYPES["objects"][name]
    rebuild_objects()


def rebuild_objects() -> None:
    union = Annotated[Union[tuple(ITEM_TYPES["objects"].values())], Field(discriminator="objectType")]
    ModelDocument.model_fields["objects"].annotation = list[union]
    _document_class.cache_clear()
    if ModelDocument.__pydantic_complete__:  # else built when first used
        ModelDocument.model_rebuild(force=True)


def document(doc: Any) -> ModelDocument:
    """ModelDocument.model_validate(doc). A document whose items all name known types is validated
    by a ModelDocument that knows only those types: the same result, and a cold run builds the
    schema of a few item types instead of all (~40 ms). The whole ModelDocument validates any
    other document, and one that the narrower class refuses, so problems are reported the same."""
    used = _used_types(doc)
    if used is not None:
        try:
            return _document_class(used).model_validate(doc)
        except ValidationError:
            pass
    return ModelDocument.model_validate(doc)


def _used_types(doc: Any) -> tuple[tuple[str, ...], ...] | None:
    """The type names each list of `doc` uses (LIST_KINDS' order); None if an item is no object or
    names no known type."""
    if not isinstance(doc, dict):
        return None
    used = []
    for kind, key in TYPE_KEY.items():
        items = doc.get(kind, [])
        if not isinstance(items, list):
            return None
        names = set()
        for item in items:
            name = item.get(key) if isinstance(item, dict) else None
            if not isinstance(name, str) or name not in ITEM_TYPES[kind]:
                return None
            names.add(name)
        used.append(tuple(sorted(names)))
    return tuple(used)


@functools.lru_cache(maxsize=64)
def _document_class(used: tuple[tuple[str, ...], ...]) -> type[ModelDocument]:
    lists = {}
    for (kind, key), names in zip(TYPE_KEY.items(), used):
        classes = tuple(ITEM_TYPES[kind][name] for name in names)
        item = (Any if not classes else classes[0] if len(classes) == 1
                else Annotated[Union[classes], Field(discriminator=key)])
        lists[kind] = (list[item], Field(default_factory=list))
    return create_model("ModelDocument", __base__=ModelDocument, __module__=__name__, **lists)
