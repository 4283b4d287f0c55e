"""The Python side of the compiled generalized-α loop (alpha_kernel): the model's buffers, the
linear solver's set-up between calls, calls of about 0.1 s between which it polls for
cancellation and reports progress, and the state at which a run ended."""
from __future__ import annotations

import time

import numpy as np

from ..kernels import Entries, newton_parameters, work
from ..outputs import written_rows
from ..values import SimulationCanceled
from . import alpha_kernel
from .alpha_kernel import (FAIL_H, INITIAL, ITERATIONS, JACOBIANS, LINEAR_SETUP, N_STEPS, PAUSED, ROWS, SINGULAR, T,
                           UNDEFINED_LAW, WRITE_NEXT, LinearSystem)
from .linear import SingularMatrix, sparse_analysis
from .repeated_call import RepeatedCall, first_call_steps

# The dense LU up to this many unknowns (fewer in full Newton, which factorizes every iteration), the
# sparse one above. Measured on the chains (compiled loop, modified Newton, medians of 4): sparse/dense
# 1.31 at n = 130 and 1.14 at 650, as the dense LU's factors keep only the nonzeros that arise while
# the sparse one keeps its whole structural pattern; the dense LU grows as n³ (n² memory). At n = 2600
# the compiled sparse loop took 0.90 of the Python loop with SuperLU that it replaced.
DENSE_MAX_UNKNOWNS = 1000
DENSE_MAX_UNKNOWNS_FULL_NEWTON = 500


def entries(capacity: int) -> Entries:
    return Entries(np.zeros(capacity, np.int64), np.zeros(capacity, np.int64), np.empty(capacity), np.zeros(1, np.int64))


def entry_bound(m) -> int:
    """At most how many entries alpha_kernel._assemble writes for the Model m (every block at its full size):
    with room for them from the start, the initial accelerations assemble once, not again after
    CompiledLoop.setup (for the dense LU; the sparse one's analysis still needs the first assembly). A
    bound too small would only bring that second call back."""
    nj, nr = m.j_kinds.shape
    count = 49 * len(m.b_frame) + 3 * len(m.p_mass) + len(m.g_mr) + len(m.g_kr) + len(m.g_dr) \
        + 196 * (len(m.s_m0) + len(m.c_m0)) + 4 * len(m.cs_cols) + 14 * len(m.e_cols) + 29 * nj * nr \
        + 5 * len(m.cc_cols) + 28 * len(m.mo_m0)
    count += sum(data.cols.shape[0] * data.cols.shape[1] ** 2 for data in m.x_forces)
    return count + sum(data.ae.size * (2 * data.cols.shape[1] + 1) for data in m.x_constraints)


def linear_system(n: int, dense: bool, capacity: int = 0, ignore_singular: bool = False) -> LinearSystem:
    """Empty buffers for a Newton matrix of n unknowns, those of the other kind of LU empty; room for
    `capacity` entries; more room and the sparse analysis are set up when an assembly asks
    (CompiledLoop.setup). `ignore_singular`: the dense LU's (LinearSystem.sparse)."""
    i0, f0 = np.zeros(0, np.int64), np.empty(0)
    arrays = dict(A=np.empty((0, 0)), piv=i0, ptr=i0, idx=i0, val=f0, slot=i0, Ap=i0, Ai=i0, Ax=f0, perm_r=i0,
                  perm_c=i0, Lp=i0, Li=i0, Lx=f0, Up=i0, Ui=i0, Ux=f0, Ud=f0, x=f0, y=f0)
    if dense:
        arrays.update(A=np.empty((n, n)), piv=np.zeros(n, np.int64), ptr=np.zeros(2 * n + 1, np.int64),
                      idx=np.empty(n * n, np.int64), val=np.empty(n * n))
    else:
        arrays.update(x=np.zeros(n), y=np.empty(n))
    return LinearSystem(entries(capacity), np.array([0 if dense else 1, 0, int(ignore_singular)]), **arrays)


