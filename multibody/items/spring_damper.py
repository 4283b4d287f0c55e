"""ObjectConnectorSpringDamper: f = k(L - L0) + d(eᵀΔv - v_off) + f_a along e = Δp/L.

Generalized forces +J0ᵀ(f e) on marker 0 and -J1ᵀ(f e) on marker 1 (f > 0: tension).
"""
from __future__ import annotations

import numpy as np

from .. import kernels
from .. import schema as S
from .declaration import ItemType
from .bodies import _block_pattern


class TwoMarkerForceGroup:
    """Connectors that apply F to marker 0 and -F to marker 1 (position markers)."""
    OBJECT_TYPE = ""

    def __init__(self, system):
        doc = system.loaded.document
        self.system = system
        self.objects = [i for i, o in enumerate(doc.objects) if o.objectType == self.OBJECT_TYPE]
        n = self.size = len(self.objects)
        ms = np.array([system.loaded.ref("objects", i, "markerNumbers") for i in self.objects], dtype=int)
        ms = ms.reshape(n, 2)
        self.m0, self.m1 = ms[:, 0], ms[:, 1]
        self.items = [doc.objects[i] for i in self.objects]
        self.active = np.array([o.activeConnector for o in self.items], dtype=bool)
        self.cols = np.concatenate([system.mcols[self.m0], system.mcols[self.m1]], axis=1) if n \
            else np.zeros((0, 14), int)
        self.uf = np.array([system.user_functions.of("objects", i) for i in self.objects], int)  # -1: none

    def param(self, name: str) -> np.ndarray:
        return np.array([getattr(o, name) for o in self.items], float)

    def relative(self, kin):
        """Δp, Δv (...,n,3) over any leading axes of the kinematics (one state, or sensor rows)."""
        return kin.pos[..., self.m1, :] - kin.pos[..., self.m0, :], kin.vel[..., self.m1, :] - kin.vel[..., self.m0, :]

    def d_relative(self, kin) -> np.ndarray:
        """Jd = [-J0, J1] (n,3,14): δΔp = Jd δq."""
        return np.concatenate([-kin.Jpos[self.m0], kin.Jpos[self.m1]], axis=2)

    def generalized(self, kin) -> np.ndarray:
        F = self.force(kin) * self.active[:, None]
        return self.system.scatter(self.cols, -np.einsum("nij,ni->nj", self.d_relative(kin), F))

    def jacobian_pattern(self):
        return _block_pattern(self.cols)

    def jacobian_values(self, kin):
        """∂f/∂q, ∂f/∂v of the generalized forces (n,14,14), marker Jacobians held fixed."""
        Jd = self.d_relative(kin)
        K, D = self.force_derivatives(kin)
        act = self.active[:, None, None]
        dq = -np.einsum("nai,nab,nbj->nij", Jd, K, Jd) * act
        dv = -np.einsum("nai,nab,nbj->nij", Jd, D, Jd) * act
        return dq, dv


