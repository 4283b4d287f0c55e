"""The compiled step loop (solvers/alpha_kernel.py), the only one: its methods and Newton settings
against Exudyn run on the same document (bench/exudyn_runner.py), its motions against closed
forms, its sparse LU against its dense one, and the error documents of each way a run can end.
(Every case and shared example at its own settings is checked against Exudyn's stored results by
test_exudyn_cases.py and test_shared_examples.py.)"""
import copy
import math
import time

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import solve_ivp

import multibody
from bench import exudyn_runner
from multibody.api import SimulationCanceled
from multibody.kernels import LU_DONE, LU_REPIVOT, LU_SINGULAR, lu_solve_csc, sparse_lu_refactor
from multibody.solvers import compiled_loop
from multibody.solvers.compiled_loop import CompiledLoop
from multibody.solvers.linear import sparse_analysis

from .conftest import CASES, EXAMPLES, load_json
from .test_motion_laws import sliders
from .test_motions import driven_block


def model_at(folder) -> dict:
    return load_json(folder / "model.json")


def with_settings(doc: dict, settings: dict) -> dict:
    doc = copy.deepcopy(doc)
    ti = doc.setdefault("simulationSettings", {}).setdefault("timeIntegration", {})
    for key, value in settings.items():
        ti[key] = {**ti.get(key, {}), **value} if isinstance(value, dict) else value
    return doc


@pytest.mark.parametrize("settings", [
    {"generalizedAlpha": {"useIndex2Constraints": True, "useNewmark": True}},
    {"generalizedAlpha": {"spectralRadius": 0.6}},
    {"newton": {"useModifiedNewton": False}},
], ids=["index2_newmark", "rho_0.6", "full_newton"])
def test_methods_and_newton_settings_follow_exudyn(settings):
    """Exudyn's steps: the same Newton iterations and Jacobians, sensors to its Newton residue
    (modified Newton at relTol 1e-8: 4.4e-9 of the largest measured, as on the default case)."""
    doc = with_settings(model_at(CASES / "slider_crank"), settings)
    res = multibody.simulate(doc)
    _, mbs = exudyn_runner.solve(doc)
    counters = mbs.sys["dynamicSolver"].it
    theirs = {mbs.GetSensor(i)["name"]: exudyn_runner.sensor_data(mbs, i)
              for i in range(mbs.systemData.NumberOfSensors())}
    assert res.status == "succeeded", res.error
    assert res.solver["newtonIterations"] == counters.newtonStepsCount
    assert res.solver["jacobians"] == counters.newtonJacobiCount
    for name, rows in theirs.items():
        ours = np.asarray(res.sensors[name].data)
        assert ours.shape == rows.shape, name
        assert np.abs(ours - rows).max() <= 2e-8 * (1.0 + np.abs(rows).max()), name


def test_adaptive_steps_halve_and_recover():
    """Newton fails at the nominal step (0.05): the step is halved until it converges and grows back
    after adaptiveStepRecoverySteps good steps, ending at endTime. The counts are those the compiled
    loop and the Python loop it replaced both took (commit 19007a5); Exudyn's step control differs."""
    doc = with_settings(model_at(CASES / "slider_crank"), {"numberOfSteps": 20, "adaptiveStep": True})
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    assert (res.solver["steps"], res.solver["newtonIterations"], res.solver["jacobians"]) == (66, 994, 483)
    assert res.sensors["sliderNode_Position"].data[-1, 0] == pytest.approx(1.0, abs=1e-10)