class CompiledLoop:
    """run_steps with the model's arrays and its solver settings; `iterations` and `jacobians` count
    Newton's. `ignore_singular` (Exudyn's linearSolver.ignoreSingularJacobian, which only its dense LU
    honours): the dense LU up to DENSE_MAX_UNKNOWNS, its singular pivots ignored (alpha_kernel._lu_factor)."""

    def __init__(self, system, method, ti: dict, cancel=None, progress=None, ignore_singular: bool = False):
        s, nt = system, ti["newton"]
        self.system = s
        self.cancel, self.progress = cancel, progress
        self._last_poll = -np.inf  # the first step polls: a job canceled while queued stops at once
        self.iterations = self.jacobians = 0
        self.method = np.array([method.beta, method.gamma, method.alpha_m, method.alpha_f, method.newmark,
                                method.index2], float)
        self.newton, self.max_iterations = newton_parameters(nt), int(nt["maxIterations"])
        t0, t_end, steps = float(ti["startTime"]), float(ti["endTime"]), int(round(ti["numberOfSteps"]))
        disc = ti["discontinuous"]
        self.timing = np.array([t0, t_end, steps, (t_end - t0) / steps, ti["adaptiveStep"], ti["adaptiveStepDecrease"],
                                ti["adaptiveStepIncrease"], ti["minimumStepSize"],
                                ti["adaptiveStepRecoveryIterations"], ti["adaptiveStepRecoverySteps"], 0.0,
                                disc["iterationTolerance"], disc["maxIterations"], disc["ignoreMaxIterations"],
                                disc["useRecommendedStepSize"]], float)
        # run_steps' state (alpha_kernel.T..., STEP_INDEX...): time, step size, next write time, failed step
        self.fstate = np.array([t0, (t_end - t0) / steps, t0, 0.0, -1.0])
        self.istate = np.array([0, 0, 0, 0, 0, 1, 0, 0], np.int64)
        dense_max = DENSE_MAX_UNKNOWNS if nt["useModifiedNewton"] else DENSE_MAX_UNKNOWNS_FULL_NEWTON
        dense = s.n <= (DENSE_MAX_UNKNOWNS if ignore_singular else dense_max)
        self.fact = linear_system(s.n, dense, entry_bound(s.model), ignore_singular and dense)
        self.kin, self.w = work(s.model, s.n2, s.nae)
        e = np.empty
        self.scratch = (e(s.n2), e(s.n2), e(s.n2), e(s.nae), e(s.n2), e(s.n), e(s.n), e(s.n2), e(s.n2))
        self.motion_accelerations = np.full(len(s.model.mo_m0), 2, np.int64)  # initial_accelerations' levels
        self.run = RepeatedCall(alpha_kernel.run_steps)  # its first call types the arguments, the next need not

    def setup(self) -> bool:
        """What _lu asked for, from the entries the kernel assembled: room for all of them, or the
        sparse LU's pivot order and patterns. False if the matrix is singular (SuperLU's analysis
        failed)."""
        written = self.fact.entries
        count = int(written.count[0])
        if count > written.vals.shape[0]:
            self.fact = self.fact._replace(entries=entries(count))
            return True
        try:
            found = sparse_analysis(self.system.n, written.rows[:count], written.cols[:count], written.vals[:count])
        except SingularMatrix:
            return False
        self.fact = self.fact._replace(**found)
        self.fact.sparse[1] = 1
        return True

    def _run(self, q, v, a, abar, lam, rows, max_steps: int) -> int:
        return self.run(self.system.model, self.kin, self.w, self.scratch, self.method, self.newton,
                        self.max_iterations, self.timing, q, v, a, abar, lam, self.fstate, self.istate, self.fact, rows,
                        self.motion_accelerations, max_steps)

    def initial_accelerations(self, q, v):
        """(q̈, λ) at the start, or None if the system is singular; the EvaluationError of a motion's
        law (or its rate) undefined there. The solve's first call of run_steps."""
        t, n2 = float(self.fstate[T]), self.system.n2
        a, lam, no_rows = np.zeros(n2), np.zeros(self.system.nae), np.empty((0, 1))
        code = LINEAR_SETUP
        self.istate[INITIAL] = 1
        try:
            while code == LINEAR_SETUP:
                code = self._run(q, v, a, a, lam, no_rows, 0)
                if code == LINEAR_SETUP and not self.setup():
                    return None
        finally:
            self.istate[INITIAL] = 0
        if code == UNDEFINED_LAW:
            motions, kin = self.system.motions, self.system.kinematics(t, q, v)
            motions.evaluate(kin, True)  # the rows as the kernel's residual evaluated them, then their rates:
            motions.rate_residual(kin)  # one of them raises
        if code == SINGULAR:
            return None
        x = self.scratch[5]
        return x[:n2].copy(), x[n2:].copy()

    def solve(self, writer, q, v, a, abar, lam, sensors, seconds_per_call: float = 0.1):
        """Steps in place on (q, v, a, abar, lam) from the start until the end or a failure, recording
        sensor rows and polling (cancel, progress) between calls of about seconds_per_call. Returns
        the ending (alpha_kernel's code); `writer`, `t`, `steps`, `failed_step` and the counters follow."""
        fstate, istate = self.fstate, self.istate
        fstate[WRITE_NEXT] = writer.next
        self.timing[10] = writer.period
        self.poll(float(fstate[T]))  # a job canceled while queued stops before its first step
        max_steps = first_call_steps(self.system.n)  # then as many as take about seconds_per_call
        rows = written_rows(self.system, sensors.sensors.capacity)
        while True:
            started, steps_before = time.perf_counter(), istate[N_STEPS]
            istate[ROWS] = 0
            code = self._run(q, v, a, abar, lam, rows, max_steps)
            sensors.record_rows(rows[:istate[ROWS]])
            writer.next = float(fstate[WRITE_NEXT])
            if code == LINEAR_SETUP:  # the step that asked starts again (its iterations so far stay counted)
                if self.setup():
                    continue
                code = SINGULAR
            if code != PAUSED:
                break
            self.poll(float(fstate[T]))
            per_step = (time.perf_counter() - started) / max(1, istate[N_STEPS] - steps_before)
            max_steps = max(1, int(seconds_per_call / max(per_step, 1e-9)))
        self.iterations += int(istate[ITERATIONS])
        self.jacobians += int(istate[JACOBIANS])
        return code

    @property
    def t(self) -> float:
        """The time reached: the start of a failed step."""
        return float(self.fstate[T])

    @property
    def steps(self) -> int:
        return int(self.istate[N_STEPS])

    @property
    def failed_step(self) -> float:
        return float(self.fstate[FAIL_H])

    def iterate(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, v, q̈) of the failed step's last Newton iterate."""
        return self.scratch[0], self.scratch[1], self.scratch[2]

    def matrix(self) -> np.ndarray:
        """The Newton matrix last assembled (the one whose LU failed), dense."""
        E, n = self.fact.entries, self.system.n
        count = int(E.count[0])
        A = np.zeros((n, n))
        np.add.at(A, (E.rows[:count], E.cols[:count]), E.vals[:count])
        return A

    def poll(self, t: float) -> None:
        now = time.perf_counter()
        if now - self._last_poll < 0.2:
            return
        self._last_poll = now
        if self.cancel is not None and self.cancel():
            raise SimulationCanceled()
        if self.progress is not None:
            t0, t_end = self.timing[0], self.timing[1]
            self.progress(min(1.0, (t - t0) / (t_end - t0)) if t_end > t0 else 1.0)
