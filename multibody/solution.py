"""The solution (Exudyn's solution file): the system coordinates at each written time.

A row is [t, q (ODE2), q̇, q̈, λ (algebraic variables)], the velocities, accelerations and
algebraic variables each optional (`solution.file.export.*`), written by the same rule as the
sensors with its own period (`solution.file.writePeriod`). λ comes in Exudyn's order: one per
Euler-parameter node, then each object's in object order with Exudyn's count (a JointGeneric
has 6, a JointSpherical 3, a free axis 0); the multipliers of prescribed motions (not Exudyn
items) follow at the end.

Stored when the document's simulationSettings set `solution.file.write` (Exudyn's default is
true, which would store every job's coordinates: here only an explicit true counts) or the job
asks (`"store": {"solution": true}`, which the service passes as that setting).

`Recorder` is what the solvers write rows to: the sensors, and the solution when it is stored.
With equal periods both take every written row; with different ones the solver writes every
step and each applies its own schedule.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .items import EXUDYN_MULTIPLIERS
from .outputs import SensorSet, WriteSchedule
from .settings import explicit

HEADLINES = {"implicit": "implicit second order time integration solver",
             "static": "nonlinear static solver static solver"}


@dataclass
class Solution:
    """The written rows and how to read them; `to_dict` is the JSON form, `header` Exudyn's file header."""
    solver: str  # the solver's words in Exudyn's first header line
    systemSizes: list[int]  # [nODE2, nODE1, nAlgebraic, nData]
    columnsExported: list[int]  # [nODE2, nVel2, nAcc2, nODE1, nVel1, nAlgebraic, nData]
    contains: list[str]  # Exudyn's "columns contain" words
    plannedSteps: tuple[str, int]  # ("time steps" | "load steps", count)
    nodes: list[dict]  # per node: name, nodeType, first ODE2 column (after time), count
    data: np.ndarray = field(repr=False)

    @property
    def columns(self) -> list[str]:
        n2, nv, na, _, _, nae, _ = self.columnsExported
        return (["time"] + [f"q{i}" for i in range(n2)] + [f"q_t{i}" for i in range(nv)]
                + [f"q_tt{i}" for i in range(na)] + [f"lambda{i}" for i in range(nae)])

    def meta(self) -> dict:
        return {"solver": self.solver, "systemSizes": list(self.systemSizes),
                "columnsExported": list(self.columnsExported), "contains": list(self.contains),
                "plannedSteps": list(self.plannedSteps), "nodes": [dict(n) for n in self.nodes],
                "columns": self.columns, "rows": int(self.data.shape[0])}

    def to_dict(self) -> dict:
        return {**self.meta(), "data": self.data.tolist()}

    def to_csv(self, note: str = "") -> str:
        """Exudyn's solution file, with every number in Python's float repr (lossless)."""
        return header(self.meta(), note) + csv_rows(self.data)


def csv_rows(rows: np.ndarray) -> str:
    return "".join(",".join(map(repr, row)) + "\n" for row in rows.tolist())


def header(meta: dict, note: str = "") -> str:
    """Exudyn's solution file header (exudyn.utilities.LoadSolutionFile reads its 5th line)."""
    sizes, cols = meta["systemSizes"], meta["columnsExported"]
    what, count = meta["plannedSteps"]
    return (f"#Exudyn {meta['solver']} solution file\n"
            f"#{note or 'written by mbserve'}\n"
            f"#columns contain: {', '.join(meta['contains'])}\n"
            f"#number of system coordinates [nODE2, nODE1, nAlgebraic, nData] = [{','.join(map(str, sizes))}]\n"
            f"#number of written coordinates [nODE2, nVel2, nAcc2, nODE1, nVel1, nAlgebraic, nData] = "
            f"[{','.join(map(str, cols))}]\n"
            f"#total columns exported  (excl. time) = {sum(cols)}\n"
            f"#number of {what} (planned) = {count}\n#\n")


