"""ObjectConnectorDistance (issue 13; multibody/items/connector_distance.py): a rod pendulum against
its closed forms in the dynamic and the static solver, a spatial mechanism against Exudyn 1.13.6
(every output variable, and Newton's work), and its bad input.

The pendulum: a mass point m held at L from a ground point under gravity. For a small amplitude φ0
its period is 2π √(L/g) (the finite-amplitude correction φ0²/16 is 6e-6 here, 2e-4 allowed as in
test_planar.py); hanging at rest the rod carries the weight, λ = m g (M a - f + C_qᵀλ = 0 with
C_q = eᵀ = [0, -1, 0] on the point).
"""
from __future__ import annotations

import math

import exudyn as exu
import numpy as np
import pytest

import multibody
from multibody.model import load_model
from multibody.solvers.generalized_alpha import solve_dynamic
from multibody.values import ModelInvalid
from tests.multibody import test_planar
from tests.multibody.test_planar import assert_exudyns_sensors, with_sensors

G, L, MASS = 9.81, 0.8, 0.5
SPRING = 30.0  # N/m, the static tests' Cartesian spring in x and z


def pendulum(phi0: float, steps: int, end: float, solve: dict | None = None) -> dict:
    """The rod pendulum, turned by phi0 about z from hanging straight down."""
    doc = {
        "nodes": [{"nodeType": "Point", "referenceCoordinates": [L * math.sin(phi0), -L * math.cos(phi0), 0.0]}],
        "objects": [{"objectType": "Ground"}, {"objectType": "MassPoint", "nodeNumber": 0, "mass": MASS},
                    {"objectType": "ConnectorDistance", "name": "rod", "markerNumbers": [0, 1], "distance": L}],
        "markers": [{"markerType": "BodyPosition", "bodyNumber": 0}, {"markerType": "NodePosition", "nodeNumber": 0},
                    {"markerType": "BodyMass", "bodyNumber": 1}],
        "loads": [{"loadType": "MassProportional", "markerNumber": 2, "loadVector": [0.0, -G, 0.0]}],
        "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position", "name": "p"},
                    {"sensorType": "Object", "objectNumber": 2, "outputVariableType": "Force", "name": "force"},
                    {"sensorType": "Object", "objectNumber": 2, "outputVariableType": "Distance", "name": "distance"}],
        "simulationSettings": {"timeIntegration": {"endTime": end, "numberOfSteps": steps}},
    }
    if solve:
        doc["solve"] = solve
    return doc


def test_rod_pendulum_swings_with_its_small_amplitude_period_and_keeps_its_length():
    period = 2 * math.pi * math.sqrt(L / G)
    res = multibody.simulate(pendulum(0.01, 5000, 2.5 * period))
    assert res.status == "succeeded", res.error
    t, x, y, z = res.sensors["p"].data.T
    phi = np.arctan2(x, -y)
    k = np.nonzero((phi[:-1] > 0) & (phi[1:] <= 0))[0]  # downward zero crossings, a period apart
    crossings = t[k] + (t[k + 1] - t[k]) * phi[k] / (phi[k] - phi[k + 1])
    assert len(crossings) >= 2
    assert abs(crossings[1] - crossings[0] - period) < 2e-4 * period
    assert abs(phi.max() - 0.01) < 1e-4
    assert np.abs(res.sensors["distance"].data[:, 1] - L).max() < 1e-10  # index 3: the position level holds
    assert not z.any()


def test_hanging_rod_carries_the_weight():
    res = solve_dynamic(load_model(pendulum(0.0, 10, 0.1)))
    assert np.abs(res.sensors["force"].data[:, 1] - MASS * G).max() < 1e-9 * MASS * G
    assert np.abs(res.sensors["p"].data[:, 1:] - [0.0, -L, 0.0]).max() < 1e-12


def exudyn_static_rod(side: float, phi0: float):
    """The rod pendulum turned by phi0, in Exudyn, with a side load and a Cartesian spring in x and z
    to the hanging position (without it the static Jacobian is singular, in Exudyn too: the rod's
    ∂(C_qᵀλ)/∂q is left out of it)."""
    from exudyn.itemInterface import (LoadForceVector, LoadMassProportional, MarkerBodyMass, MarkerBodyPosition,
                                      MarkerNodePosition, NodePoint, ObjectConnectorCartesianSpringDamper,
                                      ObjectConnectorDistance, ObjectGround, ObjectMassPoint)
    mbs = exu.SystemContainer().AddSystem()
    ground = mbs.AddObject(ObjectGround())
    node = mbs.AddNode(NodePoint(referenceCoordinates=[L * math.sin(phi0), -L * math.cos(phi0), 0.0]))
    point = mbs.AddObject(ObjectMassPoint(nodeNumber=node, mass=MASS))
    at_point = mbs.AddMarker(MarkerNodePosition(nodeNumber=node))
    rod = mbs.AddObject(ObjectConnectorDistance(markerNumbers=[
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground)), at_point], distance=L))
    mbs.AddObject(ObjectConnectorCartesianSpringDamper(markerNumbers=[
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[0, -L, 0])), at_point],
        stiffness=[SPRING, 0, SPRING]))
    mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=point)),
                                     loadVector=[0, -G, 0]))
    mbs.AddLoad(LoadForceVector(markerNumber=at_point, loadVector=[side, 0, 0]))
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.staticSolver.newton.relativeTolerance = 1e-12
    settings.solution.file.write = False
    return mbs, settings, node, rod