def ode(rate, q0: float, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q, u) of q̈ = rate(t, q, u) from q0 at rest, to 1e-12."""
    sol = solve_ivp(lambda t, y: [y[1], rate(t, y[0], y[1])], (0.0, times[-1]), [q0, 0.0], t_eval=times,
                    rtol=1e-12, atol=1e-14)
    return sol.y[0], sol.y[1]


MOTIONS = {  # a law of the level, its (q, u) at times t in closed form, tolerances on q and u (2-3x measured)
    "velocity_of_q": ({"motionType": "Custom", "level": "Velocity", "velocity": "0.3*cos(2*t)*(1 + 0.5*q)"},
                      lambda t: (2 * (np.exp(0.075 * np.sin(2 * t)) - 1),  # d/dt ln(1 + q/2) = 0.15 cos 2t
                                 0.3 * np.cos(2 * t) * np.exp(0.075 * np.sin(2 * t))), 1e-6, 1e-7),
    "acceleration": ({"motionType": "Custom", "level": "Acceleration", "acceleration": "-4*q + 0.1*u + sin(t)"},
                     lambda t: ode(lambda t, q, u: -4 * q + 0.1 * u + math.sin(t), 0.0, t), 1e-6, 3e-6),
    "steady": ({"motionType": "Steady", "u": 0.7}, lambda t: (0.7 * t, np.full_like(t, 0.7)), 1e-12, 1e-12),
}


@pytest.mark.parametrize("name", sorted(MOTIONS))
def test_motions_follow_their_laws(name):
    """Motions at every level on a pushed block (1.5 N): the joint coordinate and its rate follow the
    law's solution to the method's O(h²) at h = 1/400."""
    motion, exact, q_tol, u_tol = MOTIONS[name]
    res = multibody.simulate(driven_block(motion, force=1.5, steps=400))
    assert res.status == "succeeded", res.error
    t = res.sensors["m_Coordinate"].data[:, 0]
    q, u = exact(t)
    assert np.abs(res.sensors["m_Coordinate"].data[:, 1] - q).max() < q_tol
    assert np.abs(res.sensors["m_Coordinate_t"].data[:, 1] - u).max() < u_tol
    if name == "steady":  # no acceleration: the motion holds the load
        assert np.abs(res.sensors["m_Force"].data[:, 1] + 1.5).max() < 1e-12


def test_revolute_and_prismatic_motions_with_index2_constraints_follow_their_laws():
    """Newmark with index-2 constraints: a position-level sine on a slider (0.2 sin 3t), and on a
    revolute joint the damped oscillator φ̈ = 1 - φ - 0.2 φ̇ from rest."""
    doc = sliders(2, {"motionType": "Sinusoid", "level": "Position", "amplitude": 0.2, "rate": 3.0})
    doc["objects"][4]["objectType"] = "JointRevoluteZ"
    doc["motions"][1] = {"motionType": "Custom", "level": "Acceleration", "acceleration": "1 - q - 0.2*u",
                         "joint": "slider1", "name": "drive1"}
    doc["simulationSettings"]["timeIntegration"]["generalizedAlpha"] = {"useIndex2Constraints": True,
                                                                       "useNewmark": True}
    doc["sensors"] = [{"sensorType": "Motion", "name": motion, "motionNumber": motion,
                       "outputVariableType": "Coordinate"} for motion in ("drive0", "drive1")]
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    t = res.sensors["drive0"].data[:, 0]
    wd = math.sqrt(0.99)
    angle = 1 - np.exp(-0.1 * t) * (np.cos(wd * t) + 0.1 / wd * np.sin(wd * t))
    assert np.abs(res.sensors["drive0"].data[:, 1] - 0.2 * np.sin(3 * t)).max() < 3e-5  # measured 1.5e-5
    assert np.abs(res.sensors["drive1"].data[:, 1] - angle).max() < 2e-5  # measured 8.8e-6


def undefined_law(law: str) -> dict:
    doc = sliders(1, {"motionType": "Custom", "level": "Acceleration", "acceleration": law})
    doc["simulationSettings"]["timeIntegration"].update(endTime=2.0, numberOfSteps=200)
    doc["sensors"] = [{"sensorType": "Motion", "name": "q", "motionNumber": "drive0",
                       "outputVariableType": "Coordinate"}]
    return doc


def test_a_law_undefined_during_the_run_is_reported_at_its_step():
    # a law of q, which validation cannot evaluate: undefined once q ≈ t²/2 > 1, in the step from t = 1.41
    res = multibody.simulate(undefined_law("1 + 1e-9*sqrt(1 - q)"))
    assert res.status == "failed" and res.solver["steps"] == 141
    assert res.error == {"code": "motion_evaluation",
                         "message": "a motion could not be evaluated near t = 1.41: motion 'drive0' acceleration "
                                    "is undefined at t=1.42, q=1.00817, u=1.41498",
                         "detail": {"time": pytest.approx(1.41, abs=1e-12), "items": []}}
    assert res.sensors["q"].data[-1, 0] == pytest.approx(1.41, abs=1e-12)  # the rows up to the failed step


def test_a_law_undefined_at_the_start_is_reported():
    # the rate sqrt(q) is 0 at the start (q = 0), its time derivative u/(2 sqrt(q)) is not
    res = multibody.simulate(sliders(1, {"motionType": "Custom", "level": "Velocity", "velocity": "sqrt(q)"}))
    assert res.error == {"code": "motion_evaluation",
                         "message": "a motion could not be evaluated near t = 0: motion 'drive0' velocityDot is "
                                    "undefined at t=0, q=0, u=0",
                         "detail": {"time": 0.0, "items": []}}
    assert res.solver["steps"] == 0


def test_newton_failure_is_reported_with_the_failed_step():
    """Steps 0.01, 0.005, 0.0025, 0.00125, then the minimum step 0.001 (Exudyn's ReduceStepSize: a step longer than
    the minimum is retried, at least with the minimum), two iterations each."""
    doc = with_settings(model_at(EXAMPLES / "mini"), {"minimumStepSize": 1e-3, "newton": {
        "relativeTolerance": 0.0, "absoluteTolerance": 0.0, "maxIterations": 2}})
    res = multibody.simulate(doc)
    assert res.error == {"code": "newton_not_converged",
                         "message": "Newton did not converge at t = 0.001 (step size 0.001)",
                         "detail": {"time": pytest.approx(0.001, abs=1e-15), "items": []}}
    assert (res.solver["steps"], res.solver["newtonIterations"], res.solver["jacobians"]) == (0, 10, 1)


@pytest.mark.parametrize("dense_max", [compiled_loop.DENSE_MAX_UNKNOWNS, 0], ids=["dense_lu", "sparse_lu"])
def test_a_singular_matrix_names_the_unknowns(dense_max):
    """A body without rotational inertia whose joint is inactive: the dense LU finds the zero pivot, the
    sparse one already in SuperLU's analysis; the columns that depend on others are node0's."""
    doc = model_at(EXAMPLES / "mini")
    doc["objects"][1]["inertia"] = [0, 0, 0, 0, 0, 0]
    doc["objects"][2]["activeConnector"] = False
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiled_loop, "DENSE_MAX_UNKNOWNS", dense_max)
        res = multibody.simulate(doc)
    assert res.error == {"code": "singular_matrix", "message": "singular system matrix (redundant or conflicting "
                         "constraints, or a body without mass)", "detail": {"time": 0.01, "items": ["node0"]}}
    assert (res.solver["steps"], res.solver["newtonIterations"], res.solver["jacobians"]) == (0, 0, 0)


def test_cancel_stops_a_long_compiled_run():
    doc = copy.deepcopy(model_at(EXAMPLES / "chain_10"))
    doc["simulationSettings"]["timeIntegration"].update(numberOfSteps=40000, endTime=40.0)
    calls, started = [], time.perf_counter()

    def cancel():
        calls.append(time.perf_counter() - started)
        return len(calls) >= 3

    with pytest.raises(SimulationCanceled):
        multibody.simulate(doc, cancel=cancel)
    assert len(calls) == 3 and calls[-1] < 5.0  # polled about every 0.2 s, not at the end


@pytest.mark.parametrize("modified", [True, False], ids=["modified_newton", "full_newton"])
def test_the_sparse_lu_gives_the_dense_lus_steps(modified):
    doc = with_settings(model_at(EXAMPLES / "chain_50"), {"numberOfSteps": 40, "endTime": 0.2,  # 650 unknowns
                                                          "newton": {"useModifiedNewton": modified}})
    loops = []
    with pytest.MonkeyPatch.context() as patch:  # the sparse LU from 1000 (modified Newton) or 500 unknowns on
        patch.setattr(compiled_loop, "DENSE_MAX_UNKNOWNS", 600)
        patch.setattr(CompiledLoop, "setup", lambda self, setup=CompiledLoop.setup: loops.append(self) or setup(self))
        sparse = multibody.simulate(doc)
    assert loops and loops[0].fact.sparse[0] == 1 and loops[0].fact.sparse[1] == 1
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiled_loop, "DENSE_MAX_UNKNOWNS", 1000)
        patch.setattr(compiled_loop, "DENSE_MAX_UNKNOWNS_FULL_NEWTON", 1000)
        dense = multibody.simulate(doc)
    assert sparse.status == dense.status == "succeeded"
    for key in ("steps", "newtonIterations", "jacobians"):
        assert sparse.solver[key] == dense.solver[key], key
    for name, series in dense.sensors.items():
        want = np.asarray(series.data)
        assert np.abs(np.asarray(sparse.sensors[name].data) - want).max() <= 1e-9 * max(1.0, np.abs(want).max()), name


def kkt(n1: int, m: int, seed: int):
    """A saddle-point matrix [[M, Cᵀ], [C, 0]] as entries (rows, cols, vals), some of them repeated."""
    rng = np.random.default_rng(seed)
    M = sp.random(n1, n1, density=0.02, random_state=seed)
    M = M + M.T + 5 * sp.eye(n1)
    C = sp.random(m, n1, density=0.05, random_state=seed + 1) + sp.eye(m, n1)
    K = sp.bmat([[M, C.T], [C, None]]).tocoo()
    twice = rng.choice(K.nnz, 40, replace=False)
    return (np.concatenate([K.row, K.row[twice]]).astype(np.int64), np.concatenate([K.col, K.col[twice]]).astype(
        np.int64), np.concatenate([K.data, rng.uniform(-1, 1, 40)]))


def refactor(found, slot_values):
    Ax = found["Ax"]
    Ax[:] = 0.0
    np.add.at(Ax, found["slot"], slot_values)
    return sparse_lu_refactor(found["Ap"], found["Ai"], Ax, found["Lp"], found["Li"], found["Lx"], found["Up"],
                              found["Ui"], found["Ux"], found["Ud"], np.zeros(len(found["Ud"])))


def test_the_sparse_lu_refactors_on_the_analyzed_pattern():
    rows, cols, vals = kkt(120, 40, 3)
    n = 160
    found = sparse_analysis(n, rows, cols, vals)
    A = sp.csc_matrix((vals, (rows, cols)), shape=(n, n))
    assert refactor(found, vals) == LU_DONE
    b = np.random.default_rng(0).standard_normal(n)
    x = lu_solve_csc(b, *(found[k] for k in ("perm_r", "perm_c", "Lp", "Li", "Lx", "Up", "Ui", "Ux", "Ud")))
    np.testing.assert_allclose(A @ x, b, atol=1e-11)
    # other values on the same pattern: the order still holds, the factors are the new matrix's
    vals2 = vals * np.random.default_rng(1).uniform(0.9, 1.1, len(vals))
    assert refactor(found, vals2) == LU_DONE
    x = lu_solve_csc(b, *(found[k] for k in ("perm_r", "perm_c", "Lp", "Li", "Lx", "Up", "Ui", "Ux", "Ud")))
    np.testing.assert_allclose(sp.csc_matrix((vals2, (rows, cols)), shape=(n, n)) @ x, b, atol=1e-11)


def test_the_sparse_lu_asks_for_a_new_order_or_reports_a_singular_matrix():
    rows, cols, vals = kkt(120, 40, 4)
    found = sparse_analysis(160, rows, cols, vals)
    Ap, Ai, Up = found["Ap"], found["Ai"], found["Up"]
    # a column of A' with entries below its pivot and none above: its pivot is the entry itself
    j = next(j for j in range(160) if Up[j] == Up[j + 1] and (Ai[Ap[j]:Ap[j + 1]] > j).any())
    pivot = (found["perm_c"][cols] == j) & (found["perm_r"][rows] == j)
    shrunk = np.where(pivot, vals * 1e-6, vals)  # far below the rest of its column now
    assert refactor(found, shrunk) == LU_REPIVOT
    singular = np.where(cols == cols[0], 0.0, vals)  # a zero column
    assert refactor(found, singular) == LU_SINGULAR
