"""ObjectConnectorGravity: a satellite on a circular orbit (closed form: radius, period), the regularized force
law, outputs, and Exudyn's sensors on a two-satellite system in RK67 and the generalized-α solver."""
from __future__ import annotations

import math

import numpy as np
import pytest

import multibody
from multibody.values import ModelInvalid

G, M, R = 1.0, 1000.0, 10.0  # a star fixed at the origin (ground), a satellite on an orbit of radius R
V = math.sqrt(G * M / R)
PERIOD = 2 * math.pi * R / V


def orbit(solver: str, steps: int, periods: float = 1.0, r_min: float = 0.0) -> dict:
    return {
        "nodes": [{"nodeType": "Point", "referenceCoordinates": [R, 0, 0], "initialVelocities": [0, V, 0]}],
        "objects": [{"objectType": "Ground"}, {"objectType": "MassPoint", "nodeNumber": 0, "mass": 2.0},
                    {"objectType": "ConnectorGravity", "markerNumbers": [0, 1], "gravitationalConstant": G,
                     "mass0": M, "mass1": 2.0, "minDistanceRegularization": r_min, "name": "pull"}],
        "markers": [{"markerType": "BodyPosition", "bodyNumber": 0}, {"markerType": "NodePosition", "nodeNumber": 0}],
        "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position", "name": "position"},
                    {"sensorType": "Object", "objectNumber": 2, "outputVariableType": "Force", "name": "force"},
                    {"sensorType": "Object", "objectNumber": 2, "outputVariableType": "Distance", "name": "distance"}],
        "simulationSettings": {"timeIntegration": {"endTime": periods * PERIOD, "numberOfSteps": steps,
                                                   "generalizedAlpha": {"spectralRadius": 1.0}}},
        "solve": {"type": "Dynamic", "solverType": solver},
    }


@pytest.mark.parametrize("solver,steps,tolerance", [("RK67", 200, 1e-9), ("RK44", 400, 1e-5),
                                                    ("GeneralizedAlpha", 4000, 1e-3)])
def test_satellite_returns_after_one_period_on_its_circle(solver, steps, tolerance):
    res = multibody.simulate(orbit(solver, steps))
    assert res.status == "succeeded", res.error
    xyz = res.sensors["position"].data[:, 1:]
    assert np.abs(np.linalg.norm(xyz, axis=1) - R).max() <= tolerance * R
    assert np.abs(xyz[-1] - [R, 0, 0]).max() <= 10 * tolerance * R
    # the force on the satellite, G M m / R² toward the star (marker 0): Force is f e, e from marker 0 to marker 1
    force, distance = res.sensors["force"].data[:, 1:], res.sensors["distance"].data[:, 1]
    assert np.allclose(force, G * M * 2.0 / distance[:, None] ** 3 * xyz, rtol=1e-12)


def test_regularization_keeps_the_force_finite_where_the_markers_meet():
    """Below r the force is G m0 m1 L / (L² + (L - r)²) · e: zero at contact, and as Exudyn's law at L = r."""
    doc = orbit("RK44", 10, r_min=20.0)  # the satellite starts inside r
    doc["simulationSettings"]["timeIntegration"]["endTime"] = 1e-3
    res = multibody.simulate(doc)
    L = res.sensors["distance"].data[0, 1]
    f = np.linalg.norm(res.sensors["force"].data[0, 1:])
    assert L == pytest.approx(R)
    assert f == pytest.approx(G * M * 2.0 / (L * L + (L - 20.0) ** 2), rel=1e-14)


def test_negative_masses_are_refused_with_their_path():
    doc = orbit("RK67", 10)
    doc["objects"][2]["mass1"] = -1.0
    with pytest.raises(ModelInvalid) as exc:
        multibody.simulate(doc)
    assert any(p.path == "objects[2].mass1" for p in exc.value.problems), exc.value.problems


exu = pytest.importorskip("exudyn")


def exudyn_two_satellites():
    """Two satellites on elliptic orbits about a movable star, attracting each other too."""
    from exudyn.itemInterface import MarkerNodePosition, MassPoint, NodePoint, ObjectConnectorGravity, SensorNode
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    bodies = [(M, [0, 0, 0], [0, 0, 0]), (2.0, [R, 0, 0], [0, 0.9 * V, 0.1]), (3.0, [0, -2 * R, 1], [1.1 * V, 0, 0])]
    markers = []
    for mass, position, velocity in bodies:
        node = mbs.AddNode(NodePoint(referenceCoordinates=position, initialVelocities=velocity))
        mbs.AddObject(MassPoint(nodeNumber=node, mass=mass))
        markers.append(mbs.AddMarker(MarkerNodePosition(nodeNumber=node)))
        mbs.AddSensor(SensorNode(nodeNumber=node, storeInternal=True, outputVariableType=exu.OutputVariableType.Position))
    for i, j in ((0, 1), (0, 2), (1, 2)):
        mbs.AddObject(ObjectConnectorGravity(markerNumbers=[markers[i], markers[j]], gravitationalConstant=G,
                                             mass0=bodies[i][0], mass1=bodies[j][0], minDistanceRegularization=0.5))
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.endTime = 0.5 * PERIOD
    settings.timeIntegration.numberOfSteps = 500
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    settings.solution.sensors.writePeriod = settings.timeIntegration.endTime / 50
    return mbs, settings


@pytest.mark.parametrize("solver", ["RK67", "GeneralizedAlpha"])
def test_three_bodies_give_exudyns_sensors(solver):
    from mbserve.exudyn import export
    mbs, settings = exudyn_two_satellites()
    ours = multibody.simulate(export(mbs, settings, solve={"type": "Dynamic", "solverType": solver}))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings, solverType=getattr(exu.DynamicSolverType, solver))
    for i, series in enumerate(ours.sensors.values()):
        theirs = np.asarray(mbs.GetSensorStoredData(i))
        assert series.data.shape == theirs.shape
        # explicit: the same arithmetic; implicit: Newton's tolerance on the same steps
        tolerance = 1e-12 if solver == "RK67" else 1e-8
        assert np.abs(series.data - theirs).max() <= tolerance * np.abs(theirs).max()
