"""The compiled step loop (solvers/alpha_kernel.py) against the Python loop it mirrors: the same
steps, sensor rows, Newton iterations and Jacobians (to LU round-off: the dense LU's sums differ
from SuperLU's) and the same failures."""
import copy
import time

import numpy as np
import pytest
import scipy.sparse as sp

from multibody.api import SimulationCanceled
from multibody.kernels import LU_DONE, LU_REPIVOT, LU_SINGULAR, lu_solve_csc, sparse_lu_refactor
from multibody.model import load_model
from multibody.solvers import compiled_loop
from multibody.solvers.compiled_loop import CompiledLoop
from multibody.solvers.generalized_alpha import Integrator, solve_dynamic
from multibody.solvers.linear import sparse_analysis

from .conftest import CASES, EXAMPLES, load_json
from .test_motion_laws import sliders
from .test_motions import driven_block

MODELS = {
    "mini": EXAMPLES / "mini",
    "chain_1": EXAMPLES / "chain_1",
    "chain_10": EXAMPLES / "chain_10",
    "slider_crank": CASES / "slider_crank",
    "slider_crank_tight": CASES / "slider_crank_tight",
    "pendulum_revolute": CASES / "pendulum_revolute",
    "prismatic_on_rotating_body": CASES / "prismatic_on_rotating_body",
    "spherical_and_generic_tight": CASES / "spherical_and_generic_tight",
    "inactive_joint_free_fall": CASES / "inactive_joint_free_fall",
    "mass_point_spring": CASES / "mass_point_spring",  # mass points, Cartesian springs
    "coordinate_items": CASES / "coordinate_items",  # coordinate springs, constraints and loads
    "revolute_prismatic_testmodel": CASES / "revolute_prismatic_testmodel",  # body-fixed loads
    "motion_sine": EXAMPLES / "motion_sine",  # a position-level motion
}


def model(name: str) -> dict:
    return model_at(MODELS[name])


def model_at(folder) -> dict:
    return load_json(folder / "model.json")


def solve_both(doc: dict):
    loaded = load_model(doc)
    calls, solve = [], CompiledLoop.solve

    def spy(self, *args, **kwargs):
        calls.append(1)
        return solve(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CompiledLoop, "solve", spy)
        compiled = solve_dynamic(loaded, compiled=True)
    assert calls == [1]
    return compiled, solve_dynamic(load_model(doc), compiled=False)


def assert_same(compiled, python, rtol=1e-7):
    assert compiled.status == python.status
    assert compiled.error == python.error
    assert compiled.solver["steps"] == python.solver["steps"]
    for key in ("newtonIterations", "jacobians"):  # a residual at the tolerance may go either way
        assert abs(compiled.solver[key] - python.solver[key]) <= 1 + 0.002 * python.solver[key], key
    assert compiled.sensors.keys() == python.sensors.keys()
    for name, series in python.sensors.items():
        got, want = np.asarray(compiled.sensors[name].data), np.asarray(series.data)
        assert got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max())),
                                   err_msg=name)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_loop_matches_the_python_loop(name):
    assert_same(*solve_both(model(name)))


MOTIONS = {  # motions of every level, on prismatic and revolute joints, with laws of t, q and u
    "velocity_of_q": {"motionType": "Custom", "level": "Velocity", "velocity": "0.3*cos(2*t)*(1 + 0.5*q)"},
    "acceleration": {"motionType": "Custom", "level": "Acceleration", "acceleration": "-4*q + 0.1*u + sin(t)"},
    "steady": {"motionType": "Steady", "u": 0.7},
}


@pytest.mark.parametrize("name", sorted(MOTIONS))
def test_motions_match(name):
    assert_same(*solve_both(driven_block(MOTIONS[name], force=1.5, steps=400)))


def test_revolute_and_prismatic_motions_with_index2_constraints_match():
    doc = sliders(2, {"motionType": "Sinusoid", "level": "Position", "amplitude": 0.2, "rate": 3.0})
    doc["objects"][4]["objectType"] = "JointRevoluteZ"
    doc["motions"][1] = {"motionType": "Custom", "level": "Acceleration", "acceleration": "-q - 0.2*u",
                         "joint": "slider1", "name": "drive1"}
    doc["simulationSettings"]["timeIntegration"]["generalizedAlpha"] = {"useIndex2Constraints": True,
                                                                       "useNewmark": True}
    for motion in ("drive0", "drive1"):
        doc.setdefault("sensors", []).extend({"sensorType": "Motion", "motionNumber": motion, "outputVariableType": v}
                                             for v in ("Coordinate", "Coordinate_tt", "Force"))
    assert_same(*solve_both(doc))