@pytest.mark.parametrize("side", [0.0, 2.0])
def test_static_rod_balances_its_load_as_exudyn(side):
    """Without a side load the point comes back to hanging, the rod carrying m g; with one it leans
    until F = x (k + m g/|y|) on the circle x² + y² = L² (the spring k pulls x back, the rod's tension
    T = m g L/|y| has the horizontal part T x/L), as Exudyn's static solver finds it. The static
    solver's multiplier has the opposite sign (Exudyn's f + C_qᵀλ = 0)."""
    from mbserve.exudyn import export
    mbs, settings, node, rod = exudyn_static_rod(side, 0.3)
    doc = export(mbs, settings, solve={"type": "Static"})
    doc["sensors"] = [{"sensorType": "Node", "nodeNumber": int(node), "outputVariableType": "Position", "name": "p"},
                      {"sensorType": "Object", "objectNumber": int(rod), "outputVariableType": "Force",
                       "name": "force"}]
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    x, y, z = res.sensors["p"].data[-1, 1:]
    force = res.sensors["force"].data[-1, 1]
    assert math.hypot(x, y) == pytest.approx(L, abs=1e-12) and z == 0.0
    assert x * (SPRING + MASS * G / abs(y)) == pytest.approx(side, abs=1e-9)
    assert force == pytest.approx(-MASS * G * L / abs(y), rel=1e-9)
    mbs.SolveStatic(settings)
    assert np.abs([x, y, z] - mbs.GetNodeOutput(node, exu.OutputVariableType.Position)).max() < 1e-10
    assert force == pytest.approx(mbs.GetObjectOutput(rod, exu.OutputVariableType.Force), rel=1e-9)


def test_explicit_solvers_refuse_the_rod_by_name():
    with pytest.raises(ModelInvalid, match="cannot solve the constraints of rod"):
        load_model(pendulum(0.1, 10, 0.1, solve={"type": "Dynamic", "solverType": "RK44"}))


def test_bad_rods_name_the_item_and_the_path():
    doc = pendulum(0.1, 10, 0.1)
    doc["markers"].append({"markerType": "NodeCoordinate", "nodeNumber": 0, "coordinate": 0})
    doc["objects"] += [
        {"objectType": "ConnectorDistance", "name": "onCoordinate", "markerNumbers": [0, 3], "distance": 1.0},
        {"objectType": "ConnectorDistance", "name": "onMass", "markerNumbers": [2, 0], "distance": 1.0},
        {"objectType": "ConnectorDistance", "name": "zero", "markerNumbers": [0, 1], "distance": 0.0},
        {"objectType": "ConnectorDistance", "name": "negative", "markerNumbers": [0, 1], "distance": -0.5},
        {"objectType": "ConnectorDistance", "name": "unset", "markerNumbers": [0, 1]}]
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problems = {p.path: (p.item, p.message) for p in err.value.problems}
    assert problems == {
        "objects[3].markerNumbers[1]": ("onCoordinate", "refers to markers[3] (marker3), a NodeCoordinate; "
                                                        "expected position markers"),
        "objects[4].markerNumbers[0]": ("onMass", "refers to markers[2] (marker2), a BodyMass; "
                                                  "expected position markers"),
        "objects[5].distance": ("zero", "must be > 0.0, got 0.0"),
        "objects[6].distance": ("negative", "must be > 0.0, got -0.5"),
        "objects[7].distance": ("unset", "missing 'distance'"),
    }


# ------------------------------------------------------------------------------- against Exudyn
ROD = ("Displacement", "Velocity", "Distance", "Force")


