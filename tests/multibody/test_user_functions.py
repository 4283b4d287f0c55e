"""User functions as expressions (SPEC section 1): loads and spring forces given as expressions
over t and Exudyn's arguments, evaluated in the compiled residual with sympy's derivatives in the
Newton matrix; checked against the plain items, closed forms and Exudyn 1.13.6 running the same
model with Python user functions."""
import copy
import math

import numpy as np
import pytest

import multibody
from multibody.model import load_model
from multibody.solvers import alpha_kernel
from multibody.values import ModelInvalid

M, K, D = 2.0, 50.0, 0.0  # mass, stiffness, damping of the mass-spring models
F0, OMEGA = 3.0, 7.0  # the forcing amplitude and frequency


def mass_point(loads=(), objects=(), end=1.0, steps=400, solver="GeneralizedAlpha", parameters=None,
               rho=None):
    """A mass point at x = 1 on a spring to ground along x (a Cartesian spring fixes y and z)."""
    doc = {
        "nodes": [{"nodeType": "Point", "referenceCoordinates": [1.0, 0, 0]}],
        "objects": [{"objectType": "Ground"}, {"objectType": "MassPoint", "name": "mass", "nodeNumber": 0, "mass": M},
                    {"objectType": "ConnectorCartesianSpringDamper", "markerNumbers": [0, 1],
                     "stiffness": [0, 1e3, 1e3], "damping": [0, 1, 1]}, *objects],
        "markers": [{"markerType": "BodyPosition", "bodyNumber": 0},
                    {"markerType": "BodyPosition", "bodyNumber": 1},
                    {"markerType": "NodeCoordinate", "nodeNumber": 0, "coordinate": 0}],
        "loads": list(loads),
        "sensors": [{"sensorType": "Node", "name": "x", "nodeNumber": 0, "outputVariableType": "Displacement"},
                    {"sensorType": "Node", "name": "v", "nodeNumber": 0, "outputVariableType": "Velocity"}],
        "simulationSettings": {"timeIntegration": {"endTime": end, "numberOfSteps": steps}},
        "solve": {"type": "Dynamic", "solverType": solver},
    }
    if rho is not None:
        doc["simulationSettings"]["timeIntegration"]["generalizedAlpha"] = {"spectralRadius": rho}
    if parameters is not None:
        doc["parameters"] = parameters
    return doc


def spring(**extra):
    return {"objectType": "ConnectorSpringDamper", "name": "spring", "markerNumbers": [0, 1], "referenceLength": 0.8,
            "stiffness": K, "damping": D, **extra}


def column(results, sensor, k=0):
    return results.sensors[sensor].data[:, 1 + k]


def test_a_spring_force_expression_equal_to_the_linear_spring_gives_its_results():
    plain = multibody.simulate(mass_point(objects=[spring(damping=0.4, force=1.5)]))
    expr = multibody.simulate(mass_point(objects=[spring(
        damping=0.4, force=1.5, springForceUserFunction="stiffness*deltaL + damping*deltaL_t + force")]))
    assert plain.status == expr.status == "succeeded"
    for name in ("x", "v"):
        assert np.abs(plain.sensors[name].data - expr.sensors[name].data).max() <= 1e-13
    # the Newton matrix carries sympy's derivatives: the same iterations and Jacobians
    assert expr.solver["newtonIterations"] == plain.solver["newtonIterations"]
    assert expr.solver["jacobians"] == plain.solver["jacobians"]


def test_a_nonlinear_spring_uses_its_derivatives_in_newton():
    """f = k·deltaL + c·deltaL³, which no plain item gives: full Newton converges in about two
    iterations per step (exact derivatives), and the result agrees with a 16 times finer step."""
    uf = "stiffness*deltaL + 400*deltaL**3"
    coarse = mass_point(objects=[spring(springForceUserFunction=uf)], steps=200)
    coarse["simulationSettings"]["timeIntegration"]["newton"] = {"useModifiedNewton": False}
    res = multibody.simulate(coarse)
    assert res.status == "succeeded"
    assert res.solver["newtonIterations"] <= 3 * 200  # quadratic convergence: ~2 per step
    fine = multibody.simulate(mass_point(objects=[spring(springForceUserFunction=uf)], steps=3200))
    assert abs(column(res, "x")[-1] - column(fine, "x")[-1]) < 1e-3


def forced_response(t, x0):
    """x(t) of m ẍ + k x = F0 sin(ωt) from x(0) = x0, ẋ(0) = 0 (undamped)."""
    wn = math.sqrt(K / M)
    a = F0 / (M * (wn ** 2 - OMEGA ** 2))
    return x0 * np.cos(wn * t) + a * (np.sin(OMEGA * t) - OMEGA / wn * np.sin(wn * t))


def forced(solver="GeneralizedAlpha", steps=2000, **kw):
    load = {"loadType": "ForceVector", "name": "drive", "markerNumber": 1, "loadVector": [F0, 0, 0],
            "loadVectorUserFunction": ["loadVector[0]*sin(omega*t)", "0", "0"]}
    return mass_point(loads=[load], objects=[spring(referenceLength=1.0)], steps=steps, solver=solver,
                      parameters={"omega": OMEGA}, **kw)


