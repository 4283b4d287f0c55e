"""ObjectGenericODE2: M q̈ + K q + D q̇ = f on the coordinates of its nodes (in the order of nodeNumbers),
with constant M, K, D and f (Exudyn's CObjectGenericODE2::ComputeODE2LHS: q and q̇ the nodes' coordinates
without their reference values). The matrices are Exudyn's MatrixContainer: dense (a list of rows) or
sparse triplets; both reach the kernels as triplets (row, column, value) on the system's coordinates,
so a sparse matrix stays sparse in the Newton matrix and the residual costs its entries only."""
from __future__ import annotations

from typing import Annotated, Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .. import schema as S
from ..field_docs import add_descriptions
from .declaration import ItemType

GENERIC_ODE2_OUTPUTS = ("Coordinates", "Coordinates_t", "Coordinates_tt", "Force")


class SparseMatrix(BaseModel):
    """A sparse matrix as Exudyn exports a MatrixContainer set with SetWithSparseMatrix(CSR): its size and
    [row, column, value] triplets (entries at one place add up)."""
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True, json_schema_extra=add_descriptions,
                              defer_build=True)
    numberOfRows: Annotated[int, Field(ge=0)]
    """rows of the matrix"""
    numberOfColumns: Annotated[int, Field(ge=0)]
    """columns of the matrix"""
    triplets: list[Annotated[list[S.FiniteFloat], Field(min_length=3, max_length=3)]] = Field(default_factory=list)
    """[row, column, value] per entry, row and column integral and zero-based"""


MatrixContainer = Annotated[Union[list[list[S.FiniteFloat]], SparseMatrix], Field(
    description="Exudyn's MatrixContainer: a dense matrix (a list of rows; [] for none) or "
                "{numberOfRows, numberOfColumns, triplets: [[row, column, value], ...]}")]


class ObjectGenericODE2(S.Item):
    """M q̈ + K q + D q̇ = forceVector on the coordinates of its nodes, q without the reference values; M, K,
    D constant, n x n (n the nodes' coordinates) or empty for none."""
    objectType: Literal["GenericODE2"]
    nodeNumbers: Annotated[list[S.Ref], Field(min_length=1)]
    """its nodes (indices or names); their coordinates, in this order, are the object's"""
    massMatrix: MatrixContainer = Field(default_factory=list)
    """M (n x n), or [] for none"""
    stiffnessMatrix: MatrixContainer = Field(default_factory=list)
    """K (n x n), or [] for none"""
    dampingMatrix: MatrixContainer = Field(default_factory=list)
    """D (n x n), or [] for none"""
    forceVector: list[S.FiniteFloat] = Field(default_factory=list)
    """f (n), or [] for none"""
    forceUserFunction: S.UnsetUserFunction = 0
    """0: none (a Python user function cannot be sent)"""
    massMatrixUserFunction: S.UnsetUserFunction = 0
    """0: none (a Python user function cannot be sent)"""
    jacobianUserFunction: S.UnsetUserFunction = 0
    """0: none (a Python user function cannot be sent)"""


MATRICES = ("massMatrix", "stiffnessMatrix", "dampingMatrix")


def matrix_shape(matrix) -> tuple[int, int] | None:
    """(rows, columns), None for a dense matrix whose rows differ in length."""
    if isinstance(matrix, SparseMatrix):
        return matrix.numberOfRows, matrix.numberOfColumns
    lengths = {len(row) for row in matrix}
    if len(lengths) > 1:
        return None
    return (len(matrix), lengths.pop()) if lengths and 0 not in lengths else (0, 0)  # [] and [[]]: none