def exudyn_rods(rigid_body: bool):
    """A rigid body hanging by a rod at a point off its center of mass and a mass point on a rod from
    the body (without the rigid body: from the ground), a planar body on a rod from the ground, and a
    switched-off rod between the point and the planar body; gravity on all; a sensor for every output
    variable of each rod and the nodes' positions and accelerations. Everything starts at rest (see
    test_planar.exudyn_off_center_model). The markers' reference positions come from Exudyn."""
    from exudyn.itemInterface import (LoadMassProportional, MarkerBodyMass, MarkerBodyPosition, MarkerNodePosition,
                                      NodePoint, NodeRigidBody2D, NodeRigidBodyEP, ObjectConnectorDistance,
                                      ObjectGround, ObjectMassPoint, ObjectRigidBody, ObjectRigidBody2D)
    from exudyn.rigidBodyUtilities import RotationMatrix2EulerParameters, RotationMatrixX, RotationMatrixZ
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    bodies, nodes = [], []
    if rigid_body:
        ep = RotationMatrix2EulerParameters(RotationMatrixZ(0.4) @ RotationMatrixX(-0.3))
        nodes.append(mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[0.3, -0.9, 0.1, *ep])))
        bodies.append(mbs.AddObject(ObjectRigidBody(nodeNumber=nodes[-1], mass=2.0,
                                                    inertia=[0.1, 0.2, 0.15, 0.01, 0.0, 0.02])))
    nodes.append(mbs.AddNode(NodePoint(referenceCoordinates=[0.8, -1.4, 0.3])))
    bodies.append(mbs.AddObject(ObjectMassPoint(nodeNumber=nodes[-1], mass=0.5)))
    nodes.append(mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[1.2, -0.6, 0.4])))
    bodies.append(mbs.AddObject(ObjectRigidBody2D(nodeNumber=nodes[-1], mass=1.5, inertia=0.05)))
    on_ground = lambda x: mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[x, 0.0, 0.0]))  # noqa: E731
    at_point = mbs.AddMarker(MarkerNodePosition(nodeNumber=nodes[-2]))
    at_planar = mbs.AddMarker(MarkerBodyPosition(bodyNumber=bodies[-1], localPosition=[0.1, 0.2, 0.0]))
    pairs = [(on_ground(1.5), at_planar)]
    if rigid_body:
        pairs += [(on_ground(0.1), mbs.AddMarker(MarkerBodyPosition(bodyNumber=bodies[0], localPosition=[0.2, 0.4, -0.1]))),
                  (mbs.AddMarker(MarkerBodyPosition(bodyNumber=bodies[0], localPosition=[-0.1, -0.3, 0.2])), at_point)]
    else:
        pairs.append((on_ground(0.6), at_point))
    mbs.Assemble()  # for the markers' reference positions
    position = lambda m: np.array(mbs.GetMarkerOutput(m, exu.OutputVariableType.Position,  # noqa: E731
                                                      configuration=exu.ConfigurationType.Reference))
    rods = [mbs.AddObject(ObjectConnectorDistance(markerNumbers=[m0, m1],
                                                  distance=float(np.linalg.norm(position(m1) - position(m0)))))
            for m0, m1 in pairs]
    rods.append(mbs.AddObject(ObjectConnectorDistance(markerNumbers=[at_point, at_planar], distance=1.0,
                                                      activeConnector=False)))
    for b in bodies:
        mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=b)),
                                         loadVector=[0, -G, 0]))
    return with_sensors(mbs, nodes=[(n, ("Position", "Acceleration")) for n in nodes],
                        bodies=[], objects=[(r, ROD) for r in rods], markers=[])


# Index 2 (Newmark) leaves the rigid body out: with Euler-parameter nodes mbserve and Exudyn part by
# 1e-6 at index 2 whatever holds the body (a JointSpherical too), which is not this connector's.
SCHEMES = [pytest.param(False, True, id="index3"), pytest.param(True, False, id="index2-newmark")]


def solved_both_ways(index2: bool, rigid_body: bool, relative_tolerance: float | None = None):
    """(mbserve's results, Exudyn's system solved) of exudyn_rods in the scheme."""
    return test_planar.solved_both_ways(*exudyn_rods(rigid_body), index2, relative_tolerance)


@pytest.mark.parametrize("index2,rigid_body", SCHEMES)
def test_rods_give_exudyns_sensors(index2, rigid_body):
    assert_exudyns_sensors(*solved_both_ways(index2, rigid_body))


@pytest.mark.parametrize("index2,rigid_body", SCHEMES)
def test_rods_take_exudyns_newton_iterations(index2, rigid_body):
    """With Exudyn's default tolerance (1e-8) and modified Newton: the same Jacobians and iterations."""
    ours, mbs = solved_both_ways(index2, rigid_body, relative_tolerance=1e-8)
    it = mbs.sys["dynamicSolver"].it
    assert (ours.solver["jacobians"], ours.solver["newtonIterations"]) == (it.newtonJacobiCount, it.newtonStepsCount)
