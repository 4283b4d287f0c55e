"""Sensors: which output variables each item type has, how they are computed, and the rows
written during a solve (Exudyn's write-period rule)."""
from __future__ import annotations

from functools import partial

import numpy as np

from .items import OBJECT_OUTPUTS, of_role
from .kernels import TAIT_BRYAN
from .output_kernels import empty_rows, row_bytes, row_kinematics
from .rotations import cross, homogeneous_transformation, matvec, rxyz_g_t_rates, tait_bryan_xyz
from . import schema as S
from .values import Problem, SensorSeries, did_you_mean

EP_NODE_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t",
                   "Coordinates_tt", "CoordinatesTotal", "RotationMatrix", "Rotation", "AngularVelocity",
                   "AngularVelocityLocal", "AngularAcceleration", "AngularAccelerationLocal",
                   "HomogeneousTransformation")
NODE_2D_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t",
                   "Coordinates_tt", "CoordinatesTotal", "RotationMatrix", "Rotation", "AngularVelocity",
                   "AngularVelocityLocal", "AngularAcceleration", "HomogeneousTransformation")
RXYZ_NODE_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t",
                     "Coordinates_tt", "CoordinatesTotal", "RotationMatrix", "Rotation", "AngularVelocity",
                     "AngularVelocityLocal", "AngularAcceleration", "HomogeneousTransformation")  # as Exudyn 1.13.6
ROTVEC_NODE_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t",
                       "CoordinatesTotal", "RotationMatrix", "Rotation", "AngularVelocity", "AngularVelocityLocal",
                       "HomogeneousTransformation")  # as Exudyn 1.13.6 (no Coordinates_tt, no AngularAcceleration)
POINT_2D_NODE_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t",
                         "Coordinates_tt", "CoordinatesTotal", "RotationMatrix", "Rotation", "AngularVelocity",
                         "AngularVelocityLocal", "HomogeneousTransformation")  # Exudyn 1.13.6: no rotation (I, 0)
POINT_GROUND_OUTPUTS = ("Position", "Displacement", "Velocity")
POINT_NODE_OUTPUTS = ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t",
                      "Coordinates_tt", "CoordinatesTotal")
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


MOTION_OUTPUTS = ("Coordinate", "Coordinate_t", "Coordinate_tt", "Force")
OUTPUT_VARIABLES: dict[str, dict[str, tuple[str, ...]]] = {  # list -> item type -> its output variables
    "nodes": {"RigidBodyEP": EP_NODE_OUTPUTS, "RigidBodyRxyz": RXYZ_NODE_OUTPUTS,
              "RigidBodyRotVecLG": ROTVEC_NODE_OUTPUTS, "Point": POINT_NODE_OUTPUTS,
              "PointGround": POINT_GROUND_OUTPUTS,
              "RigidBody2D": NODE_2D_OUTPUTS, "Point2D": POINT_2D_NODE_OUTPUTS,
              "Point2DSlope1": ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates",
                                "Coordinates_t", "Coordinates_tt", "CoordinatesTotal"),
              "GenericODE2": ("Coordinates", "Coordinates_t", "Coordinates_tt"), "GenericData": (),
              "1D": ("Coordinates", "Coordinates_t", "Coordinates_tt", "CoordinatesTotal")},
    "objects": OBJECT_OUTPUTS,
    "markers": {"BodyRigid": RIGID_MARKER_OUTPUTS, "NodeRigid": RIGID_MARKER_OUTPUTS,
                "BodyPosition": POSITION_MARKER_OUTPUTS, "NodePosition": POSITION_MARKER_OUTPUTS,
                "BodyMass": POSITION_MARKER_OUTPUTS, "NodeCoordinate": COORDINATE_MARKER_OUTPUTS},
    "loads": {t: ("_None",) for t in LOAD_COLUMNS},
    "motions": {t: MOTION_OUTPUTS for t in S.ITEM_TYPES["motions"]},
}
SENSOR_TARGETS = {"Node": ("nodeNumber", "nodes"), "Object": ("objectNumber", "objects"),
                  "Body": ("bodyNumber", "objects"), "Marker": ("markerNumber", "markers"),
                  "Load": ("loadNumber", "loads"), "Motion": ("motionNumber", "motions")}


