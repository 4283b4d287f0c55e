"""Sensors: which output variables each item type has, how they are computed, and the rows
written during a solve (Exudyn's write-period rule)."""
from __future__ import annotations

import numpy as np

from .api import Problem, SensorSeries
from .rotations import cross, tait_bryan_xyz

EP_NODE_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t",
                   "Coordinates_tt", "CoordinatesTotal", "RotationMatrix", "Rotation", "AngularVelocity",
                   "AngularVelocityLocal", "AngularAcceleration", "AngularAccelerationLocal")
POINT_GROUND_OUTPUTS = ("Position", "Displacement", "Velocity")
POINT_NODE_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t",
                      "Coordinates_tt", "CoordinatesTotal")
RIGID_BODY_OUTPUTS = ("Position", "Displacement", "Velocity", "VelocityLocal", "Acceleration", "RotationMatrix",
                      "Rotation", "AngularVelocity", "AngularVelocityLocal", "AngularAcceleration",
                      "AngularAccelerationLocal")
POINT_BODY_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration")
RIGID_MARKER_OUTPUTS = ("Position", "Velocity", "RotationMatrix", "Rotation", "AngularVelocity",
                        "AngularVelocityLocal")
POSITION_MARKER_OUTPUTS = ("Position", "Velocity")
COORDINATE_MARKER_OUTPUTS = ("Coordinates", "Coordinates_t")
LOAD_COLUMNS = {"ForceVector": "Force", "TorqueVector": "Torque", "MassProportional": "LoadVector",
                "Coordinate": "Load"}
XYZ = {"LoadVector", "Position", "Displacement", "Velocity", "Acceleration", "Force", "Torque", "Rotation",
       "AngularVelocity", "AngularAcceleration"}


def columns(var: str, n: int) -> list[str]:
    """time, then H00..H33 for transformations, the name for a scalar, <var>X/Y/Z for 3-vectors
    (Exudyn's plot labels), <var>0.. otherwise."""
    if var.startswith("HomogeneousTransformation"):
        return ["time"] + [f"H{r}{c}" for r in range(4) for c in range(4)]
    if n == 1:
        return ["time", var]
    if n == 3 and var.replace("Local", "") in XYZ:
        return ["time"] + [var + c for c in "XYZ"]
    return ["time"] + [f"{var}{i}" for i in range(n)]


def available_outputs(loaded, i: int) -> tuple[str, ...]:
    """The output variables sensors[i]'s item has (Exudyn's list for its type)."""
    from .items import CONSTRAINT_GROUPS, FORCE_GROUPS
    doc = loaded.document
    t = doc.sensors[i].sensorType
    if t == "Node":
        node = doc.nodes[loaded.ref("sensors", i, "nodeNumber")]
        return {"RigidBodyEP": EP_NODE_OUTPUTS, "Point": POINT_NODE_OUTPUTS,
                "PointGround": POINT_GROUND_OUTPUTS}[node.nodeType]
    if t in ("Body", "Object"):
        key = "bodyNumber" if t == "Body" else "objectNumber"
        obj = doc.objects[loaded.ref("sensors", i, key)]
        if obj.objectType in ("RigidBody", "Ground"):
            return RIGID_BODY_OUTPUTS
        if obj.objectType == "MassPoint":
            return POINT_BODY_OUTPUTS
        for cls in CONSTRAINT_GROUPS + FORCE_GROUPS:
            if cls.OBJECT_TYPE == obj.objectType:
                return cls.OUTPUTS
        return ()
    if t == "Marker":
        mk = doc.markers[loaded.ref("sensors", i, "markerNumber")]
        if mk.markerType in ("BodyRigid", "NodeRigid"):
            return RIGID_MARKER_OUTPUTS
        if mk.markerType == "NodeCoordinate":
            return COORDINATE_MARKER_OUTPUTS
        return POSITION_MARKER_OUTPUTS
    if t == "Load":
        return ("_None",)
    return ("Coordinate", "Coordinate_t", "Coordinate_tt", "Force")


