"""ObjectANCFCable2D on NodePoint2DSlope1 (issue 13, items/ancf_cable_2d.py): a cantilever under a small tip
force bends as Euler-Bernoulli's beam in the static solver; a swinging, pre-curved, damped cable gives Exudyn
1.13.6's node coordinates and every cable output with each integration rule; the exact (complex-step) Jacobians
agree with finite differences; bad input is refused with its path.

Closed form: cubic Hermite elements hold the cantilever's cubic deflection curve exactly, so the tip deflects
FL³/(3EI) up to geometric nonlinearity, ~(δ/L)² ≈ 1e-9 for this force; the bending moment at the clamp is -F L.
"""
from __future__ import annotations

import exudyn as exu
import numpy as np
import pytest
from exudyn.itemInterface import (CoordinateConstraint, Force, MarkerNodeCoordinate, MarkerNodePosition,
                                  NodePoint2DSlope1, NodePointGround, ObjectANCFCable2D)

import multibody
from mbserve.exudyn import export
from multibody.api import load_model
from multibody.values import ModelInvalid
from tests.multibody.test_planar import with_sensors
from tests.multibody.test_torsional_spring_damper import check_exudyn_sensors

OUTPUTS = ("Position", "Displacement", "Velocity", "Rotation", "Director1", "StrainLocal", "CurvatureLocal",
           "ForceLocal", "TorqueLocal", "AngularVelocity")
EI, EA = 2.0e3, 1.0e5


def cantilever(n: int, length: float, force: float, **cable) -> dict:
    """n elements along x, the first node's position and slope y clamped by CoordinateConstraints, a force
    -force·e_y at the tip."""
    h = length / n
    nodes = [{"nodeType": "PointGround"}] + [{"nodeType": "Point2DSlope1", "referenceCoordinates": [i * h, 0, 1, 0]}
                                             for i in range(n + 1)]
    markers = [{"markerType": "NodeCoordinate", "nodeNumber": 0, "coordinate": 0}] \
        + [{"markerType": "NodeCoordinate", "nodeNumber": 1, "coordinate": c} for c in (0, 1, 3)] \
        + [{"markerType": "NodePosition", "nodeNumber": n + 1}]
    return {"nodes": nodes,
            "objects": [{"objectType": "ANCFCable2D", "nodeNumbers": [i + 1, i + 2], "length": h,
                         "massPerLength": 1.0, "bendingStiffness": EI, "axialStiffness": EA, **cable}
                        for i in range(n)]
            + [{"objectType": "ConnectorCoordinate", "markerNumbers": [0, c]} for c in (1, 2, 3)],
            "markers": markers,
            "loads": [{"loadType": "ForceVector", "markerNumber": 4, "loadVector": [0, -force, 0]}],
            "sensors": [{"sensorType": "Node", "nodeNumber": n + 1, "outputVariableType": "Displacement",
                         "name": "tip"},
                        {"sensorType": "Body", "bodyNumber": 0, "outputVariableType": "TorqueLocal",
                         "localPosition": [0, 0, 0], "name": "moment"}],
            "solve": {"type": "Static"}}


def test_cantilever_bends_as_euler_bernoullis_beam():
    length, force = 2.0, 0.05
    res = multibody.simulate(cantilever(8, length, force))
    assert res.status == "succeeded", res.error
    tip = res.sensors["tip"].data[-1, 2]
    exact = force * length ** 3 / (3 * EI)
    assert abs(-tip - exact) < 1e-7 * exact
    assert abs(res.sensors["moment"].data[-1, 1] + force * length) < 1e-8 * force * length


def test_jacobians_are_the_derivatives_of_the_forces():
    doc = cantilever(2, 1.0, 0.0, bendingDamping=0.3, axialDamping=5.0, referenceCurvature=0.4,
                     referenceAxialStrain=0.01)
    system = load_model(doc).system
    group = next(g for g in system.forces if g.OBJECT_TYPE == "ANCFCable2D")
    rng = np.random.default_rng(3)
    q, v = rng.normal(scale=0.1, size=system.n2), rng.normal(size=system.n2)
    dq, dv = group.jacobian_values(system.kinematics(0.0, q, v))
    for x, derivative in ((q, dq), (v, dv)):
        assert np.abs(derivative).max() > 1.0
        for k, cols in enumerate(group.cols):
            for j, col in enumerate(cols):
                eps = 1e-6
                plus, minus = x.copy(), x.copy()
                plus[col] += eps
                minus[col] -= eps
                state = (lambda y: (y, v)) if x is q else (lambda y: (q, y))
                F = np.zeros((2,) + group.cols.shape)  # per element: the system's sums mix neighbours
                for f, y in zip(F, (plus, minus)):
                    group.KERNELS.evaluate(group.data, system.kinematics(0.0, *state(y)).arrays(), f)
                numeric = (F[0, k] - F[1, k]) / (2 * eps)
                assert np.abs(numeric - derivative[k, :, j]).max() < 1e-6 * np.abs(derivative).max()