def body_types() -> set[str]:
    """The object types whose sensors are body sensors."""
    return {t.name for t in of_role("body")}


def sensor_output_variables(sensor_type: str) -> tuple[str, ...]:
    """Every output variable a sensor of this type can have (over the item types it can read)."""
    key, target = SENSOR_TARGETS[sensor_type]
    types = OUTPUT_VARIABLES[target]
    if sensor_type == "Body":
        types = {t: v for t, v in types.items() if t in body_types()}
    return tuple(dict.fromkeys(v for variables in types.values() for v in variables))


def available_outputs(loaded, i: int) -> tuple[str, ...] | None:
    """The output variables sensors[i]'s item has (Exudyn's list for its type); None when the
    sensor or its reference has problems of its own."""
    sensor = loaded.document.sensors[i]
    if sensor is None:
        return None
    key, target = SENSOR_TARGETS[sensor.sensorType]
    index = loaded.refs.get(("sensors", i, key))
    if index is None:
        return None
    item = getattr(loaded.document, target)[index]
    return OUTPUT_VARIABLES[target].get(getattr(item, S.TYPE_KEY[target]), ())


def check_sensor_outputs(loaded) -> list[Problem]:
    problems = []
    for i, sensor in enumerate(loaded.document.sensors):
        avail = available_outputs(loaded, i)
        if avail is not None and sensor.outputVariableType not in avail:
            target = {"Node": "node", "Object": "object", "Body": "body", "Marker": "marker"}.get(sensor.sensorType, "")
            problems.append(Problem(f"sensors[{i}].outputVariableType",
                                    f"this {target} has no output variable {sensor.outputVariableType!r}"
                                    f"{did_you_mean(sensor.outputVariableType, avail)}; available: {', '.join(avail)}",
                                    loaded.names["sensors"][i]))
    return problems


CHUNK_ROWS = 4096  # rows evaluated together: each chunk costs ~1 ms of Python and numpy calls per sensor set
CHUNK_BYTES = 2 << 20  # bound on a chunk's states and kinematics: large models evaluate fewer rows at once