@pytest.mark.parametrize("solver, steps, tol", [("GeneralizedAlpha", 4000, 2e-5), ("RK44", 1000, 1e-8),
                                                ("DOPRI5", 200, 1e-5)])
def test_a_time_dependent_load_gives_the_forced_response(solver, steps, tol):
    res = multibody.simulate(forced(solver, steps, rho=1.0 if solver == "GeneralizedAlpha" else None))
    assert res.status == "succeeded", res.error
    t = res.sensors["x"].data[:, 0]
    assert np.abs(column(res, "x") - forced_response(t, 0.0)).max() < tol


def test_the_compiled_loop_runs_user_functions(monkeypatch):
    """The model stays in alpha_kernel.run_steps: no hand-back to the Python step loop."""
    calls = []
    original = alpha_kernel.run_steps
    monkeypatch.setattr(alpha_kernel, "run_steps", lambda *a: calls.append(original(*a)) or calls[-1])
    assert multibody.simulate(forced()).status == "succeeded"
    assert calls and set(calls) <= {alpha_kernel.DONE, alpha_kernel.PAUSED}


def test_a_load_sensor_gives_the_user_functions_value():
    doc = forced(steps=100)
    doc["sensors"].append({"sensorType": "Load", "name": "F", "loadNumber": "drive"})
    res = multibody.simulate(doc)
    data = res.sensors["F"].data
    assert np.allclose(data[:, 1], F0 * np.sin(OMEGA * data[:, 0]), atol=1e-14) and not data[:, 2:].any()


def test_parameters_are_substituted_in_every_expression():
    doc = forced(steps=100)
    literal = copy.deepcopy(doc)
    literal["loads"][0]["loadVectorUserFunction"][0] = f"loadVector[0]*sin({OMEGA}*t)"
    del literal["parameters"]
    a, b = multibody.simulate(doc), multibody.simulate(literal)
    assert np.array_equal(a.sensors["x"].data, b.sensors["x"].data)
    doc["parameters"]["omega"] = 2 * OMEGA  # as a sweep varies parameters.omega
    assert not np.allclose(multibody.simulate(doc).sensors["x"].data, a.sensors["x"].data)


def test_a_coordinate_load_and_coordinate_spring_as_expressions():
    objects = [{"objectType": "ConnectorCoordinateSpringDamper", "markerNumbers": [3, 2], "stiffness": K,
                "springForceUserFunction": "stiffness*(displacement - offset) + damping*velocity"}]
    doc = mass_point(objects=objects, steps=200)
    doc["markers"].append({"markerType": "NodeCoordinate", "nodeNumber": 1, "coordinate": 0})
    doc["nodes"].append({"nodeType": "PointGround"})
    doc["loads"] = [{"loadType": "Coordinate", "markerNumber": 2, "load": F0, "loadUserFunction": "load*t"}]
    plain = copy.deepcopy(doc)
    del plain["objects"][3]["springForceUserFunction"]
    ramp = copy.deepcopy(plain)
    ramp["loads"][0].pop("loadUserFunction")
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    assert abs(column(res, "x")[-1]) > 1e-3
    # the same coordinate spring, plain: only the load's user function differs from `plain`
    assert np.abs(res.sensors["x"].data - multibody.simulate(plain).sensors["x"].data).max() <= 1e-13


def test_a_cartesian_spring_as_expressions_equals_the_plain_one():
    objects = [{"objectType": "ConnectorCartesianSpringDamper", "markerNumbers": [0, 1], "stiffness": [K, 10, 20],
                "damping": [0.3, 0, 0], "offset": [0.9, 0, 0]}]
    plain = mass_point(objects=objects, steps=200)
    plain["nodes"][0]["initialVelocities"] = [0, 0.5, -0.2]
    expr = copy.deepcopy(plain)
    expr["objects"][3]["springForceUserFunction"] = [
        f"stiffness[{i}]*(displacement[{i}] - offset[{i}]) + damping[{i}]*velocity[{i}]" for i in range(3)]
    a, b = multibody.simulate(plain), multibody.simulate(expr)
    assert a.status == b.status == "succeeded"
    assert np.abs(a.sensors["x"].data - b.sensors["x"].data).max() <= 1e-13
    assert a.solver["newtonIterations"] == b.solver["newtonIterations"]


def test_the_static_solver_evaluates_user_functions_at_its_load_steps():
    """Exudyn: a user-function load is not scaled by the load factor; t runs over the load steps."""
    doc = forced(steps=10)
    doc["loads"][0]["loadVectorUserFunction"] = ["loadVector[0]*t", "0", "0"]
    doc["solve"] = {"type": "Static"}
    doc["simulationSettings"]["staticSolver"] = {"numberOfLoadSteps": 4}
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    t, x = res.sensors["x"].data[:, 0], column(res, "x")
    assert np.allclose(x[t > 0], F0 * t[t > 0] / K, atol=1e-12)