def test_bad_input_is_refused_with_its_path():
    doc = cantilever(2, 1.0, 1.0)
    doc["nodes"][2] = {"nodeType": "Point2D", "referenceCoordinates": [0.5, 0]}
    doc["objects"][1]["length"] = 0.0
    doc["objects"][1]["useReducedOrderIntegration"] = 3
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problems = {p.path: p.message for p in err.value.problems}
    assert "Point2DSlope1" in problems["objects[0].nodeNumbers[1]"]
    assert "must be > 0" in problems["objects[1].length"]
    assert "objects[1].useReducedOrderIntegration" in problems


# ------------------------------------------------------------------------------- against Exudyn
def exudyn_cable(rule: int, static: bool):
    """Four elements on a pre-curved arc (stress-free by strainIsRelativeToReference, plus a pre-strain and a
    pre-curvature), the first node pinned (static: clamped), under a tip force; dynamic: swinging from initial
    velocities with axial and bending damping."""
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddNode(NodePointGround())
    n, h, bend = 4, 0.5, 0.3
    angles = [bend * k * h for k in range(n + 1)]
    positions = np.cumsum([[0.0, 0.0]] + [[h * np.cos(a + bend * h / 2), h * np.sin(a + bend * h / 2)]
                                          for a in angles[:-1]], axis=0)
    nodes = [mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[*p, np.cos(a), np.sin(a)],
                                           initialVelocities=[0, 0 if static else 0.2 * k, 0, 0 if static else 0.1]))
             for k, (p, a) in enumerate(zip(positions, angles))]
    cables = [mbs.AddObject(ObjectANCFCable2D(
        nodeNumbers=nodes[k:k + 2], length=h, massPerLength=2.0, bendingStiffness=5.0,
        axialStiffness=1e3, bendingDamping=0 if static else 0.05,
        axialDamping=0 if static else 2.0,
        referenceAxialStrain=0.001, referenceCurvature=0.1, strainIsRelativeToReference=1.0,
        useReducedOrderIntegration=rule)) for k in range(n)]
    m0 = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
    for c in range(3 if static else 2):
        mbs.AddObject(CoordinateConstraint(markerNumbers=[m0, mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[0],
                                                                                                  coordinate=c))]))
    tip = mbs.AddMarker(MarkerNodePosition(nodeNumber=nodes[-1]))
    mbs.AddLoad(Force(markerNumber=tip, loadVector=[0, -30.0 if static else -3.0, 0]))
    mbs, settings = with_sensors(mbs, nodes=[(nodes[-1], ("Position", "Velocity", "Coordinates"))],
                                 bodies=[(cables[1], OUTPUTS), (cables[3], OUTPUTS)], objects=[], markers=[])
    settings.staticSolver.numberOfLoadSteps = 10
    settings.staticSolver.newton.relativeTolerance = 1e-12
    settings.staticSolver.verboseMode = 0
    return mbs, settings


@pytest.mark.parametrize("rule", [0, 1, 2])
def test_large_static_deflection_gives_exudyns_solution(rule):
    mbs, settings = exudyn_cable(rule, static=True)
    ours = multibody.simulate(export(mbs, settings, solve={"type": "Static"}))
    assert ours.status == "succeeded", ours.error
    exu.SolveStatic(mbs, settings)
    theirs = [np.asarray(mbs.GetSensorStoredData(i)) for i in range(mbs.systemData.NumberOfSensors())]
    assert abs(theirs[0][-1, 2] - mbs.GetNodeParameter(4, "referenceCoordinates")[1]) > 0.3  # a large deflection
    for (name, series), data in zip(ours.sensors.items(), theirs, strict=True):
        assert np.abs(series.data[-1, 1:] - data[-1, 1:]).max() <= 1e-10 * (1.0 + np.abs(data).max()), name


@pytest.mark.parametrize("rule", [0, 1, 2])
def test_swinging_cable_gives_exudyns_sensors(rule):
    mbs, settings = exudyn_cable(rule, static=False)
    theirs = check_exudyn_sensors(mbs, settings)
    assert np.abs(theirs[1][:, 2]).max() > 0.5  # the tip swings