def check_sensor_outputs(loaded) -> list[Problem]:
    problems = []
    for i, sensor in enumerate(loaded.document.sensors):
        avail = available_outputs(loaded, i)
        if sensor.outputVariableType not in avail:
            target = {"Node": "node", "Object": "object", "Body": "body", "Marker": "marker"}.get(sensor.sensorType, "")
            problems.append(Problem(f"sensors[{i}].outputVariableType",
                                    f"this {target} has no output variable {sensor.outputVariableType!r}; "
                                    f"available: {', '.join(avail)}", loaded.names["sensors"][i]))
    return problems


class SensorSet:
    """Evaluates every sensor of a model on a solver state and keeps the written rows."""

    def __init__(self, system):
        self.system = system
        self.loaded = system.loaded
        self.rows: list[list[np.ndarray]] = [[] for _ in self.loaded.document.sensors]

    def record(self, t: float, kin, a: np.ndarray, lam: np.ndarray, lam_sign: float = 1.0) -> None:
        for i, sensor in enumerate(self.loaded.document.sensors):
            value = np.atleast_1d(np.asarray(self.value(i, sensor, kin, a, lam_sign * lam), float))
            self.rows[i].append(np.concatenate([[t], value]))

    def series(self) -> dict[str, SensorSeries]:
        out = {}
        for i, sensor in enumerate(self.loaded.document.sensors):
            data = np.array(self.rows[i]) if self.rows[i] else np.zeros((0, 1))
            var = sensor.outputVariableType
            name_var = LOAD_COLUMNS[self.loaded.document.loads[self.loaded.ref("sensors", i, "loadNumber")].loadType] \
                if sensor.sensorType == "Load" else var
            out[self.loaded.names["sensors"][i]] = SensorSeries(
                sensorType=sensor.sensorType, item=self.item_name(i, sensor), outputVariableType=var,
                columns=columns(name_var, data.shape[1] - 1), data=data)
        return out

    def item_name(self, i: int, sensor) -> str | None:
        for key, kind in (("nodeNumber", "nodes"), ("objectNumber", "objects"), ("bodyNumber", "objects"),
                          ("markerNumber", "markers"), ("loadNumber", "loads"), ("motionNumber", "motions")):
            if hasattr(sensor, key):
                return self.loaded.names[kind][self.loaded.ref("sensors", i, key)]
        return None

    # ------------------------------------------------------------------------ values
    def value(self, i: int, sensor, kin, a: np.ndarray, lam: np.ndarray):
        s, loaded, var = self.system, self.loaded, sensor.outputVariableType
        t = sensor.sensorType
        if t == "Node":
            return self.node_output(loaded.ref("sensors", i, "nodeNumber"), var, kin, a)
        if t == "Body" or (t == "Object" and loaded.document.objects[loaded.ref("sensors", i, "objectNumber")]
                           .objectType in ("RigidBody", "MassPoint", "Ground")):
            obj = loaded.ref("sensors", i, "bodyNumber" if t == "Body" else "objectNumber")
            local = np.array(sensor.localPosition if t == "Body" else [0.0, 0.0, 0.0])
            return self.body_output(obj, local, var, kin, a)
        if t == "Object":
            obj = loaded.ref("sensors", i, "objectNumber")
            group, k = s.object_group[obj]
            if hasattr(group, "ae"):
                return group.output(kin, k, var, lam[group.ae[k]], s.motions.joint_force(obj, lam))
            return group.output(kin, k, var)
        if t == "Marker":
            return self.marker_output(loaded.ref("sensors", i, "markerNumber"), var, kin)
        if t == "Load":
            load = loaded.ref("sensors", i, "loadNumber")
            load_type = loaded.document.loads[load].loadType
            idx = list(s.loads.groups[load_type][0]).index(load)
            return s.loads.groups[load_type][2][idx]  # as given: Exudyn does not rotate body-fixed ones
        return s.motions.output(loaded.ref("sensors", i, "motionNumber"), var, kin, a, lam)

    def node_output(self, node: int, var: str, kin, a: np.ndarray):
        s = self.system
        off, n = s.node_offset[node], s.node_ncoords[node]
        q, v = kin.q[off:off + n], kin.v[off:off + n]
        acc = a[off:off + n]
        f = s.frame_of_node[node]
        table = {
            "Position": lambda: kin.fpos[f], "Displacement": lambda: q[:3] if n else np.zeros(3),
            "Velocity": lambda: kin.fvel[f],
            "Acceleration": lambda: acc[:3], "Coordinates": lambda: q, "Coordinates_t": lambda: v,
            "Coordinates_tt": lambda: acc, "CoordinatesTotal": lambda: s.q_ref[off:off + n] + q,
            "RotationMatrix": lambda: kin.fA[f].ravel(), "Rotation": lambda: tait_bryan_xyz(kin.fA[f]),
            "AngularVelocity": lambda: kin.fomega[f],
            "AngularVelocityLocal": lambda: kin.fGbar[f] @ kin.theta_t[f],
            "AngularAcceleration": lambda: kin.fG[f] @ acc[3:],
            "AngularAccelerationLocal": lambda: kin.fGbar[f] @ acc[3:],
        }
        return table[var]()

    def body_output(self, obj: int, local: np.ndarray, var: str, kin, a: np.ndarray):
        s = self.system
        body = self.loaded.document.objects[obj]
        if body.objectType == "Ground":
            f = s.frame_of_ground[obj]
            acc = np.zeros(7)
            ref_pos = kin.fpos[f] + kin.fA[f] @ local
        else:
            node = self.loaded.ref("objects", obj, "nodeNumber")
            f = s.frame_of_node[node]
            off, n = s.node_offset[node], s.node_ncoords[node]
            acc = np.zeros(7)
            acc[:n] = a[off:off + n]
            ref_pos = s.fpos_ref[f] + _ep_matrix(s.ftheta_ref[f]) @ local
        A = kin.fA[f]
        wbar = kin.fGbar[f] @ kin.theta_t[f]
        alpha_bar = kin.fGbar[f] @ acc[3:]
        r = A @ local
        table = {
            "Position": lambda: kin.fpos[f] + r,
            "Displacement": lambda: kin.fpos[f] + r - ref_pos,
            "Velocity": lambda: kin.fvel[f] + A @ cross(wbar, local),
            "VelocityLocal": lambda: A.T @ (kin.fvel[f] + A @ cross(wbar, local)),
            "Acceleration": lambda: acc[:3] + A @ (cross(alpha_bar, local) + cross(wbar, cross(wbar, local))),
            "RotationMatrix": lambda: A.ravel(), "Rotation": lambda: tait_bryan_xyz(A),
            "AngularVelocity": lambda: kin.fomega[f], "AngularVelocityLocal": lambda: wbar,
            "AngularAcceleration": lambda: kin.fG[f] @ acc[3:], "AngularAccelerationLocal": lambda: alpha_bar,
        }
        return table[var]()

    def marker_output(self, m: int, var: str, kin):
        s = self.system
        if self.loaded.document.markers[m].markerType == "NodeCoordinate":
            c = s.mcoord[m]  # the dummy slot (0) on a ground node
            return [kin.q[c]] if var == "Coordinates" else [kin.v[c]]
        rot = kin.rot[m]
        table = {"Position": lambda: kin.pos[m], "Velocity": lambda: kin.vel[m],
                 "RotationMatrix": lambda: rot.ravel(), "Rotation": lambda: tait_bryan_xyz(rot),
                 "AngularVelocity": lambda: kin.omega[m], "AngularVelocityLocal": lambda: rot.T @ kin.omega[m]}
        return table[var]()


def _ep_matrix(theta: np.ndarray) -> np.ndarray:
    from .rotations import ep_rotation
    return ep_rotation(theta[None])[0]


class WriteSchedule:
    """Exudyn's sensor write rule: a row when t >= t_last - 1e-10, then
    t_last = max(t_last + period, t); t_last starts at t0; the last step is always written."""

    def __init__(self, t0: float, period: float):
        self.next, self.period = t0, period

    def due(self, t: float) -> bool:
        if t >= self.next - 1e-10:
            self.next = max(self.next + self.period, t)
            return True
        return False