class SpringDampers(TwoMarkerForceGroup):
    OBJECT_TYPE = "ConnectorSpringDamper"

    def __init__(self, system):
        super().__init__(system)
        self.k, self.d = self.param("stiffness"), self.param("damping")
        self.L0, self.fa, self.voff = self.param("referenceLength"), self.param("force"), self.param("velocityOffset")

    def generalized(self, kin) -> np.ndarray:
        return kernels.spring_forces(kin.t, kin.pos, kin.vel, kin.Jpos, self.system.mcols, self.m0, self.m1, self.k,
                                     self.d, self.L0, self.fa, self.voff, self.active, self.system.n2, self.uf,
                                     self.system.user_functions.kernel_arguments())

    def jacobian_values(self, kin):
        return kernels.spring_jacobians(kin.t, kin.pos, kin.vel, kin.Jpos, self.m0, self.m1, self.k, self.d, self.L0,
                                        self.fa, self.voff, self.active, self.uf,
                                        self.system.user_functions.kernel_arguments())

    # ---------------------------------------------------------------- output variables
    # the solver's forces are kernels.spring_forces; kin: the kinematics of sensor rows
    def _geometry(self, kin):
        dp, dv = self.relative(kin)
        L = np.linalg.norm(dp, axis=-1)
        vn = np.linalg.norm(dv, axis=-1)
        safe = np.where(L > 0, L, 1.0)[..., None]
        e = np.where(L[..., None] > 0, dp / safe,
                     np.where(vn[..., None] > 0, dv / np.where(vn > 0, vn, 1.0)[..., None], 0.0))
        return dp, dv, L, e

    def scalar_force(self, kin, geometry=None):
        """The force along e; `geometry`: _geometry(kin), when the caller has it already."""
        dp, dv, L, e = self._geometry(kin) if geometry is None else geometry
        rate = np.einsum("...i,...i->...", e, dv) - self.voff
        f = self.k * (L - self.L0) + self.d * rate + self.fa
        for k in np.flatnonzero(self.uf >= 0):  # its user function at (t, deltaL, deltaL_t)
            f[..., k] = self.system.user_functions.evaluate(self.uf[k], 1, kin.t, L[..., k] - self.L0[k],
                                                            rate[..., k])[..., 0]
        return f

    def force(self, kin, geometry=None) -> np.ndarray:
        geometry = self._geometry(kin) if geometry is None else geometry
        return self.scalar_force(kin, geometry)[..., None] * geometry[3]

    def output(self, kin, k: int, var: str):
        geometry = dp, dv, L, e = self._geometry(kin)
        if var == "Distance":
            return L[:, k]
        if var == "Displacement":
            return dp[:, k]
        if var == "Velocity":
            return dv[:, k]
        if var == "Force":
            return self.force(kin, geometry)[:, k] * self.active[k]
        if var == "ForceLocal":
            return self.scalar_force(kin, geometry)[:, k] * self.active[k]
        raise KeyError(var)


class CartesianSpringDampers(TwoMarkerForceGroup):
    """ObjectConnectorCartesianSpringDamper: F = k∘(Δp - offset) + d∘Δv, global components."""
    OBJECT_TYPE = "ConnectorCartesianSpringDamper"

    def __init__(self, system):
        super().__init__(system)
        n = self.size
        self.k = self.param("stiffness").reshape(n, 3)
        self.d = self.param("damping").reshape(n, 3)
        self.offset = self.param("offset").reshape(n, 3)

    def force(self, kin) -> np.ndarray:
        dp, dv = self.relative(kin)
        F = self.k * (dp - self.offset) + self.d * dv
        for k in np.flatnonzero(self.uf >= 0):  # its user function at (t, displacement, velocity)
            F[..., k, :] = self._user_function(kin, k, 0, 3)
        return F

    def force_derivatives(self, kin):
        eye = np.eye(3)
        K, D = self.k[:, :, None] * eye, self.d[:, :, None] * eye
        for k in np.flatnonzero(self.uf >= 0):  # one state: ∂F/∂displacement, ∂F/∂velocity
            K[k], D[k] = self._user_function(kin, k, 3, 18).reshape(2, 3, 3)
        return K, D

    def _user_function(self, kin, k: int, first: int, count: int) -> np.ndarray:
        """Programs first.. of item k's user function (user_function_programs.py's order)."""
        dp, dv = self.relative(kin)
        args = [dp[..., k, i] for i in range(3)] + [dv[..., k, i] for i in range(3)]
        return self.system.user_functions.evaluate(self.uf[k] + first, count, kin.t, *args)

    def output(self, kin, k: int, var: str):
        """Over sensor rows (kin: their kinematics)."""
        dp, dv = self.relative(kin)
        if var == "Distance":
            return np.linalg.norm(dp[:, k], axis=-1)
        if var == "Displacement":
            return dp[:, k]
        if var == "Velocity":
            return dv[:, k]
        if var == "Force":
            return self.force(kin)[:, k] * self.active[k]
        raise KeyError(var)


ITEMS = (ItemType(S.ObjectConnectorSpringDamper, "force", ("Distance", "Displacement", "Velocity", "Force", "ForceLocal"),
                  SpringDampers, markers="position", explicit="apply"),
         ItemType(S.ObjectConnectorCartesianSpringDamper, "force", ("Distance", "Displacement", "Velocity", "Force"),
                  CartesianSpringDampers, markers="position", explicit="apply"))
