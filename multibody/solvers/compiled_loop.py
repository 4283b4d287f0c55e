"""The Python side of the compiled generalized-α loop (alpha_kernel): the model's buffers, the
linear solver's set-up between calls, and calls of about 0.1 s between which it polls for
cancellation and reports progress."""
from __future__ import annotations

import time

import numpy as np

from ..kernels import Entries, newton_parameters, work
from . import alpha_kernel
from .alpha_kernel import (FAIL_H, H, HAND_BACK, ITERATIONS, JACOBIANS, LINEAR_SETUP, N_STEPS, NEWTON_FAILED, PAUSED,
                           ROWS, T, WRITE_NEXT, LinearSystem)
from .linear import SingularMatrix, sparse_analysis
from .repeated_call import RepeatedCall

# The dense LU up to this many unknowns (fewer in full Newton, which factorizes every iteration), the
# sparse one above. Measured on the chains (compiled loop, modified Newton, medians of 4): sparse/dense
# 1.31 at n = 130 and 1.14 at 650, as the dense LU's factors keep only the nonzeros that arise while
# the sparse one keeps its whole structural pattern; the dense LU grows as n³ (n² memory). At n = 2600
# the compiled sparse loop took 0.90 of the Python loop with SuperLU that it replaced.
DENSE_MAX_UNKNOWNS = 1000
DENSE_MAX_UNKNOWNS_FULL_NEWTON = 500
ROWS_PER_CALL = 256


def linear_system(n: int, dense: bool, capacity: int = 0) -> LinearSystem:
    """Empty buffers for a Newton matrix of n unknowns; the entries and the sparse analysis are set up
    when the first assembly asks (CompiledLoop.setup)."""
    e, z = np.empty, np.zeros
    entries = Entries(z(capacity, np.int64), z(capacity, np.int64), e(capacity), z(1, np.int64))
    i0, f0 = z(0, np.int64), e(0)
    if not dense:
        return LinearSystem(entries, np.array([1, 0]), e((0, 0)), i0, i0, i0, f0, i0, i0, i0, f0, i0, i0, i0, i0, f0, i0,
                            i0, f0, f0, z(n), e(n))
    return LinearSystem(entries, np.array([0, 0]), e((n, n)), z(n, np.int64), z(2 * n + 1, np.int64),
                        e(n * n, np.int64), e(n * n), i0, i0, i0, f0, i0, i0, i0, i0, f0, i0, i0, f0, f0, f0, f0)


class CompiledLoop:
    """run_steps with the model's arrays and its solver settings."""

    def __init__(self, system, method, ti: dict):
        s, nt = system, ti["newton"]
        self.system = s
        self.method = np.array([method.beta, method.gamma, method.alpha_m, method.alpha_f, method.newmark,
                                method.index2], float)
        self.newton, self.max_iterations = newton_parameters(nt), int(nt["maxIterations"])
        t0, t_end, steps = float(ti["startTime"]), float(ti["endTime"]), int(round(ti["numberOfSteps"]))
        self.timing = np.array([t0, t_end, steps, (t_end - t0) / steps, ti["adaptiveStep"], ti["adaptiveStepDecrease"],
                                ti["adaptiveStepIncrease"], ti["minimumStepSize"],
                                ti["adaptiveStepRecoveryIterations"], ti["adaptiveStepRecoverySteps"], 0.0], float)
        dense_max = DENSE_MAX_UNKNOWNS if nt["useModifiedNewton"] else DENSE_MAX_UNKNOWNS_FULL_NEWTON
        self.fact = linear_system(s.n, s.n <= dense_max)
        self.rows = np.empty((ROWS_PER_CALL, 1 + 3 * s.n2 + s.nae))
        self.kin, self.w = work(s.model, s.n2, s.nae)
        e = np.empty
        self.scratch = (e(s.n2), e(s.n2), e(s.n2), e(s.nae), e(s.n2), e(s.n), e(s.n))

    def setup(self) -> bool:
        """What _lu asked for, from the entries the kernel assembled: room for all of them, or the
        sparse LU's pivot order and patterns. False if the matrix is singular (SuperLU's analysis
        failed): the Python loop then reports it."""
        entries = self.fact.entries
        count = int(entries.count[0])
        if count > entries.vals.shape[0]:
            self.fact = self.fact._replace(entries=linear_system(0, True, count).entries)
            return True
        try:
            found = sparse_analysis(self.system.n, entries.rows[:count], entries.cols[:count], entries.vals[:count])
        except SingularMatrix:
            return False
        self.fact = self.fact._replace(**found)
        self.fact.sparse[1] = 1
        return True

    def initial_accelerations(self, t, q, v, integ):
        """(q̈, λ) at the start, or None if the system is singular (Integrator.initial_accelerations,
        which reports a motion's undefined law)."""
        x = np.empty(self.system.n)
        code = LINEAR_SETUP
        while code == LINEAR_SETUP:
            code = alpha_kernel.initial_accelerations(self.system.model, t, q, v, self.fact, x)
            if code == LINEAR_SETUP and not self.setup():
                return None
        if code == HAND_BACK:
            return integ.initial_accelerations(t, q, v)
        if code == NEWTON_FAILED:
            return None
        return x[:self.system.n2], x[self.system.n2:]

    def solve(self, state, writer, q, v, a, abar, lam, sensors, integ, seconds_per_call: float = 0.1):
        """Steps in place on (q, v, a, abar, lam) from `state` until the end or a failure, recording
        sensor rows and polling `integ` (cancel, progress) between calls of about seconds_per_call.
        Returns (code, step size of a failed step); `state`, `writer` and integ's counters follow."""
        fstate = np.array([state.t, state.h, writer.next, 0.0])
        istate = np.array([state.step_index, state.n_steps, state.good_steps, 0, 0, 1, 0], np.int64)
        self.timing[10] = writer.period
        t0, t_end = self.timing[0], self.timing[1]
        integ.poll(state.t, t0, t_end)  # a job canceled while queued stops before its first step
        max_steps = 16  # then as many as take about seconds_per_call
        run = RepeatedCall(alpha_kernel.run_steps)  # the same arrays at every call
        while True:
            started, steps_before = time.perf_counter(), istate[N_STEPS]
            istate[ROWS] = 0
            code = run(self.system.model, self.kin, self.w, self.scratch, self.method, self.newton, self.max_iterations,
                       self.timing, q, v, a, abar, lam, fstate, istate, self.fact, self.rows, max_steps)
            sensors.record_rows(self.rows[:istate[ROWS]])
            state.t, state.h, writer.next = float(fstate[T]), float(fstate[H]), float(fstate[WRITE_NEXT])
            state.step_index, state.n_steps, state.good_steps = (int(x) for x in istate[:3])
            if code == LINEAR_SETUP:  # the step that asked starts again (its iterations so far stay counted)
                if self.setup():
                    continue
                code = HAND_BACK
            if code != PAUSED:
                break
            integ.poll(state.t, t0, t_end)
            per_step = (time.perf_counter() - started) / max(1, istate[N_STEPS] - steps_before)
            max_steps = max(1, int(seconds_per_call / max(per_step, 1e-9)))
        integ.iterations += int(istate[ITERATIONS])
        integ.jacobians += int(istate[JACOBIANS])
        return code, float(fstate[FAIL_H])