def requested(loaded) -> bool:
    """An explicit `solution.file.write: true` (or its alias) in the document (see the module docstring)."""
    return explicit(loaded.document.simulationSettings, "solution.file.write") is True


def exudyn_ae_order(system) -> np.ndarray:
    """Our multiplier index for each of Exudyn's algebraic variables (-1: one we do not carry)."""
    order = [int(i) for i in system.ep_constraints.ae.ravel()]
    per_object = {}
    for g in system.constraints:
        for k, obj in enumerate(getattr(g, "objects", ())):
            per_object[obj] = (g, k)
    for obj in sorted(per_object):
        g, k = per_object[obj]
        slots = getattr(g, "slots", None)
        if slots is None:
            order += [int(i) for i in g.ae[k]]
        else:
            full = [-1] * EXUDYN_MULTIPLIERS[system.loaded.document.objects[obj].objectType]
            for slot, i in zip(slots, g.ae[k]):
                full[slot] = int(i)
            order += full
    order += [int(i) for i in system.motions.ae.ravel()] if system.motions.size else []
    return np.array(order, dtype=int)


class SolutionRows:
    """Keeps the solution's rows, in blocks, as they are written."""

    def __init__(self, system, kind: str):
        loaded = system.loaded
        export = loaded.settings["solution"]["file"]["export"]
        self.kind, self.n2 = kind, int(system.n2)
        self.velocities = export["velocities"] and kind != "static"  # Exudyn's static file has neither
        self.accelerations = export["accelerations"] and kind != "static"
        self.order = exudyn_ae_order(system) if export["algebraicCoordinates"] else np.zeros(0, int)
        self.blocks: list[np.ndarray] = []
        self.system = system
        contains = ["time", "ODE2 displacements"]
        contains += ["ODE2 velocities"] if export["velocities"] else []
        contains += ["ODE2 accelerations"] if export["accelerations"] else []
        contains += ["AE coordinates"] if export["algebraicCoordinates"] and system.nae else []
        self.contains = contains

    def add(self, t: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray, lam: np.ndarray) -> None:
        """Rows at times t (k,), states (k, n2) and multipliers (k, nae) as the sensors see them."""
        parts = [t[:, None], q] + ([v] if self.velocities else []) + ([a] if self.accelerations else [])
        if len(self.order):
            ae = np.zeros((len(t), len(self.order)))
            have = self.order >= 0
            ae[:, have] = lam[:, self.order[have]]
            parts.append(ae)
        self.blocks.append(np.concatenate(parts, axis=1))

    def result(self) -> Solution:
        s, doc = self.system, self.system.loaded.document
        width = 1 + self.n2 * (1 + self.velocities + self.accelerations) + len(self.order)
        data = np.concatenate(self.blocks) if self.blocks else np.zeros((0, width))
        settings = s.loaded.settings
        if self.kind == "static":
            solver, planned = HEADLINES["static"], ("load steps", int(settings["staticSolver"]["numberOfLoadSteps"]))
        else:
            solver_type = doc.solve.solverType
            solver = HEADLINES["implicit"] if solver_type in ("GeneralizedAlpha", "TrapezoidalIndex2") \
                else f"explicit time integration ({solver_type})"
            planned = ("time steps", int(round(settings["timeIntegration"]["numberOfSteps"])))
        nodes = [{"name": s.names["nodes"][i], "nodeType": node.nodeType, "offset": 1 + int(s.node_offset[i]),
                  "count": int(s.node_ncoords[i])} for i, node in enumerate(doc.nodes)]
        cols = [self.n2, self.n2 * self.velocities, self.n2 * self.accelerations, 0, 0, len(self.order), 0]
        return Solution(solver=solver, systemSizes=[self.n2, 0, len(self.order), 0], columnsExported=cols,
                        contains=self.contains, plannedSteps=planned, nodes=nodes, data=data)


