"""Prescribed motions (Simbody's Motion) on the free coordinate of a JointPrismaticX (sliding
x0ᵀΔp) or JointRevoluteZ (angle of x1 about z0): one constraint row per motion.

    Position level      q_j(q) - q(t) = 0          (index 2: u_j - q̇(t) = 0)
    Velocity level      u_j(q, v) - u(t, q_j) = 0   (nonholonomic)
    Acceleration level  u̇_j(q, v, a) - u̇(t, q_j, u_j) = 0
The multiplier λ is the generalized force the motion applies: -λ along the axis on marker 1's
body (the Motion sensor's Force), +λ in the joint's ForceLocal/TorqueLocal, as for its other axes.
"""
from __future__ import annotations

import numpy as np

from .. import kernels as K
from .. import programs as P
from ..motions import undefined
from ..output_kernels import joint_accelerations_rows, joint_coordinates_rows
from . import MOTION_JOINTS

LEVELS = {"Position": 0, "Velocity": 1, "Acceleration": 2}


def _angle(joint) -> bool:
    """Whether a joint's free coordinate is an angle (kernels.joint_coordinates), else a sliding."""
    return MOTION_JOINTS[joint.objectType] == "angle"


def _wrap(x):
    return (x + np.pi) % (2 * np.pi) - np.pi


