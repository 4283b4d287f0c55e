"""The model document (SPEC section 1) as pydantic models: every item type's parameters once,
with Exudyn's names and defaults. Validation, the OpenAPI schema and the docs derive from here.

Visualization keys (`Vshow`, `VaxisRadius`, ..., or a `visualization` object) are accepted on
every item and kept, unchecked, for drawing. References to other items are an index or a name.
"""
from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .motions import MotionSpec
from .values import did_you_mean


FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Vector3 = Annotated[list[FiniteFloat], Field(min_length=3, max_length=3)]
Vector4 = Annotated[list[FiniteFloat], Field(min_length=4, max_length=4)]
Vector6 = Annotated[list[FiniteFloat], Field(min_length=6, max_length=6)]
Vector7 = Annotated[list[FiniteFloat], Field(min_length=7, max_length=7)]
Matrix3 = Annotated[list[Vector3], Field(min_length=3, max_length=3)]
Matrix4 = Annotated[list[Vector4], Field(min_length=4, max_length=4)]
Ref = Annotated[Union[int, str], Field(description="index in its list, or the item's name")]
UnsetUserFunction = Annotated[Literal[0], Field(
    description="user functions are Python code and cannot be sent to a service; 0 (unset) only")]

_VIS_KEY = re.compile(r"^V[A-Za-z]")
IDENTITY3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


class RotationTranslation(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)
    rotation: Matrix3 = Field(default_factory=lambda: [r[:] for r in IDENTITY3])
    translation: Vector3 = Field(default_factory=lambda: [0.0, 0.0, 0.0])


HT = Annotated[Union[Matrix4, RotationTranslation],
               Field(description="4x4 homogeneous transformation (row by row) or {rotation, translation}")]


def ht_parts(ht: Any) -> tuple[list[list[float]], list[float]]:
    """(3x3 rotation, translation) of an HT given either way."""
    if isinstance(ht, RotationTranslation):
        return ht.rotation, ht.translation
    return [row[:3] for row in ht[:3]], [row[3] for row in ht[:3]]


class Item(BaseModel):
    """Common to all items: a name, visualization keys kept aside, no unknown keys, strict types
    (a string is not a number)."""
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)
    name: str = ""
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

    @field_validator("referenceCoordinates")
    @classmethod
    def unit_ep(cls, v: list[float]) -> list[float]:
        if abs(math.sqrt(sum(x * x for x in v[3:])) - 1.0) > 1e-6:
            raise ValueError("the Euler parameters (entries 3..6) must have unit length")
        return v


class NodePoint(Item):
    nodeType: Literal["Point"]
    referenceCoordinates: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    initialCoordinates: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    initialVelocities: Vector3 = Field(default_factory=lambda: [0.0] * 3)


class NodePointGround(Item):
    """A ground point: no coordinates; NodeCoordinate markers on it read 0."""
    nodeType: Literal["PointGround"]
    referenceCoordinates: Vector3 = Field(default_factory=lambda: [0.0] * 3)


Node = Annotated[Union[NodeRigidBodyEP, NodePoint, NodePointGround], Field(discriminator="nodeType")]


# ---------------------------------------------------------------------------------- objects
class ObjectGround(Item):
    objectType: Literal["Ground"]
    referencePosition: Vector3 | None = None
    referenceRotation: Matrix3 | None = None
    referenceHT: HT | None = None

    @field_validator("referenceRotation")
    @classmethod
    def check_rotation(cls, v):
        return None if v is None else _orthonormal(v, "referenceRotation")


class ObjectRigidBody(Item):
    objectType: Literal["RigidBody"]
    nodeNumber: Ref = -1
    mass: FiniteFloat = 0.0
    inertia: Vector6 = Field(default_factory=lambda: [0.0] * 6,
                             description="[Jxx,Jyy,Jzz,Jyz,Jxz,Jxy] about the reference point, body axes")
    centerOfMass: Vector3 = Field(default_factory=lambda: [0.0] * 3)