class Recorder:
    """The solvers' sink for written rows: the sensors, and the solution when it is stored."""

    def __init__(self, system, kind: str = "dynamic", store: bool | None = None):
        loaded = system.loaded
        settings = loaded.settings
        steps = settings["staticSolver"]["numberOfLoadSteps"] if kind == "static" else \
            settings["timeIntegration"]["numberOfSteps"]
        self.sensors = SensorSet(system, planned_rows=int(steps) + 2)  # the steps, the start and a last one
        self.solution_rows = SolutionRows(system, kind) if (requested(loaded) if store is None else store) else None
        file, sensors = loaded.settings["solution"]["file"], loaded.settings["solution"]["sensors"]
        self.sensor_period, self.solution_period = sensors["writePeriod"], file["writePeriod"]
        # Exudyn's writeInitialValues: false leaves out the start-time row of the solution and the
        # sensors, and the first step takes its place in the write schedule (measured with 1.13.6)
        self.write_initial = bool(file["writeInitialValues"])
        self.filters: tuple[WriteSchedule, WriteSchedule] | None = None
        self.pending = None  # with filters: the last step, if neither schedule took it (written at the end)
        if kind == "static":
            ss = loaded.settings["staticSolver"]
            self.t_end = ss["loadStepStart"] + ss["loadStepDuration"]
        else:
            self.t_end = loaded.settings["timeIntegration"]["endTime"]

    def schedule(self, t0: float) -> WriteSchedule:
        """The solver's write schedule: every step when the two periods differ (then filtered here)."""
        if self.solution_rows is None or self.solution_period == self.sensor_period:
            return WriteSchedule(t0, self.sensor_period)
        self.filters = (WriteSchedule(t0, self.sensor_period), WriteSchedule(t0, self.solution_period))
        return WriteSchedule(t0, 0.0)

    def record(self, t: float, q, v, a, lam, lam_sign: float = 1.0) -> None:
        """A row of the solver's state, with the data coordinates as they are now."""
        data = [g.data.dc.ravel() for g in self.sensors.system.data_groups]
        self.record_rows(np.concatenate([[t], q, v, a, np.multiply(lam, lam_sign), *data])[None, :])

    def record_rows(self, rows: np.ndarray) -> None:
        """Written rows packed as [t, q, v, q̈, λ, data coordinates] (the compiled step loop's layout)."""
        if self.filters is None:
            self.sensors.record_rows(rows)
            if self.solution_rows is not None:
                self._solution(rows)
            return
        for_sensors, for_solution = self.filters
        takes = np.array([[for_sensors.due(t), for_solution.due(t)] for t in rows[:, 0]], dtype=bool).reshape(-1, 2)
        if len(rows):
            self.pending = None if takes[-1].all() else (rows[-1].copy(), takes[-1].copy())
        self.sensors.record_rows(rows[takes[:, 0]])
        self._solution(rows[takes[:, 1]])

    def _solution(self, rows: np.ndarray) -> None:
        n2, nae = self.sensors.system.n2, self.sensors.system.nae
        if len(rows):
            self.solution_rows.add(rows[:, 0], rows[:, 1:1 + n2], rows[:, 1 + n2:1 + 2 * n2],
                                   rows[:, 1 + 2 * n2:1 + 3 * n2], rows[:, 1 + 3 * n2:1 + 3 * n2 + nae])

    def _flush_last(self) -> None:
        """The last step is always written (WriteSchedule): add it where a filter skipped it."""
        if self.pending is None:
            return
        row, took = self.pending
        self.pending = None
        if row[0] >= self.t_end - 1e-10 * max(1.0, abs(self.t_end)):
            if not took[0]:
                self.sensors.record_rows(row[None, :])
            if not took[1]:
                self._solution(row[None, :])

    def series(self):
        self._flush_last()
        return self.sensors.series()

    def solution(self) -> Solution | None:
        self._flush_last()
        return None if self.solution_rows is None else self.solution_rows.result()