class Motions:
    def __init__(self, system):
        self.system = system
        doc = system.loaded.document
        bound = [(k, law, joint) for k, (law, joint) in enumerate(system.loaded.motions) if not law.is_free]
        n = self.size = len(bound)
        self.index = [k for k, _, _ in bound]
        self.laws = [law for _, law, _ in bound]
        self.joints = [joint for _, _, joint in bound]
        self.revolute = np.array([_angle(doc.objects[j]) for j in self.joints], dtype=bool)
        ref = system.loaded.ref
        ms = np.array([ref("objects", j, "markerNumbers") for j in self.joints], dtype=int).reshape(n, 2)
        self.m0, self.m1 = ms[:, 0], ms[:, 1]
        self.R0 = np.array([doc.objects[j].rotationMarker0 for j in self.joints], float).reshape(n, 3, 3)
        self.R1 = np.array([doc.objects[j].rotationMarker1 for j in self.joints], float).reshape(n, 3, 3)
        self.row_levels = np.array([LEVELS[law.level] for law in self.laws], dtype=int).reshape(n, 1)
        self.levels = np.ascontiguousarray(self.row_levels[:, 0], dtype=np.int64)
        self.programs = P.ProgramSet.concatenate([law.programs for law in self.laws])
        self._w = None  # the Work for motion_rows on one state (made at the first use: the model comes later)
        self.active = np.ones(n, dtype=bool)
        self.ae = system.allocate_ae(n).reshape(n, 1)
        self.cols = np.concatenate([system.mcols[self.m0], system.mcols[self.m1]], axis=1) if n \
            else np.zeros((0, 14), int)
        self.by_joint = {j: r for r, j in enumerate(self.joints)}
        self.by_motion = {k: r for r, k in enumerate(self.index)}
        self.free = {k: _SingleJoint(system, joint) for k, (law, joint) in enumerate(system.loaded.motions)
                     if law.is_free}  # their joint coordinates, for sensors

    # ------------------------------------------------------------------ joint coordinate
    # kin: the kinematics of one state (solver) or of sensor rows (leading axis: rows)
    def coordinate(self, kin):
        """(q_j, u_j, C) of every motion's joint: sliding or angle, its rate, its Jacobian (...,n,14)."""
        joints = (self.m0, self.m1, self.R0, self.R1, self.revolute)
        frames = (kin.rot, kin.pos, kin.vel, kin.omega, kin.Jpos, kin.Jrot)
        return K.joint_coordinates(*frames, *joints) if kin.q.ndim == 1 else joint_coordinates_rows(*frames, *joints)

    def joint_acceleration(self, kin, C: np.ndarray) -> np.ndarray:
        """u̇_j (rows, n) over sensor rows (kin with their accelerations a), C their joint Jacobians."""
        return joint_accelerations_rows(self.system.model, kin.q, kin.v, np.ascontiguousarray(kin.a), C, self.cols,
                                        self.m0, self.m1, self.R0, self.R1, self.revolute)

    def rows(self, kin, a: np.ndarray, levels: np.ndarray, velocity_level: bool):
        """(g, C) of the motions' rows at one state (kernels.motion_rows, as the compiled residual
        evaluates them); EvaluationError where a law is undefined."""
        if self._w is None:
            self._w = K.work(self.system.model, self.system.n2, self.system.nae)[1]
        w = self._w
        bad = K.motion_rows_at(kin.t, np.ascontiguousarray(a, dtype=float), levels, velocity_level, self.system.model,
                            kin.arrays(), w)
        if bad >= 0:
            self._undefined(bad, levels[bad], velocity_level, kin.t, w.mo_q[0], w.mo_q[1])
        return w.mo_g.copy(), w.mo_C.copy()

    def _undefined(self, r, level, velocity_level, t, qj, uj):
        raise undefined(self.laws[r], 1 if (level == 0 and velocity_level) else level, t, qj[r], uj[r])

    def evaluate(self, kin, velocity_level: bool):
        g, C = self.rows(kin, kin.a if kin.a is not None else np.zeros(len(kin.q) - 1), self.levels, velocity_level)
        return g[:, None], C[:, None, :]

    def rate_residual(self, kin) -> np.ndarray:
        """d/dt of every row's velocity-level form at zero accelerations, with the laws' exact
        time derivatives: u̇_j(a = 0) - u̇(t, q_j, u_j) (the initial-acceleration solve)."""
        return self.rows(kin, np.zeros(len(kin.q) - 1), np.full(self.size, 2, np.int64), True)[0][:, None]

    # ------------------------------------------------------------------ sensors
    # kin: the kinematics of sensor rows (with their accelerations a), lam (rows, nae)
    def joint_force(self, joint: int, lam: np.ndarray) -> np.ndarray:
        """The force of the motion on a joint (rows,), 0 without one."""
        r = self.by_joint.get(joint)
        return np.zeros(len(lam)) if r is None else lam[:, self.ae[r, 0]]

    def output(self, motion: int, var: str, kin, lam: np.ndarray):
        r = self.by_motion.get(motion)
        if r is None:  # a Free motion: the coordinate follows the forces, no force applied
            return self.free[motion].free_output(var, kin)
        qj, uj, C = self.coordinate(kin)
        if var == "Coordinate":
            law = self.laws[r]
            if self.revolute[r] and law.level == "Position":  # continuous angle, not wrapped
                qt = np.array([law.q(t) for t in kin.t])  # laws are scalar functions of t
                return qt + _wrap(qj[:, r] - qt)
            return qj[:, r]
        if var == "Coordinate_t":
            return uj[:, r]
        if var == "Coordinate_tt":
            return self.joint_acceleration(kin, C)[:, r]
        return -lam[:, self.ae[r, 0]]

    # ------------------------------------------------------------------ solver hooks
    def make_consistent(self, q: np.ndarray, v: np.ndarray, t: float):
        """Project an initial state that violates position/velocity motions onto them (least
        change, all constraints kept), as Simbody's assembly does; warnings give the size."""
        if not self.size:
            return q, v, []
        s = self.system
        warnings = []
        q, v = q.copy(), v.copy()
        pos_rows = [r for r in range(self.size) if self.row_levels[r, 0] == 0]
        vel_rows = [r for r in range(self.size) if self.row_levels[r, 0] <= 1]
        dq_total = np.zeros_like(q)
        for _ in range(20):
            kin = s.kinematics(t, q, v)
            g, C = self._stacked(kin, False)
            if np.abs(g).max(initial=0.0) < 1e-13:
                break
            dq = np.linalg.lstsq(C, -g, rcond=None)[0]
            q += dq
            dq_total += dq
        if pos_rows and np.abs(dq_total).max() > 1e-12:
            warnings.append(self._warning(pos_rows, "position", float(np.linalg.norm(dq_total))))
        kin = s.kinematics(t, q, v)
        g, C = self._stacked(kin, True)
        if vel_rows and np.abs(g).max(initial=0.0) > 1e-12:
            dv = np.linalg.lstsq(C, -g, rcond=None)[0]
            v += dv
            warnings.append(self._warning(vel_rows, "velocity", float(np.linalg.norm(dv))))
        return q, v, warnings

    def _stacked(self, kin, velocity_level: bool):
        """All active position-level rows (velocity forms if asked) and velocity motions, dense."""
        s = self.system
        rows_g, rows_C = [], []
        for g_, gv, C in s.constraint_values(kin, velocity_level):
            keep = (np.broadcast_to(g_.row_levels, g_.ae.shape) <= int(velocity_level)) & g_.active[:, None]
            for i, r in zip(*np.nonzero(keep)):
                row = np.zeros(s.n2 + 1)
                np.add.at(row, g_.cols[i], C[i, r])
                rows_g.append(gv[i, r])
                rows_C.append(row[:-1])
        return np.array(rows_g), np.array(rows_C).reshape(len(rows_g), s.n2)

    def _warning(self, rows, what, size):
        names = [self.system.loaded.names["motions"][self.index[r]] for r in rows]
        return {"code": "InitialStateCorrected", "item": names[0],
                "message": f"the initial {what} violated the prescribed motion(s) {', '.join(names)}; "
                           f"corrected by {size:.3g} (norm of the coordinate change)"}


class _SingleJoint(Motions):
    """The joint coordinate of one joint without a motion row (for Free motions' sensors)."""

    def __init__(self, system, joint):  # noqa: D107 - deliberately not calling Motions.__init__
        doc = system.loaded.document
        self.system = system
        m = system.loaded.ref("objects", joint, "markerNumbers")
        self.m0, self.m1 = np.array([m[0]]), np.array([m[1]])
        self.R0 = np.array([doc.objects[joint].rotationMarker0], float)
        self.R1 = np.array([doc.objects[joint].rotationMarker1], float)
        self.revolute = np.array([_angle(doc.objects[joint])])
        self.cols = np.concatenate([system.mcols[self.m0], system.mcols[self.m1]], axis=1)

    def free_output(self, var: str, kin):
        """A Free motion's sensor over the rows of kin: the joint coordinate, no force."""
        if var == "Force":
            return np.zeros(len(kin.t))
        qj, uj, C = self.coordinate(kin)
        if var == "Coordinate":
            return qj[:, 0]
        if var == "Coordinate_t":
            return uj[:, 0]
        return self.joint_acceleration(kin, C)[:, 0]