class ObjectMassPoint(Item):
    objectType: Literal["MassPoint"]
    nodeNumber: Ref = -1
    mass: FiniteFloat = 0.0


class _Connector(Item):
    markerNumbers: Annotated[list[Ref], Field(min_length=2, max_length=2)] = Field(default_factory=lambda: [-1, -1])
    activeConnector: bool = True


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


class ObjectJointSpherical(_Connector):
    objectType: Literal["JointSpherical"]
    constrainedAxes: Annotated[list[Literal[0, 1]], Field(min_length=3, max_length=3)] = Field(
        default_factory=lambda: [1, 1, 1])


class ObjectJointGeneric(_RotationMarkers):
    objectType: Literal["JointGeneric"]
    constrainedAxes: Annotated[list[Literal[0, 1]], Field(min_length=6, max_length=6)] = Field(
        default_factory=lambda: [1] * 6)
    offsetUserFunctionParameters: Vector6 = Field(default_factory=lambda: [0.0] * 6)
    offsetUserFunction: UnsetUserFunction = 0
    offsetUserFunction_t: UnsetUserFunction = 0
    alternativeConstraints: Literal[False] = Field(False, description="the alternative (triple product) "
                                                   "rotation constraints are not supported")


class ObjectConnectorSpringDamper(_Connector):
    objectType: Literal["ConnectorSpringDamper"]
    referenceLength: FiniteFloat = 0.0
    stiffness: FiniteFloat = 0.0
    damping: FiniteFloat = 0.0
    force: FiniteFloat = 0.0
    velocityOffset: FiniteFloat = 0.0
    springForceUserFunction: UnsetUserFunction = 0


class ObjectConnectorCartesianSpringDamper(_Connector):
    objectType: Literal["ConnectorCartesianSpringDamper"]
    stiffness: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    damping: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    offset: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    springForceUserFunction: UnsetUserFunction = 0


class ObjectConnectorCoordinateSpringDamper(_Connector):
    objectType: Literal["ConnectorCoordinateSpringDamper"]
    stiffness: FiniteFloat = 0.0
    damping: FiniteFloat = 0.0
    offset: FiniteFloat = 0.0
    springForceUserFunction: UnsetUserFunction = 0


class ObjectConnectorCoordinate(_Connector):
    objectType: Literal["ConnectorCoordinate"]
    offset: FiniteFloat = 0.0
    factor1: FiniteFloat = 1.0
    velocityLevel: bool = False
    offsetUserFunction: UnsetUserFunction = 0
    offsetUserFunction_t: UnsetUserFunction = 0


Object = Annotated[Union[
    ObjectGround, ObjectRigidBody, ObjectMassPoint, ObjectJointPrismaticX, ObjectJointRevoluteZ,
    ObjectJointSpherical, ObjectJointGeneric, ObjectConnectorSpringDamper,
    ObjectConnectorCartesianSpringDamper, ObjectConnectorCoordinateSpringDamper, ObjectConnectorCoordinate,
], Field(discriminator="objectType")]


# ---------------------------------------------------------------------------------- markers
class MarkerBodyRigid(Item):
    markerType: Literal["BodyRigid"]
    bodyNumber: Ref = -1
    localPosition: Vector3 | None = None
    localHT: HT | None = None


class MarkerBodyPosition(Item):
    markerType: Literal["BodyPosition"]
    bodyNumber: Ref = -1
    localPosition: Vector3 = Field(default_factory=lambda: [0.0] * 3)


class MarkerBodyMass(Item):
    markerType: Literal["BodyMass"]
    bodyNumber: Ref = -1


class MarkerNodeCoordinate(Item):
    markerType: Literal["NodeCoordinate"]
    nodeNumber: Ref = -1
    coordinate: int = -1


class MarkerNodeRigid(Item):
    markerType: Literal["NodeRigid"]
    nodeNumber: Ref = -1
    localHT: HT | None = None


class MarkerNodePosition(Item):
    markerType: Literal["NodePosition"]
    nodeNumber: Ref = -1


