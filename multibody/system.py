"""The compiled model (immutable arrays and index maps) and its evaluation pipeline.

Like MuJoCo's mjModel/mjData split: `System` holds what never changes during a solve (sizes,
frame and marker tables, item groups with their index arrays); the solver state (q, v, q̈, λ)
lives in the solver. One evaluation runs fixed stages over all items at once:

    kinematics(q, v)          frames of nodes and ground, then all markers (vectorized)
    mass / forces             rigid bodies, mass points, connectors, loads (vectorized per type)
    constraints               g, C_q per constraint group (vectorized per type)

Coordinates: ODE2 vector q of all nodes (7 per Euler-parameter node, 3 per point node and per
planar rigid-body node: x, y, φ, 2 per planar point node), and
one extra "dummy" slot at index n2 that ground markers point at, so every marker has a fixed
7-column block and no item needs a branch for ground.
"""
from __future__ import annotations

import numpy as np

from . import kernels as K
from . import rotations as R
from . import schema as S
from .items import OBJECT_TYPES, constraint_groups, force_groups, mass_body_groups
from .items import onedim
from .items.coordinate_connectors import CoordinateConstraints, CoordinateSpringDampers
from .items.bodies import EPNormalization, MassPoints, RigidBodies
from .items.frame_joint import FrameJointGroup
from .items.generic_ode2 import GenericODE2Objects
from .items.loads import Loads
from .items.spring_damper import CartesianSpringDampers, SpringDampers
from .items.motion_constraints import Motions
from .kinematics import Kinematics, empty_kinematics
from .output_kernels import frame_model, kinematics_rows
from .user_functions import UserFunctions

# node types with three rotation coordinates (θ = [r0, r1, r2, 0]): their Model.f_rotation and rotation matrix
ROTATION3 = {"RigidBodyRxyz": (K.TAIT_BRYAN, R.rxyz_rotation), "RigidBodyRotVecLG": (K.ROTATION_VECTOR,
                                                                                   R.rotation_vector_matrix)}

_EMPTY_DATA: dict[type, tuple] = {}  # compiled group class -> its data without items (System._data_of)