@pytest.mark.parametrize("change, path, words", [
    ({"loadVectorUserFunction": ["sin(", "0", "0"]}, "loads[0].loadVectorUserFunction[0]", "syntax error"),
    ({"loadVectorUserFunction": ["deltaL", "0", "0"]}, "loads[0].loadVectorUserFunction[0]", "unknown name 'deltaL'"),
    ({"loadVectorUserFunction": ["omega2*t", "0", "0"]}, "loads[0].loadVectorUserFunction[0]", "allowed names: t, loadVector"),
    ({"loadVectorUserFunction": ["t", "0"]}, "loads[0].loadVectorUserFunction", "3"),
    ({"loadVectorUserFunction": "t"}, "loads[0].loadVectorUserFunction", "list of 3"),
    ({"loadVectorUserFunction": ["loadVector[3]", "0", "0"]}, "loads[0].loadVectorUserFunction[0]", "below 3"),
    ({"loadVectorUserFunction": ["log(0.5 - t)", "0", "0"]}, "loads[0].loadVectorUserFunction[0]", "t = 0.5"),
    ({"loadVectorUserFunction": ["__import__('os')", "0", "0"]}, "loads[0].loadVectorUserFunction[0]", "unknown function"),
])
def test_bad_user_functions_are_problems_naming_the_item_and_path(change, path, words):
    doc = forced(steps=10)
    doc["loads"][0].update(change)
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    hits = [p for p in err.value.problems if p.path == path]
    assert hits, [(p.path, p.message) for p in err.value.problems]
    assert words in hits[0].message and hits[0].item == "drive"


def test_bad_parameters_are_problems():
    for name in ("sin", "t", "2x", "for"):
        doc = forced(steps=10)
        doc["parameters"] = {name: 1.0}
        with pytest.raises(ModelInvalid) as err:
            load_model(doc)
        assert any(p.path.startswith("parameters") for p in err.value.problems), name


def test_parameters_reach_motion_laws():
    from multibody.motion_laws import build_motion_law
    from multibody.motions import MOTION_ADAPTER
    spec = MOTION_ADAPTER.validate_python({"motionType": "Custom", "joint": 0, "level": "Position",
                                           "position": "amp*sin(t)"})
    law = build_motion_law(spec, "motions[0]", "m", parameters={"amp": 0.25})
    assert law.programs(0, np.array([1.0, 0, 0])) == pytest.approx(0.25 * math.sin(1.0))


def exudyn_run(doc: dict, functions: dict):
    """The document's model built in Exudyn 1.13.6 from the same item dictionaries, with the Python
    user functions `functions` ((list, index, parameter) -> function) in place of the expressions;
    the stored sensor data by sensor name."""
    exu = pytest.importorskip("exudyn")
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    for kind, add in (("nodes", "AddNode"), ("objects", "AddObject"), ("markers", "AddMarker"), ("loads", "AddLoad")):
        for i, item in enumerate(doc[kind]):
            item = {k: functions.get((kind, i, k), v) for k, v in item.items()}
            getattr(mbs, add)(item)
    for item in doc["sensors"]:
        mbs.AddSensor({**item, "storeInternal": True, "writeToFile": False,
                       "outputVariableType": getattr(exu.OutputVariableType, item["outputVariableType"])})
    mbs.Assemble()
    settings = exu.SimulationSettings()
    ti = doc["simulationSettings"]["timeIntegration"]
    settings.timeIntegration.endTime, settings.timeIntegration.numberOfSteps = ti["endTime"], ti["numberOfSteps"]
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False  # tests own their data: no file in the working directory
    exu.SolveDynamic(mbs, settings)
    return {s["name"]: np.asarray(mbs.GetSensorStoredData(i)) for i, s in enumerate(doc["sensors"])}


def test_a_load_user_function_gives_exudyns_results():
    doc = forced(steps=500)
    ours = multibody.simulate(doc)
    theirs = exudyn_run(doc, {("loads", 0, "loadVectorUserFunction"):
                              lambda mbs, t, loadVector: [loadVector[0] * math.sin(OMEGA * t), 0, 0]})
    for name in ("x", "v"):
        assert theirs[name].shape == ours.sensors[name].data.shape
        assert np.abs(ours.sensors[name].data - theirs[name]).max() <= 1e-10, name


def test_a_nonlinear_spring_user_function_gives_exudyns_results():
    """Exudyn differentiates a user-function spring numerically, we symbolically: the same
    solution to Newton's tolerance."""
    doc = mass_point(objects=[spring(damping=0.5, springForceUserFunction="stiffness*deltaL + 400*deltaL**3 "
                                                                            "+ damping*deltaL_t")], steps=500)
    ours = multibody.simulate(doc)
    theirs = exudyn_run(doc, {("objects", 3, "springForceUserFunction"):
                              lambda mbs, t, i, dL, dL_t, k, d, f: k * dL + 400 * dL ** 3 + d * dL_t})
    for name in ("x", "v"):
        assert np.abs(ours.sensors[name].data - theirs[name]).max() <= 1e-8, name