Marker = Annotated[Union[MarkerBodyRigid, MarkerBodyPosition, MarkerBodyMass, MarkerNodeCoordinate,
                         MarkerNodeRigid, MarkerNodePosition], Field(discriminator="markerType")]


# ------------------------------------------------------------------------------------ loads
class LoadForceVector(Item):
    loadType: Literal["ForceVector"]
    markerNumber: Ref = -1
    loadVector: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    bodyFixed: bool = False
    loadVectorUserFunction: UnsetUserFunction = 0


class LoadTorqueVector(Item):
    loadType: Literal["TorqueVector"]
    markerNumber: Ref = -1
    loadVector: Vector3 = Field(default_factory=lambda: [0.0] * 3)
    bodyFixed: bool = False
    loadVectorUserFunction: UnsetUserFunction = 0


class LoadMassProportional(Item):
    loadType: Literal["MassProportional"]
    markerNumber: Ref = -1
    loadVector: Vector3 = Field(default_factory=lambda: [0.0] * 3, description="acceleration, e.g. gravity")
    loadVectorUserFunction: UnsetUserFunction = 0


class LoadCoordinate(Item):
    loadType: Literal["Coordinate"]
    markerNumber: Ref = -1
    load: FiniteFloat = 0.0
    loadUserFunction: UnsetUserFunction = 0


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
    fileName: str = ""
    storeInternal: bool = False


class _OutputSensor(_Sensor):
    outputVariableType: str

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


class SensorObject(_OutputSensor):
    sensorType: Literal["Object"]
    objectNumber: Ref = -1


class SensorBody(_OutputSensor):
    sensorType: Literal["Body"]
    bodyNumber: Ref = -1
    localPosition: Vector3 = Field(default_factory=lambda: [0.0] * 3)


class SensorMarker(_OutputSensor):
    sensorType: Literal["Marker"]
    markerNumber: Ref = -1


class SensorLoad(_Sensor):
    sensorType: Literal["Load"]
    loadNumber: Ref = -1
    outputVariableType: str = Field("_None", description="a load sensor gives the load's vector")

    @field_validator("outputVariableType", mode="before")
    @classmethod
    def load_output(cls, v: Any) -> Any:
        return "_None" if v in (None, "_None", "OutputVariableType._None") else v


class SensorMotion(_Sensor):
    sensorType: Literal["Motion"]
    motionNumber: Ref = -1
    outputVariableType: Literal["Coordinate", "Coordinate_t", "Coordinate_tt", "Force"]

    @field_validator("outputVariableType", mode="before")
    @classmethod
    def strip_enum_prefix(cls, v: Any) -> Any:
        return v[len("OutputVariableType."):] if isinstance(v, str) and v.startswith("OutputVariableType.") else v


Sensor = Annotated[Union[SensorNode, SensorObject, SensorBody, SensorMarker, SensorLoad, SensorMotion],
                   Field(discriminator="sensorType")]


class Solve(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["Dynamic", "Static"] = "Dynamic"
    solverType: str = "GeneralizedAlpha"

    @field_validator("solverType", mode="before")
    @classmethod
    def strip_prefix(cls, v: Any) -> Any:
        if isinstance(v, str) and v.startswith("DynamicSolverType."):
            return v[len("DynamicSolverType."):]
        return v


class ModelDocument(BaseModel):
    """A model: Exudyn item lists, Simbody-style motions, settings and the kind of solve."""
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = ""
    nodes: list[Node] = Field(default_factory=list)
    objects: list[Object] = Field(default_factory=list)
    markers: list[Marker] = Field(default_factory=list)
    loads: list[Load] = Field(default_factory=list)
    sensors: list[Sensor] = Field(default_factory=list)
    motions: list[MotionSpec] = Field(default_factory=list)
    simulationSettings: dict[str, Any] = Field(default_factory=dict,
                                               description="Exudyn's SimulationSettings, nested names")
    solve: Solve = Field(default_factory=Solve)


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