def undefined_law(law: str) -> dict:
    doc = sliders(1, {"motionType": "Custom", "level": "Acceleration", "acceleration": law})
    doc["simulationSettings"]["timeIntegration"].update(endTime=2.0, numberOfSteps=200)
    return doc


def test_a_law_undefined_during_the_run_is_reported_alike():
    # a law of q, which validation cannot evaluate: undefined once q = t²/2 > 1
    compiled, python = solve_both(undefined_law("1 + 1e-9*sqrt(1 - q)"))
    assert compiled.error["code"] == "motion_evaluation"
    assert_same(compiled, python)


def test_a_law_undefined_at_the_start_is_reported_by_the_python_path():
    # the rate sqrt(q) is 0 at the start (q = 0), its time derivative u/(2 sqrt(q)) is not
    doc = sliders(1, {"motionType": "Custom", "level": "Velocity", "velocity": "sqrt(q)"})
    calls, initial = [], Integrator.initial_accelerations

    def spy(self, *args):
        calls.append(1)
        return initial(self, *args)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Integrator, "initial_accelerations", spy)
        compiled = solve_dynamic(load_model(doc), compiled=True)
    assert calls == [1] and compiled.error["code"] == "motion_evaluation"
    assert compiled.error == solve_dynamic(load_model(doc), compiled=False).error


@pytest.mark.parametrize("settings", [
    {"generalizedAlpha": {"useIndex2Constraints": True, "useNewmark": True}},
    {"generalizedAlpha": {"spectralRadius": 0.6}},
    {"newton": {"useModifiedNewton": False}},
    {"numberOfSteps": 20, "adaptiveStep": True},  # Newton fails at this step size: halving and recovery
], ids=["index2_newmark", "rho_0.6", "full_newton", "adaptive"])
def test_methods_and_step_control_match(settings):
    doc = model("slider_crank")
    ti = doc.setdefault("simulationSettings", {}).setdefault("timeIntegration", {})
    for key, value in settings.items():
        ti[key] = {**ti.get(key, {}), **value} if isinstance(value, dict) else value
    compiled, python = solve_both(doc)
    assert compiled.status == "succeeded"
    assert_same(compiled, python)


def test_step_halving_is_exercised():
    doc = model("slider_crank")
    doc["simulationSettings"]["timeIntegration"].update(numberOfSteps=20, adaptiveStep=True)
    res = solve_dynamic(load_model(doc))
    assert res.solver["steps"] > 20  # otherwise test_methods_and_step_control_match[adaptive] proves little


def test_newton_failure_is_reported_alike():
    doc = model("mini")
    doc["simulationSettings"]["timeIntegration"].update(
        newton={"relativeTolerance": 0.0, "absoluteTolerance": 0.0, "maxIterations": 2}, minimumStepSize=1e-3)
    compiled, python = solve_both(doc)
    assert compiled.error["code"] == "newton_not_converged"
    assert_same(compiled, python)


def test_singular_matrix_hands_back_for_the_diagnosis():
    doc = model("mini")
    doc["objects"][1]["inertia"] = [0, 0, 0, 0, 0, 0]
    doc["objects"][2]["activeConnector"] = False
    compiled, python = solve_both(doc)
    assert compiled.error["code"] == "singular_matrix" and "node0" in compiled.error["detail"]["items"]
    assert compiled.error == python.error


def test_cancel_stops_a_long_compiled_run():
    doc = copy.deepcopy(model("chain_10"))
    doc["simulationSettings"]["timeIntegration"].update(numberOfSteps=40000, endTime=40.0)
    calls, started = [], time.perf_counter()

    def cancel():
        calls.append(time.perf_counter() - started)
        return len(calls) >= 3

    with pytest.raises(SimulationCanceled):
        solve_dynamic(load_model(doc), cancel=cancel)
    assert len(calls) == 3 and calls[-1] < 5.0  # polled about every 0.2 s, not at the end


@pytest.mark.parametrize("modified", [True, False], ids=["modified_newton", "full_newton"])
def test_large_models_use_the_sparse_lu_and_match_the_python_loop(modified):
    doc = model_at(EXAMPLES / "chain_50")  # 650 unknowns
    doc["simulationSettings"]["timeIntegration"].update(numberOfSteps=40, endTime=0.2,
                                                       newton={"useModifiedNewton": modified})
    loops = []
    with pytest.MonkeyPatch.context() as patch:  # the sparse LU from 1000 (modified Newton) or 500 unknowns on
        patch.setattr(compiled_loop, "DENSE_MAX_UNKNOWNS", 600)
        patch.setattr(CompiledLoop, "setup", lambda self, setup=CompiledLoop.setup: loops.append(self) or setup(self))
        compiled, python = solve_both(doc)
    assert loops and loops[0].fact.sparse[0] == 1 and loops[0].fact.sparse[1] == 1
    assert_same(compiled, python, rtol=1e-9)


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
