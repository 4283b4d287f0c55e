"""ObjectBeamGeometricallyExact2D (issue 13, items/beam_2d.py): a cantilever under a small tip force bends as
Timoshenko's beam in the static solver; a large deflection (static, load steps, both includeReferenceRotations)
and a swinging beam (generalized-α, RK44) give Exudyn 1.13.6's node coordinates and every beam output; the
exact Jacobians agree with finite differences; bad input is refused with its path.

Closed form: linear elements with one-point (reduced) integration carry the shear force exactly and the bending
moment at the element midpoints; the curvature, constant per element, integrates to Timoshenko's tip deflection
FL³/(3EI) + FL/GA less the midpoint rule's FL³/(12 EI N²) (N elements). The force is small (δ/L ≈ 3e-5:
geometric nonlinearity ~ (δ/L)² ≈ 1e-9, 1e-8 allowed) but well above the residual's round-off (EA·1e-16).
"""
from __future__ import annotations

import math

import exudyn as exu
import numpy as np
import pytest
from exudyn.itemInterface import (CoordinateConstraint, Force, MarkerNodeCoordinate, MarkerNodeRigid,
                                  NodePointGround, NodeRigidBody2D, ObjectBeamGeometricallyExact2D, Torque)

import multibody
from mbserve.exudyn import export
from multibody.api import load_model
from multibody.values import ModelInvalid
from tests.multibody.test_planar import with_sensors
from tests.multibody.test_torsional_spring_damper import check_exudyn_sensors

OUTPUTS = ("Position", "Displacement", "Velocity", "Rotation", "StrainLocal", "CurvatureLocal", "ForceLocal",
           "TorqueLocal")
EI, EA, GA = 2.0e3, 1.0e5, 5.0e4


def cantilever(n: int, length: float, force: float, **beam) -> dict:
    """n elements along x, the first node clamped by three CoordinateConstraints, a force -force·e_y at the tip."""
    h = length / n
    nodes = [{"nodeType": "PointGround"}] + [{"nodeType": "RigidBody2D", "referenceCoordinates": [i * h, 0, 0]}
                                             for i in range(n + 1)]
    markers = [{"markerType": "NodeCoordinate", "nodeNumber": 0, "coordinate": 0}] \
        + [{"markerType": "NodeCoordinate", "nodeNumber": 1, "coordinate": c} for c in range(3)] \
        + [{"markerType": "NodeRigid", "nodeNumber": n + 1}]
    return {"nodes": nodes,
            "objects": [{"objectType": "BeamGeometricallyExact2D", "nodeNumbers": [i + 1, i + 2], "length": h,
                         "massPerLength": 1.0, "crossSectionInertia": 1e-3, "bendingStiffness": EI,
                         "axialStiffness": EA, "shearStiffness": GA, **beam} for i in range(n)]
            + [{"objectType": "ConnectorCoordinate", "markerNumbers": [0, c]} for c in (1, 2, 3)],
            "markers": markers,
            "loads": [{"loadType": "ForceVector", "markerNumber": 4, "loadVector": [0, -force, 0]}],
            "sensors": [{"sensorType": "Node", "nodeNumber": n + 1, "outputVariableType": "Displacement",
                         "name": "tip"},
                        {"sensorType": "Body", "bodyNumber": 0, "outputVariableType": "TorqueLocal",
                         "localPosition": [0, 0, 0], "name": "moment"}],
            "solve": {"type": "Static"}}


def test_cantilever_bends_as_timoshenkos_beam():
    n, length, force = 10, 2.0, 0.05
    res = multibody.simulate(cantilever(n, length, force))
    assert res.status == "succeeded", res.error
    tip = res.sensors["tip"].data[-1, 2]
    exact = force * length ** 3 / (3 * EI) * (1 - 1 / (4 * n ** 2)) + force * length / GA
    assert abs(-tip - exact) < 1e-8 * exact
    # the first element's midpoint carries the moment F (L - h/2); EI θ_x < 0: curved downwards
    assert abs(res.sensors["moment"].data[-1, 3] + force * (length - length / n / 2)) < 1e-8 * force * length


def test_jacobians_are_the_derivatives_of_the_forces():
    doc = cantilever(3, 1.0, 0.0, bendingDamping=0.3, axialDamping=5.0, shearDamping=2.0, referenceCurvature=0.4)
    system = load_model(doc).system
    group = next(g for g in system.forces if g.OBJECT_TYPE == "BeamGeometricallyExact2D")
    rng = np.random.default_rng(3)
    q, v = rng.normal(scale=0.2, size=system.n2), rng.normal(size=system.n2)
    dq, dv = group.jacobian_values(system.kinematics(0.0, q, v))
    for x, derivative in ((q, dq), (v, dv)):
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
                assert np.abs(numeric - derivative[k, :, j]).max() < 1e-5 * (1 + np.abs(derivative).max())