def triplets(matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, columns, values) of the nonzero entries (a constant matrix: zeros add nothing)."""
    if isinstance(matrix, SparseMatrix):
        t = np.array(matrix.triplets, float).reshape(-1, 3)
        r, c, v = t[:, 0].astype(np.int64), t[:, 1].astype(np.int64), t[:, 2]
    else:
        dense = np.array(matrix, float).reshape(matrix_shape(matrix))
        r, c = np.nonzero(dense)
        v = dense[r, c]
    keep = v != 0.0
    return r[keep], c[keep], v[keep]


def problems(obj, n: int) -> list[tuple[str, str]]:
    """(path, message) of matrices and forceVector whose size is not that of the n coordinates."""
    out = []
    for key in MATRICES:
        matrix = getattr(obj, key)
        shape = matrix_shape(matrix)
        if shape is None:
            out.append((f".{key}", "its rows differ in length"))
        elif shape != (0, 0) and shape != (n, n):
            out.append((f".{key}", f"is {shape[0]} x {shape[1]}; the nodes have {n} coordinates: {n} x {n}, or [] "
                                   "for none"))
        elif isinstance(matrix, SparseMatrix):
            for k, (r, c, _) in enumerate(matrix.triplets):
                if r != int(r) or c != int(c) or not (0 <= r < shape[0] and 0 <= c < shape[1]):
                    out.append((f".{key}.triplets[{k}]", f"row {r:g}, column {c:g} is not an entry of the "
                                                         f"{shape[0]} x {shape[1]} matrix"))
                    break
    if obj.forceVector and len(obj.forceVector) != n:
        out.append((".forceVector", f"has {len(obj.forceVector)} entries; the nodes have {n} coordinates"))
    return out


class GenericODE2Objects:
    """All ObjectGenericODE2 items: their M, K, D as triplets on the system's coordinates (ground nodes
    have none: their entries are dropped), f as (column, value)."""

    def __init__(self, system):
        doc, ref = system.loaded.document, system.loaded.ref
        self.objects = [i for i, o in enumerate(doc.objects) if o.objectType == "GenericODE2"]
        self.size = len(self.objects)
        self.items = [doc.objects[i] for i in self.objects]
        self.coordinates = []  # per object: its coordinates' columns, the dummy slot for a ground node's
        parts = {key: [] for key in MATRICES}
        forces = []
        for i in self.objects:
            obj = doc.objects[i]
            cols = np.concatenate([system.node_offset[k] + np.arange(system.node_ncoords[k])
                                   for k in ref("objects", i, "nodeNumbers")] or [np.zeros(0, int)])
            self.coordinates.append(cols)
            for key in MATRICES:
                r, c, v = triplets(getattr(obj, key))
                parts[key].append((cols[r], cols[c], v))
            forces.append((cols[:len(obj.forceVector)], np.array(obj.forceVector, float)))

        def join(items, n):
            return tuple(np.concatenate([x[j] for x in items]) if items else np.zeros(0, int if j < n - 1 else float)
                         for j in range(n))
        self.mass, self.stiffness, self.damping = (join(parts[key], 3) for key in MATRICES)
        self.force = join(forces, 2)

    def generalized(self, kin) -> np.ndarray:
        """f - K q - D q̇ (length n2+1, the dummy slot last), in the order of kernels.applied_forces."""
        f = np.zeros(len(kin.q))
        np.add.at(f, self.force[0], self.force[1])
        np.add.at(f, self.stiffness[0], -self.stiffness[2] * kin.q[self.stiffness[1]])
        np.add.at(f, self.damping[0], -self.damping[2] * kin.v[self.damping[1]])
        return f[:-1]

    def mass_triplets(self):
        return self.mass

    def output(self, kin, k: int, var: str, local=None):
        cols = self.coordinates[k]
        if var == "Force":  # Exudyn's ODE2 left-hand side K q + D q̇ - f of the object
            q, v = kin.q[:, cols], kin.v[:, cols]
            lhs = np.zeros(q.shape)
            obj = self.items[k]
            for key, x in (("stiffnessMatrix", q), ("dampingMatrix", v)):
                r, c, val = triplets(getattr(obj, key))
                np.add.at(lhs, (slice(None), r), val * x[:, c])
            if obj.forceVector:
                lhs -= np.array(obj.forceVector)
            return lhs
        source = {"Coordinates": kin.q, "Coordinates_t": kin.v, "Coordinates_tt": kin.a}[var]
        return source[:, cols]


ITEMS = (ItemType(ObjectGenericODE2, "body", GENERIC_ODE2_OUTPUTS, GenericODE2Objects, node_problems=problems),)
