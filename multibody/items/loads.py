"""Loads: ForceVector, TorqueVector, MassProportional, Coordinate — Q = Jᵀ·load, vectorized per type.
A load with a user function takes its value at t instead, unscaled by the load factor (Exudyn's rule)."""
from __future__ import annotations

import numpy as np

from .. import kernels


class Loads:
    def __init__(self, system):
        doc = system.loaded.document
        self.system = system
        ref = system.loaded.ref
        by_type: dict[str, list[int]] = {}
        for i, load in enumerate(doc.loads):
            by_type.setdefault(load.loadType, []).append(i)
        self.groups = {}
        for t, idx in by_type.items():
            markers = np.array([ref("loads", i, "markerNumber") for i in idx], dtype=int)
            if t == "Coordinate":
                value = np.array([doc.loads[i].load for i in idx], float)
            else:
                value = np.array([doc.loads[i].loadVector for i in idx], float)
            body_fixed = np.array([getattr(doc.loads[i], "bodyFixed", False) for i in idx], dtype=bool)
            self.groups[t] = (np.array(idx), markers, value, body_fixed)
        self.user_functions = {t: np.array([system.user_functions.of("loads", i) for i in idx], int)
                               for t, (idx, _, _, _) in self.groups.items()}
        self.weights = {t: system.mweight[markers] if t == "MassProportional" else np.ones(len(markers))
                        for t, (_, markers, _, _) in self.groups.items()}

    def vectors(self, kin, load_type: str, load_factor: float = 1.0) -> np.ndarray:
        """The applied load vectors of one type in global coordinates (body-fixed ones rotated
        by the marker frame, including its localHT rotation, as Exudyn does); a user function's
        at kin.t, not scaled by load_factor."""
        _, markers, value, body_fixed = self.groups[load_type]
        uf = self.user_functions[load_type]
        if (uf >= 0).any():
            value = value.copy()
            for k in np.flatnonzero(uf >= 0):
                value[k] = self.system.user_functions.evaluate(uf[k], value[k].size or 1, kin.t).reshape(value[k].shape)
        if load_type in ("ForceVector", "TorqueVector") and body_fixed.any():
            rotated = np.einsum("nij,nj->ni", kin.rot[markers], value)
            value = np.where(body_fixed[:, None], rotated, value)
        if load_factor == 1.0:
            return value
        scaled = load_factor * value
        return np.where((uf >= 0).reshape((-1,) + (1,) * (value.ndim - 1)), value, scaled) if (uf >= 0).any() else scaled

    def generalized(self, kin, load_factor: float = 1.0) -> np.ndarray:
        s = self.system
        f = np.zeros(s.n2)
        for t, (_, markers, _, _) in self.groups.items():
            vec = self.vectors(kin, t, load_factor)
            if t == "Coordinate":
                f += s.scatter(s.mcoord[markers], vec)
            else:
                J = kin.Jrot if t == "TorqueVector" else kin.Jpos
                kernels.marker_loads(f, s.mcols, J, markers, vec, self.weights[t])
        return f