class System:
    """Compiled from a LoadedModel; read-only during a solve."""

    def __init__(self, loaded):
        self.loaded = loaded
        doc = loaded.document
        self.names = loaded.names
        # ---------------------------------------------------------------- coordinates
        self.node_offset = np.zeros(len(doc.nodes), dtype=int)
        self.node_ncoords = np.zeros(len(doc.nodes), dtype=int)
        off = 0
        for i, node in enumerate(doc.nodes):
            self.node_offset[i] = off
            self.node_ncoords[i] = S.node_coordinates(node)
            off += self.node_ncoords[i]
        self.n2 = off
        self.dummy = off
        self.q_ref = np.zeros(self.n2)
        self.q_init = np.zeros(self.n2)
        self.v_init = np.zeros(self.n2)
        for i, node in enumerate(doc.nodes):
            if not self.node_ncoords[i]:
                continue  # a ground node: its frame below is fixed, all its columns the dummy slot
            sl = slice(self.node_offset[i], self.node_offset[i] + self.node_ncoords[i])
            self.q_ref[sl] = node.referenceCoordinates
            self.q_init[sl] = node.initialCoordinates
            self.v_init[sl] = node.initialVelocities
        # ---------------------------------------------------------------- frames: nodes, then grounds
        grounds = [i for i, o in enumerate(doc.objects) if o.objectType == "Ground"]
        nF = len(doc.nodes) + len(grounds)
        self.frame_of_node = np.arange(len(doc.nodes))
        self.frame_of_ground = {g: len(doc.nodes) + k for k, g in enumerate(grounds)}
        self.fcols = np.full((nF, 7), self.dummy, dtype=int)
        self.fpos_ref = np.zeros((nF, 3))
        self.ftheta_ref = np.tile([1.0, 0.0, 0.0, 0.0], (nF, 1))
        self.f_is_ep = np.zeros(nF, dtype=bool)
        self.f_is_2d = np.zeros(nF, dtype=bool)
        self.f_rotation = np.full(nF, K.NO_ROTATION3, dtype=np.int64)
        self.f_R0 = np.tile(np.eye(3), (nF, 1, 1))
        self.f_turned = np.zeros(nF, dtype=bool)
        frames_1d = onedim.frames(doc, loaded.ref)
        for i, node in enumerate(doc.nodes):
            n = self.node_ncoords[i]
            if node.nodeType == "1D" and i in frames_1d:  # its body's frame, turned by A_ref (items/onedim.py)
                rotational, p_ref, A_ref = frames_1d[i]
                self.f_turned[i], self.f_R0[i] = True, A_ref
                self.fpos_ref[i] = p_ref
                if rotational:  # φ: a planar frame's rotation column
                    self.f_is_2d[i] = True
                    self.fcols[i, 3] = self.node_offset[i]
                    self.ftheta_ref[i] = [node.referenceCoordinates[0], 0.0, 0.0, 0.0]
                else:  # u = [q_ref + q, 0, 0]: the x column, the reference in the position
                    self.fcols[i, 0] = self.node_offset[i]
                    self.fpos_ref[i] = p_ref + A_ref[:, 0] * node.referenceCoordinates[0]
                continue
            if node.nodeType in ("GenericODE2", "GenericData", "1D"):  # no frame: one fixed at the origin, no columns
                continue
            if node.nodeType == "RigidBody2D":  # x, y, -, φ: the frame's translation and rotation columns
                self.f_is_2d[i] = True
                self.fcols[i, [0, 1, 3]] = self.node_offset[i] + np.arange(3)
                self.fpos_ref[i] = [*node.referenceCoordinates[:2], 0.0]
                self.ftheta_ref[i] = [node.referenceCoordinates[2], 0.0, 0.0, 0.0]
                continue
            if node.nodeType == "Point2DSlope1":  # x, y, r'x, r'y: a frame on x, y, the slope is no rotation
                self.fcols[i, :2] = self.node_offset[i] + np.arange(2)
                self.fpos_ref[i, :2] = node.referenceCoordinates[:2]
                continue
            self.fcols[i, :n] = self.node_offset[i] + np.arange(n)
            position = node.referenceCoordinates[:3]
            self.fpos_ref[i, :len(position)] = position  # a Point2D node: z = 0
            if node.nodeType == "RigidBodyEP":
                self.f_is_ep[i] = True
                self.ftheta_ref[i] = node.referenceCoordinates[3:]
            elif node.nodeType in ROTATION3:  # x, y, z, r0, r1, r2, -: θ = [r0, r1, r2, 0]
                self.f_rotation[i] = ROTATION3[node.nodeType][0]
                self.ftheta_ref[i] = [*node.referenceCoordinates[3:], 0.0]
        for g, f in self.frame_of_ground.items():
            pos, rot = ground_pose(doc.objects[g])
            self.fpos_ref[f] = pos
            self.ftheta_ref[f] = R.rotation_to_ep(rot)
        matrix = {kind: rotation for kind, rotation in ROTATION3.values()}
        self.fA_ref = np.array([R.rotation_z(th[0]) if is_2d else matrix[kind](th[:3]) if kind else R.ep_rotation(th)
                                for th, is_2d, kind in zip(self.ftheta_ref, self.f_is_2d, self.f_rotation)]
                               ).reshape(nF, 3, 3)
        self.fA_ref[self.f_turned] = self.f_R0[self.f_turned] @ self.fA_ref[self.f_turned]
        lie = np.flatnonzero(self.f_rotation == K.ROTATION_VECTOR)  # Exudyn's Lie group nodes
        self.lie_cols = np.ascontiguousarray(self.fcols[lie, 3:6], dtype=np.int64).reshape(-1, 3)
        self.lie_ref = np.ascontiguousarray(self.ftheta_ref[lie, :3]).reshape(-1, 3)
        # ---------------------------------------------------------------- markers
        nm = len(doc.markers)
        self.mframe = np.zeros(nm, dtype=int)
        self.mlocal = np.zeros((nm, 3))
        self.mrot = np.tile(np.eye(3), (nm, 1, 1))
        self.mweight = np.ones(nm)  # mass of a BodyMass marker (MassProportional loads)
        self.mcoord = np.full(nm, self.dummy, dtype=int)  # NodeCoordinate markers: the coordinate
        for m, mk in enumerate(doc.markers):
            self.mframe[m] = self.marker_frame(m)
            if mk.markerType == "BodyRigid":
                if mk.localHT is not None:
                    rot, pos = S.ht_parts(mk.localHT)
                    self.mrot[m], self.mlocal[m] = rot, pos
                elif mk.localPosition is not None:
                    self.mlocal[m] = mk.localPosition
            elif mk.markerType == "BodyPosition":
                self.mlocal[m] = mk.localPosition
            elif mk.markerType == "NodeRigid" and mk.localHT is not None:
                rot, pos = S.ht_parts(mk.localHT)
                self.mrot[m], self.mlocal[m] = rot, pos
            elif mk.markerType == "BodyMass":
                body = doc.objects[loaded.ref("markers", m, "bodyNumber")]
                self.mweight[m] = body.mass
                if body.objectType in ("RigidBody", "RigidBody2D"):  # at the center of mass (Exudyn's J_mass)
                    self.mlocal[m, :len(body.centerOfMass)] = body.centerOfMass
            elif mk.markerType == "NodeCoordinate":
                node = loaded.ref("markers", m, "nodeNumber")
                if self.node_ncoords[node]:  # on a ground node the coordinate is the dummy slot (always 0)
                    self.mcoord[m] = self.node_offset[node] + mk.coordinate
        self.mcols = self.fcols[self.mframe]
        self.mrot_identity = np.all(self.mrot == np.eye(3), axis=(1, 2))
        # ---------------------------------------------------------------- items
        self.user_functions = loaded.user_functions or UserFunctions()
        self.bodies = RigidBodies(self)
        self.mass_points = MassPoints(self)
        self.generic_ode2 = GenericODE2Objects(self)
        # bodies with a constant mass matrix and nothing else (items/onedim.py), ObjectGenericODE2 first
        self.mass_bodies = [self.generic_ode2 if cls is GenericODE2Objects else cls(self) for cls in mass_body_groups()]
        self.loads = Loads(self)
        # only the types this model has build a group (a type without items: its empty data, _data_of)
        present = {o.objectType for o in doc.objects}
        self.forces = [cls(self) for cls in force_groups() if cls.OBJECT_TYPE in present]
        self.forces = [g for g in self.forces if g.size]
        # the groups with data coordinates, in Model.x_forces' order: their place in a sensor row's data part
        # (kernels.compiled_write_data), and their data there
        self.data_groups = [g for t in OBJECT_TYPES.values() if t.data_coordinates
                            for g in self.forces if isinstance(g, t.group)]
        self.data_offset, self.ndata = {}, 0
        for g in self.data_groups:
            self.data_offset[id(g)] = self.ndata
            self.ndata += g.data.dc.size
        # constant mass matrices of bodies on their nodes' coordinates, as triplets (row, column, value)
        parts = [g.mass_triplets() for g in self.mass_bodies + self.forces if hasattr(g, "mass_triplets")]
        self.constant_mass = tuple(np.concatenate([p[j] for p in parts]) for j in range(3))
        self.ae_offset = 0
        self.ep_constraints = EPNormalization(self)
        self.motions = Motions(self)
        self.constraints = [self.ep_constraints] + [g for cls in constraint_groups() if cls.OBJECT_TYPE in present
                                                    for g in cls.groups(self)] + [self.motions]
        self.constraints = [g for g in self.constraints if g.size]
        self.nae = self.ae_offset
        self.all_active = [bool(g.active.all()) for g in self.constraints]
        self.object_group = {}  # object index -> (group, row in group)
        for g in self.forces + self.constraints + [self.bodies, self.mass_points] + self.mass_bodies:
            for k, obj in enumerate(getattr(g, "objects", [])):
                self.object_group[obj] = (g, k)
        self._pattern()
        self.model = self._compile_model()

    # ------------------------------------------------------------------------ compile helpers
    def _compile_model(self) -> K.Model:
        """The arrays the kernels read (kernels.Model)."""
        joints = [g for g in self.constraints if isinstance(g, FrameJointGroup)]
        lg = self.loads.groups

        def group(cls, groups):  # the model's group of a type (an empty one if it has none)
            return next((g for g in groups if isinstance(g, cls)), None) or cls(self)
        springs, cartesian, cspring = (group(cls, self.forces) for cls in (SpringDampers, CartesianSpringDampers,
                                                                          CoordinateSpringDampers))
        cc = group(CoordinateConstraints, self.constraints)
        kinds = {"ForceVector": 0, "MassProportional": 0, "TorqueVector": 1, "Coordinate": 2}
        lv = [v if t != "Coordinate" else np.stack([v, 0 * v, 0 * v], axis=1) for t, (_, _, v, _) in lg.items()]
        b, e, mo, uf, i64 = self.bodies, self.ep_constraints, self.motions, self.user_functions, np.int64
        go = self.generic_ode2
        nr = max([len(g.rows) for g in joints], default=0)
        joint_slices, k = [], 0  # (group, its joints in the table, its rows)
        for g in joints:
            joint_slices.append((g, slice(k, k + g.size), len(g.rows)))
            k += g.size
        self.joint_table = (k, nr)  # joints, rows per joint

        def table(values, shape, dtype, padded=False):  # one array over all joints, rows padded to nr
            out = np.zeros((k,) + shape, dtype)
            for (g, sl, rows), x in zip(joint_slices, values):
                if padded:
                    out[sl, :rows] = x
                else:
                    out[sl] = x
            return out
        fields = dict(
            fcols=self.fcols, fpos_ref=self.fpos_ref, ftheta_ref=self.ftheta_ref, f_is_ep=self.f_is_ep,
            f_is_2d=self.f_is_2d, f_rotation=self.f_rotation, f_R0=self.f_R0, f_turned=self.f_turned,
            lie_cols=self.lie_cols, lie_ref=self.lie_ref,
            mframe=self.mframe, mlocal=self.mlocal, mrot=self.mrot, mrot_identity=self.mrot_identity,
            mcols=self.mcols, b_frame=b.frame, b_cols=b.cols, b_mass=b.mass, b_com=b.com, b_inertia=b.inertia,
            p_cols=self.mass_points.cols, p_mass=self.mass_points.mass,
            g_mr=self.constant_mass[0], g_mc=self.constant_mass[1], g_mv=self.constant_mass[2],
            g_kr=go.stiffness[0], g_kc=go.stiffness[1], g_kv=go.stiffness[2], g_dr=go.damping[0], g_dc=go.damping[1], g_dv=go.damping[2], g_fc=go.force[0],
            g_fv=go.force[1],
            l_kind=np.concatenate([np.full(len(m), kinds[t]) for t, (_, m, _, _) in lg.items()] or [np.zeros(0, i64)]),
            l_markers=np.concatenate([m for _, m, _, _ in lg.values()] or [np.zeros(0, i64)]),
            l_coord=np.concatenate([self.mcoord[m] for _, m, _, _ in lg.values()] or [np.zeros(0, i64)]),
            l_vec=np.concatenate(lv or [np.zeros((0, 3))]).reshape(-1, 3),
            l_weight=np.concatenate([self.loads.weights[t] for t in lg] or [np.zeros(0)]),
            l_fixed=np.concatenate([fixed for _, _, _, fixed in lg.values()] or [np.zeros(0, bool)]),
            s_m0=springs.m0, s_m1=springs.m1, s_k=springs.k, s_d=springs.d, s_L0=springs.L0, s_fa=springs.fa,
            s_voff=springs.voff, s_active=springs.active, c_m0=cartesian.m0, c_m1=cartesian.m1, c_k=cartesian.k,
            c_d=cartesian.d, c_offset=cartesian.offset, c_active=cartesian.active, cs_cols=cspring.cols,
            cs_k=cspring.k, cs_d=cspring.d, cs_offset=cspring.offset, cs_active=cspring.active, e_frame=e.frame, e_cols=e.cols, e_ae=e.ae,
            j_m0=table([g.m0 for g in joints], (), i64), j_m1=table([g.m1 for g in joints], (), i64),
            j_R0=table([g.R0 for g in joints], (3, 3), float), j_R1=table([g.R1 for g in joints], (3, 3), float),
            j_kinds=table([g.row_code[0] for g in joints], (nr,), i64, True),
            j_ri=table([g.row_code[1] for g in joints], (nr,), i64, True),
            j_rj=table([g.row_code[2] for g in joints], (nr,), i64, True),
            j_nrows=table([g.row_code[3] for g in joints], (), i64), j_cols=table([g.cols for g in joints], (14,), i64),
            j_ae=table([g.ae for g in joints], (nr,), i64, True), j_active=table([g.active for g in joints], (), bool),
            cc_cols=cc.cols.reshape(-1, 2), cc_factor=cc.factor, cc_offset=cc.offset, cc_vlevel=cc.velocity_level,
            cc_ae=cc.ae.reshape(-1, 1), cc_active=cc.active,
            mo_m0=mo.m0, mo_m1=mo.m1, mo_R0=mo.R0, mo_R1=mo.R1, mo_revolute=mo.revolute, mo_levels=mo.levels,
            mo_ae=mo.ae.reshape(-1), mo_cols=mo.cols, mo_code=mo.programs.code, mo_consts=mo.programs.consts,
            mo_start=mo.programs.start, mo_work_size=[mo.programs.work_size],
            uf_code=uf.programs.code, uf_consts=uf.programs.consts, uf_start=uf.programs.start,
            uf_work_size=[uf.programs.work_size],
            l_uf=np.array([uf.of("loads", i) for idx, _, _, _ in lg.values() for i in idx], i64),
            s_uf=np.array([uf.of("objects", i) for i in springs.objects], i64),
            c_uf=np.array([uf.of("objects", i) for i in cartesian.objects], i64),
            cs_uf=np.array([uf.of("objects", i) for i in cspring.objects], i64), ae_velocity=self.velocity_rows())
        # C-contiguous, int64 indices, float values throughout: one compiled signature for every model
        dtype = {"i": np.int64, "b": bool, "f": float}
        fields = {name: np.ascontiguousarray(x, dtype[np.asarray(x).dtype.kind]) for name, x in fields.items()}
        # every compiled type of the registry, with or without items here: one signature per registry
        compiled = [t for t in OBJECT_TYPES.values() if t.kernels is not None]
        for role, groups in (("constraint", self.constraints), ("force", self.forces)):
            fields[f"x_{role}s"] = tuple(self._data_of(t.group, groups) for t in compiled
                                         if t.role == role or (role == "force" and t.role == "body"))
        return K.Model(**fields)

    def _data_of(self, cls, groups):
        """The Model's data of a compiled type: its group's, or for a type without items here one empty data
        made once per class (its arrays have no rows, so no model's values; building a group per type and
        model cost more than a small model's solve)."""
        found = next((g for g in groups if isinstance(g, cls)), None)
        if found is not None:
            return found.data
        if cls not in _EMPTY_DATA:
            _EMPTY_DATA[cls] = cls(self).data
        return _EMPTY_DATA[cls]

    def velocity_rows(self) -> np.ndarray:
        """(nae,) bool: the λ rows of velocity-level constraints, motions aside."""
        rows = np.zeros(self.nae, bool)
        for g in self.constraints:
            if g is not self.motions:
                rows[g.ae[np.broadcast_to(g.row_levels, g.ae.shape) == 1]] = True
        return rows

    def marker_frame(self, m: int) -> int:
        mk = self.loaded.document.markers[m]
        if hasattr(mk, "bodyNumber"):
            b = self.loaded.ref("markers", m, "bodyNumber")
            obj = self.loaded.document.objects[b]
            if obj.objectType == "Ground":
                return self.frame_of_ground[b]
            return self.frame_of_node[self.loaded.ref("objects", b, "nodeNumber")]
        return self.frame_of_node[self.loaded.ref("markers", m, "nodeNumber")]

    def allocate_ae(self, count: int) -> np.ndarray:
        """Global indices of `count` algebraic (λ) coordinates, n2-based in the full system."""
        idx = np.arange(self.ae_offset, self.ae_offset + count)
        self.ae_offset += count
        return idx

    def _pattern(self) -> None:
        """Static sparsity pattern of the Newton matrix: rows/cols of every block, in the
        order the value arrays are produced (so only values change during a solve)."""
        n2, dummy = self.n2, self.dummy
        rows, cols, drop = [], [], []
        for g in (self.bodies, self.mass_points):
            r, c = g.mass_pattern()
            rows.append(r); cols.append(c); drop.append((r == dummy) | (c == dummy))
        for r, c, _ in (self.constant_mass, self.generic_ode2.stiffness, self.generic_ode2.damping):
            rows.append(r); cols.append(c); drop.append(np.zeros(len(r), bool))
        for g in self.forces:
            r, c = g.jacobian_pattern()
            rows.append(r); cols.append(c); drop.append((r == dummy) | (c == dummy))
        for g in self.constraints:
            ae = np.broadcast_to(g.ae[:, :, None], g.ae.shape + (g.cols.shape[1],)).ravel() + n2
            cc = np.broadcast_to(g.cols[:, None, :], g.ae.shape + (g.cols.shape[1],)).ravel()
            rows += [cc, ae, g.ae.ravel() + n2]  # C_qᵀ block, C_q block, (λ,λ) diagonal (inactive rows)
            cols += [ae, cc, g.ae.ravel() + n2]
            drop += [cc == dummy, cc == dummy, np.zeros(g.ae.size, bool)]
        # the dummy column of ground markers belongs to no coordinate: drop its entries
        self.keep = ~np.concatenate(drop) if drop else np.zeros(0, bool)
        self.jac_rows = np.concatenate(rows)[self.keep] if rows else np.zeros(0, int)
        self.jac_cols = np.concatenate(cols)[self.keep] if cols else np.zeros(0, int)
        self.n = n2 + self.nae

    def describe_unknowns(self, columns: list[int]) -> list[str]:
        """Item names behind unknowns of the Newton system (for error messages)."""
        names = []
        for c in columns:
            if c < self.n2:
                node = int(np.searchsorted(self.node_offset, c, side="right") - 1)
                names.append(self.names["nodes"][node])
            else:
                for g in self.constraints:
                    hit = np.argwhere(g.ae == c - self.n2)
                    if len(hit):
                        names.append(self.constraint_item_name(g, int(hit[0][0])))
        return sorted(set(names), key=names.index)

    def constraint_item_name(self, group, k: int) -> str:
        if hasattr(group, "objects"):
            return self.names["objects"][group.objects[k]]
        if hasattr(group, "nodes"):
            return self.names["nodes"][group.nodes[k]]
        return self.loaded.names["motions"][group.index[k]]

    def newton_culprits(self, q: np.ndarray, v: np.ndarray) -> list[str]:
        """Constraint items with the largest violation at a state (for Newton failures)."""
        kin = self.kinematics(0.0, q, v)
        worst = []
        for g, gv, _ in self.constraint_values(kin, False):
            for k in np.argsort(-np.abs(gv).max(axis=1))[:3]:
                worst.append((float(np.abs(gv[k]).max()), self.constraint_item_name(g, int(k))))
        return [name for err, name in sorted(worst, reverse=True)[:3] if err > 1e-8]

    # ------------------------------------------------------------------------ stage: kinematics
    def kinematics(self, t: float, q: np.ndarray, v: np.ndarray, out: Kinematics | None = None) -> Kinematics:
        """The kinematics at (q, v), into `out` if given (its previous contents are overwritten:
        for a caller that holds no other reference to them)."""
        if out is None:
            kin = empty_kinematics(t, self.n2, len(self.fcols), len(self.mframe))
        else:
            kin = out
            kin.t, kin.a = t, None
        # as one row of the sensors' kernel (the same compiled kernels.kinematics): a run then loads one
        # compiled kernel fewer (each costs ~0.05-0.1 s of a cold start)
        kinematics_rows(np.ascontiguousarray(q)[None], np.ascontiguousarray(v)[None],
                        frame_model(self.model, len(self.mframe)), K.Kin(*(a[None] for a in kin.arrays())))
        return kin

    # ------------------------------------------------------------------------ stage: residual
    def scatter(self, cols: np.ndarray, vals: np.ndarray) -> np.ndarray:
        """Sum per-item generalized forces into a length-n2 vector (the dummy slot dropped)."""
        return np.bincount(cols.ravel(), weights=vals.ravel(), minlength=self.n2 + 1)[:self.n2]

    def applied_forces(self, kin: Kinematics, load_factor: float = 1.0) -> np.ndarray:
        """f(q, v, t): loads, connector forces and quadratic velocity terms (right-hand side)."""
        f = self.loads.generalized(kin, load_factor)
        f += self.bodies.quadratic_velocity(kin)
        if self.generic_ode2.size:
            f += self.generic_ode2.generalized(kin)
        for g in self.forces:
            f += g.generalized(kin)
        return f

    def constraint_values(self, kin: Kinematics, velocity_level: bool):
        """[(group, g (n,rows), C (n,rows,ncols))] of every constraint group."""
        return [(g, *g.evaluate(kin, velocity_level)) for g in self.constraints]

    def constraint_forces(self, evaluated, lam: np.ndarray) -> np.ndarray:
        """C_qᵀ λ."""
        out = np.zeros(self.n2)
        for g, _, C in evaluated:
            K.add_constraint_forces(out, g.cols, C, lam, g.ae)
        return out

    def constraint_residual(self, evaluated, lam: np.ndarray) -> np.ndarray:
        r = np.zeros(self.nae)
        for (g, gval, _), all_active in zip(evaluated, self.all_active):
            r[g.ae] = gval if all_active else np.where(g.active[:, None], gval, lam[g.ae])
        return r

    def newton_matrix_values(self, kin: Kinematics, evaluated, mass_factor: float, k_factor: float,
                             d_factor: float, level_factors) -> np.ndarray:
        """Values of J̃ in the order of the static pattern:
        mass_factor·M − k_factor·∂f/∂q − d_factor·∂f/∂v, C_qᵀ, level_factor·C_q, inactive diagonal."""
        vals = [self.bodies.newton_values(kin, mass_factor, k_factor, d_factor),
                self.mass_points.mass_values() * mass_factor, self.constant_mass[2] * mass_factor,
                self.generic_ode2.stiffness[2] * k_factor, self.generic_ode2.damping[2] * d_factor]
        for g in self.forces:
            dq, dv = g.jacobian_values(kin)
            vals.append(-(k_factor * dq + d_factor * dv).ravel())
        for g, _, C in evaluated:
            C = C * g.active[:, None, None]
            vals.append(C.ravel())
            vals.append((C * np.broadcast_to(level_factors(g), g.ae.shape)[:, :, None]).ravel())
            vals.append((~g.active[:, None] * np.ones(g.ae.shape)).ravel())
        return np.concatenate([np.ravel(v) for v in vals])[self.keep]


def ground_pose(ground) -> tuple[np.ndarray, np.ndarray]:
    """Position and rotation of a Ground object (referenceHT wins over the separate parts)."""
    if ground.referenceHT is not None:
        rot, pos = S.ht_parts(ground.referenceHT)
        return np.array(pos, float), np.array(rot, float)
    pos = ground.referencePosition if ground.referencePosition is not None else [0.0, 0.0, 0.0]
    rot = ground.referenceRotation if ground.referenceRotation is not None else S.IDENTITY3
    return np.array(pos, float), np.array(rot, float)