def test_bad_input_is_refused_with_its_path():
    doc = cantilever(2, 1.0, 1.0)
    doc["nodes"][2] = {"nodeType": "Point2D", "referenceCoordinates": [0.5, 0]}
    doc["objects"][1]["length"] = 0.0
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problems = {p.path: p.message for p in err.value.problems}
    assert "RigidBody2D" in problems["objects[0].nodeNumbers[1]"]
    assert "must be > 0" in problems["objects[1].length"]
    doc = cantilever(2, 1.0, 1.0)
    doc["objects"][0]["nodeNumbers"] = [1, 1]
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    assert any(p.path == "objects[0].nodeNumbers" and "twice" in p.message for p in err.value.problems)


# ------------------------------------------------------------------------------- against Exudyn
def exudyn_beam(reference_rotations: bool, static: bool):
    """A beam of 6 elements on a 60° arc (chords of length h, the nodes turned by the arc's tangents, the
    referenceCurvature making it stress-free), clamped at its first node; static: a large tip force and torque
    in 10 load steps; dynamic: swinging under a tip force with damping, from initial velocities, for 1 s.
    Sensors: the tip node's coordinates, every beam output of two elements at a point off the axis."""
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddNode(NodePointGround())
    step = math.radians(10)
    h = 2 * math.sin(step / 2)  # the chord of a unit circle's 10° arc
    nodes = [mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[math.sin(k * step), 1 - math.cos(k * step), k * step],
                                         initialVelocities=[0, 0.0 if static else 0.3 * k, 0.0 if static else 0.5]))
             for k in range(7)]
    damping = 0.0 if static else 1.0
    beams = [mbs.AddObject(ObjectBeamGeometricallyExact2D(
        nodeNumbers=nodes[k:k + 2], length=h, massPerLength=2.0, crossSectionInertia=0.01, bendingStiffness=50.0,
        axialStiffness=4e4, shearStiffness=1e4, bendingDamping=0.2 * damping, axialDamping=5.0 * damping,
        shearDamping=damping, referenceCurvature=step / h, includeReferenceRotations=reference_rotations))
        for k in range(6)]
    m0 = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
    for c in range(3):
        mbs.AddObject(CoordinateConstraint(markerNumbers=[m0, mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nodes[0],
                                                                                                  coordinate=c))]))
    tip = mbs.AddMarker(MarkerNodeRigid(nodeNumber=nodes[-1]))
    mbs.AddLoad(Force(markerNumber=tip, loadVector=[30.0, -60.0, 0] if static else [0, -5.0, 0]))
    mbs.AddLoad(Torque(markerNumber=tip, loadVector=[0, 0, 10.0 if static else 0.0]))
    mbs, settings = with_sensors(mbs, nodes=[(nodes[-1], ("Coordinates",))],
                                 bodies=[(beams[1], OUTPUTS), (beams[4], OUTPUTS)], objects=[], markers=[])
    settings.staticSolver.numberOfLoadSteps = 10
    settings.staticSolver.newton.relativeTolerance = 1e-12
    settings.staticSolver.verboseMode = 0
    return mbs, settings


@pytest.mark.parametrize("reference_rotations", [False, True])
def test_large_static_deflection_gives_exudyns_solution(reference_rotations):
    mbs, settings = exudyn_beam(reference_rotations, static=True)
    ours = multibody.simulate(export(mbs, settings, solve={"type": "Static"}))
    assert ours.status == "succeeded", ours.error
    exu.SolveStatic(mbs, settings)
    theirs = [np.asarray(mbs.GetSensorStoredData(i)) for i in range(mbs.systemData.NumberOfSensors())]
    assert abs(theirs[0][-1, 2]) > 0.2  # a large deflection of the tip
    for (name, series), data in zip(ours.sensors.items(), theirs, strict=True):
        assert np.abs(series.data[-1, 1:] - data[-1, 1:]).max() <= 1e-10 * (1.0 + np.abs(data).max()), name


@pytest.mark.parametrize("reference_rotations", [False, True])
def test_swinging_beam_gives_exudyns_sensors(reference_rotations):
    check_exudyn_sensors(*exudyn_beam(reference_rotations, static=False))


def test_explicit_solver_gives_exudyns_sensors():
    mbs, settings = exudyn_beam(True, static=False)
    settings.timeIntegration.numberOfSteps = 10000  # below the stability limit of the shear and axial modes
    settings.timeIntegration.explicit.eliminateConstraints = True
    ours = multibody.simulate(export(mbs, settings, solve={"type": "Dynamic", "solverType": "RK44"}))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings, solverType=exu.DynamicSolverType.RK44)
    theirs = [np.asarray(mbs.GetSensorStoredData(i)) for i in range(mbs.systemData.NumberOfSensors())]
    for (name, series), data in zip(ours.sensors.items(), theirs, strict=True):
        assert np.abs(series.data - data).max() <= 1e-10 * (1.0 + np.abs(data).max()), name