def written_rows(system, capacity: int = CHUNK_ROWS) -> np.ndarray:
    """The buffer a compiled step loop fills with the rows it writes, packed [t, q, v, q̈, λ, data coordinates]
    (SensorSet.record_rows), before it returns to Python: `capacity` rows (SensorSet.capacity), at most CHUNK_BYTES."""
    width = 1 + 3 * system.n2 + system.nae + system.ndata
    return np.empty((max(1, min(capacity, CHUNK_BYTES // (8 * width))), width))


class SensorSet:
    """Keeps the solver states of the written rows and evaluates every sensor on a chunk of rows
    at once (their kinematics in one compiled call, then one numpy expression per sensor): a
    Python evaluation per sensor and row cost more than the solve of small models."""

    def __init__(self, system, planned_rows: int = CHUNK_ROWS):
        """planned_rows: how many rows the solve would write at most with its planned steps (a chunk larger
        than that only costs the page faults of filling it)."""
        self.system = system
        self.loaded = system.loaded
        sensors = self.loaded.document.sensors
        self.outputs = [self.output_function(i, sensor) for i, sensor in enumerate(sensors)]
        self.blocks: list[list[np.ndarray]] = [[] for _ in sensors]  # per sensor: evaluated chunks [t, value]
        markers = any(self.reads_markers(i, sensor) for i, sensor in enumerate(sensors))
        n2, nae = system.n2, system.nae
        row = 8 * (1 + 3 * n2 + nae + system.ndata) + row_bytes(system, markers)
        rows = self.capacity = max(1, min(CHUNK_ROWS, planned_rows, CHUNK_BYTES // row))
        self.t, self.lam, self.data = np.empty(rows), np.empty((rows, nae)), np.empty((rows, system.ndata))
        self.q, self.v, self.a = np.empty((rows, n2)), np.empty((rows, n2)), np.empty((rows, n2))
        self.count = 0  # rows kept, not yet evaluated
        self.kin = empty_rows(system, rows, markers)  # reused: filling fresh arrays (page faults) costs more

    def record(self, t: float, q: np.ndarray, v: np.ndarray, a: np.ndarray, lam: np.ndarray,
               lam_sign: float = 1.0) -> None:
        """Keep a written row's state (a copy: solvers reuse their arrays)."""
        k = self.count
        self.t[k], self.q[k], self.v[k], self.a[k] = t, q, v, a
        np.multiply(lam, lam_sign, out=self.lam[k])
        self.data[k] = np.concatenate([g.data.dc.ravel() for g in self.system.data_groups] or [np.zeros(0)])
        self.count += 1
        if self.count == len(self.t):
            self.evaluate_rows()

    def record_rows(self, rows: np.ndarray) -> None:
        """Keep written rows packed as [t, q, v, q̈, λ, data coordinates] (the compiled step loop's layout)."""
        n2, nae = self.system.n2, self.system.nae
        while len(rows):
            k = self.count
            m = min(len(rows), len(self.t) - k)
            block, rows = rows[:m], rows[m:]
            self.t[k:k + m], self.q[k:k + m] = block[:, 0], block[:, 1:1 + n2]
            self.v[k:k + m], self.a[k:k + m], self.lam[k:k + m] = \
                block[:, 1 + n2:1 + 2 * n2], block[:, 1 + 2 * n2:1 + 3 * n2], block[:, 1 + 3 * n2:1 + 3 * n2 + nae]
            self.data[k:k + m] = block[:, 1 + 3 * n2 + nae:]
            self.count += m
            if self.count == len(self.t):
                self.evaluate_rows()

    def evaluate_rows(self) -> None:
        """Append every sensor's values on the kept rows to its blocks, and empty the buffers."""
        n, self.count = self.count, 0
        if not n or not self.outputs:
            return
        t = self.t[:n]
        kin = row_kinematics(self.system, t, self.q[:n], self.v[:n], self.a[:n], out=self.kin)
        self.data_rows = self.data[:n]  # the data coordinates of these rows (output_function)
        values = [np.asarray(output(kin, self.lam[:n]), float).reshape(n, -1) for output in self.outputs]
        for value, blocks in zip(values, self.blocks):  # matrices row by row, after the time
            blocks.append(np.concatenate([t[:, None], value], axis=1))

    def series(self) -> dict[str, SensorSeries]:
        self.evaluate_rows()
        out = {}
        for i, sensor in enumerate(self.loaded.document.sensors):
            data = np.concatenate(self.blocks[i]) if self.blocks[i] else np.zeros((0, 1))
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

    def reads_markers(self, i: int, sensor) -> bool:
        """Node, Body and Load sensors (and Object sensors of bodies) read frames only."""
        if sensor.sensorType == "Object":
            obj = self.loaded.ref("sensors", i, "objectNumber")
            return self.loaded.document.objects[obj].objectType not in body_types()
        return sensor.sensorType in ("Marker", "Motion")

    # ------------------------------------------------------------------------ values
    # Every output takes the kinematics of a chunk of rows (leading axis: rows) and λ (rows, nae).
    def output_function(self, i: int, sensor):
        """(kin, lam) -> sensors[i]'s values on the rows; its item and indices resolved here, once."""
        s, loaded, var = self.system, self.loaded, sensor.outputVariableType
        t = sensor.sensorType
        ref = partial(loaded.ref, "sensors", i)
        if t == "Node":
            node = ref("nodeNumber")
            return lambda kin, lam: self.node_output(node, var, kin)
        if t in ("Body", "Object"):
            obj = ref("bodyNumber" if t == "Body" else "objectNumber")
            group, k = s.object_group.get(obj, (None, 0))
            if loaded.document.objects[obj].objectType in body_types() and hasattr(group, "output"):
                # a body without a frame (ObjectGenericODE2, beams): its own outputs, at the sensor's local position
                local = np.array(sensor.localPosition if t == "Body" else [0.0, 0.0, 0.0], float)
                return lambda kin, lam: group.output(kin, k, var, local)
        if t == "Body" or (t == "Object" and loaded.document.objects[ref("objectNumber")].objectType in body_types()):
            obj = ref("bodyNumber" if t == "Body" else "objectNumber")
            if loaded.document.objects[obj].objectType == "Ground":
                f, coords = s.frame_of_ground[obj], slice(0, 0)
            else:
                node = loaded.ref("objects", obj, "nodeNumber")
                off = s.node_offset[node]
                f, coords = s.frame_of_node[node], slice(off, off + s.node_ncoords[node])
            local = np.array(sensor.localPosition if t == "Body" else [0.0, 0.0, 0.0])
            return lambda kin, lam: self.body_output(f, coords, local, var, kin)
        if t == "Object":
            obj = ref("objectNumber")
            group, k = s.object_group[obj]
            if hasattr(group, "ae"):
                ae = group.ae[k]
                return lambda kin, lam: group.output(kin, k, var, lam[:, ae], s.motions.joint_force(obj, lam))
            if getattr(group, "OUTPUT_DATA", False):  # outputs of the item's data coordinates at each row
                size = group.data.dc.shape[1]
                start = s.data_offset[id(group)] + k * size
                return lambda kin, lam: group.output(kin, k, var, self.data_rows[:, start:start + size])
            return lambda kin, lam: group.output(kin, k, var)
        if t == "Marker":
            marker = ref("markerNumber")
            return lambda kin, lam: self.marker_output(marker, var, kin)
        if t == "Load":
            load = ref("loadNumber")
            load_type = loaded.document.loads[load].loadType
            idx = list(s.loads.groups[load_type][0]).index(load)
            value = s.loads.groups[load_type][2][idx]  # as given: Exudyn does not rotate body-fixed ones
            p = s.user_functions.of("loads", load)
            if p >= 0:  # the user function's value, as Exudyn's SensorLoad gives it
                n = max(1, value.size)
                return lambda kin, lam: s.user_functions.evaluate(p, n, kin.t).reshape(kin.t.shape + value.shape)
            return lambda kin, lam: np.broadcast_to(value, kin.t.shape + value.shape)
        motion = ref("motionNumber")
        return lambda kin, lam: s.motions.output(motion, var, kin, lam)

    def frame_accelerations(self, f: int, kin) -> np.ndarray:
        """(rows, 7) the accelerations of frame f's 7 columns (0 on the dummy slot: a ground frame,
        a planar frame's z and unused rotation columns)."""
        a = np.concatenate([kin.a, np.zeros((len(kin.a), 1))], axis=1)
        return a[:, self.system.fcols[f]]

    def angular_acceleration(self, f: int, kin, acc: np.ndarray) -> np.ndarray:
        """α of frame f over rows (acc: frame_accelerations): G θ̈, on Tait-Bryan angles + Ġ φ̇ (Exudyn's
        RotXYZ2G_t; Euler parameters have Ġ θ̇ = 0, a rotation vector's G = A has Ġ ω̄ = A (ω̄ × ω̄) = 0)."""
        alpha = matvec(kin.fG[:, f], acc[:, 3:])
        if self.system.f_rotation[f] == TAIT_BRYAN:
            alpha = alpha + rxyz_g_t_rates(kin.theta[:, f], kin.theta_t[:, f])
        return alpha

    def node_output(self, node: int, var: str, kin):
        s = self.system
        off, n = s.node_offset[node], s.node_ncoords[node]
        q, v, acc = kin.q[:, off:off + n], kin.v[:, off:off + n], kin.a[:, off:off + n]
        f = s.frame_of_node[node]
        a7 = lambda: self.frame_accelerations(f, kin)  # noqa: E731
        table = {
            "Position": lambda: kin.fpos[:, f], "Displacement": lambda: kin.q[:, s.fcols[f, :3]],
            "Velocity": lambda: kin.fvel[:, f],
            "Acceleration": lambda: a7()[:, :3], "Coordinates": lambda: q, "Coordinates_t": lambda: v,
            "Coordinates_tt": lambda: acc, "CoordinatesTotal": lambda: s.q_ref[off:off + n] + q,
            "RotationMatrix": lambda: kin.fA[:, f], "Rotation": lambda: tait_bryan_xyz(kin.fA[:, f]),
            "AngularVelocity": lambda: kin.fomega[:, f],
            "AngularVelocityLocal": lambda: matvec(kin.fGbar[:, f], kin.theta_t[:, f]),
            "AngularAcceleration": lambda: self.angular_acceleration(f, kin, a7()),
            "AngularAccelerationLocal": lambda: matvec(kin.fGbar[:, f], a7()[:, 3:]),
            "HomogeneousTransformation": lambda: homogeneous_transformation(kin.fA[:, f], kin.fpos[:, f]),
        }
        if s.f_is_2d[f] and var == "Rotation":  # Exudyn: [0, 0, φ] with the reference, not wrapped
            return np.stack([np.zeros(len(q)), np.zeros(len(q)), kin.theta[:, f, 0]], axis=-1)
        if s.f_rotation[f] == TAIT_BRYAN and var == "Rotation":  # Exudyn: the angles with their reference, not from A
            return kin.theta[:, f, :3]
        return table[var]()

    def body_output(self, f: int, coords: slice, local: np.ndarray, var: str, kin):
        """A point at `local` on the body of frame f, whose node has the coordinates `coords`
        (none for a ground)."""
        s = self.system
        acc = self.frame_accelerations(f, kin)
        A = kin.fA[:, f]
        wbar = matvec(kin.fGbar[:, f], kin.theta_t[:, f])
        alpha_bar = matvec(kin.fGbar[:, f], acc[:, 3:])
        if s.f_rotation[f] == TAIT_BRYAN:  # Ḡ̇ φ̇ ≠ 0: Aᵀ α, as Exudyn's AngularAccelerationLocal
            alpha_bar = matvec(A.swapaxes(-1, -2), self.angular_acceleration(f, kin, acc))
        r = matvec(A, local)
        accel = lambda: acc[:, :3] + matvec(A, cross(alpha_bar, local) + cross(wbar, cross(wbar, local)))  # noqa: E731
        table = {
            "Position": lambda: kin.fpos[:, f] + r,
            "Displacement": lambda: kin.fpos[:, f] + r - (s.fpos_ref[f] + s.fA_ref[f] @ local),
            "Velocity": lambda: kin.fvel[:, f] + matvec(A, cross(wbar, local)),
            "VelocityLocal": lambda: matvec(A.swapaxes(-1, -2), kin.fvel[:, f] + matvec(A, cross(wbar, local))),
            "Acceleration": accel, "AccelerationLocal": lambda: matvec(A.swapaxes(-1, -2), accel()),
            "RotationMatrix": lambda: A, "Rotation": lambda: tait_bryan_xyz(A),
            "AngularVelocity": lambda: kin.fomega[:, f], "AngularVelocityLocal": lambda: wbar,
            "AngularAcceleration": lambda: self.angular_acceleration(f, kin, acc),
            "AngularAccelerationLocal": lambda: alpha_bar,
            "HomogeneousTransformation": lambda: homogeneous_transformation(A, kin.fpos[:, f] + r),  # at `local`
        }
        if s.f_is_2d[f] and var == "Rotation":  # Exudyn 1.13.6: the coordinate φ, without the reference
            return kin.q[:, coords][:, 2]
        return table[var]()

    def marker_output(self, m: int, var: str, kin):
        s = self.system
        if self.loaded.document.markers[m].markerType == "NodeCoordinate":
            c = s.mcoord[m]  # the dummy slot (0) on a ground node
            return kin.q[:, c] if var == "Coordinates" else kin.v[:, c]
        rot = kin.rot[:, m]
        omega = kin.fomega[:, s.mframe[m]]  # the body's G θ̇ (Exudyn's), not the marker's A_m ω_m
        table = {"Position": lambda: kin.pos[:, m], "Velocity": lambda: kin.vel[:, m],
                 "RotationMatrix": lambda: rot, "Rotation": lambda: tait_bryan_xyz(rot),
                 "AngularVelocity": lambda: omega,
                 "AngularVelocityLocal": lambda: matvec(rot.swapaxes(-1, -2), omega)}
        return table[var]()


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
