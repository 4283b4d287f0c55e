"""Node1D with ObjectMass1D and ObjectRotationalMass1D (issue 13): a mass on a coordinate spring oscillates at
sqrt(k/m); a turned mass and rotor under a force, gravity and a torque through their body markers move as
F t²/(2m) along A_ref e_x and T t²/(2J) about A_ref e_z; models the core refuses; and Exudyn's sensors and Newton
work on a model with springs, loads and a joint on both types."""
from __future__ import annotations

import numpy as np
import pytest

import multibody
from tests.multibody.exudyn_check import assert_solves_as_exudyn, exudyn_settings

K, M, J = 40.0, 2.5, 0.4


def rot_z(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def rot_x(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def oscillator(solver: str = "GeneralizedAlpha") -> dict:
    """A Mass1D at x0 = 0.1 on a spring to a ground coordinate."""
    return {"nodes": [{"nodeType": "PointGround"}, {"nodeType": "1D", "referenceCoordinates": [2.0],
                                                     "initialCoordinates": [0.1]}],
            "objects": [{"objectType": "Mass1D", "nodeNumber": 1, "mass": M},
                        {"objectType": "ConnectorCoordinateSpringDamper", "markerNumbers": [0, 1], "stiffness": K}],
            "markers": [{"markerType": "NodeCoordinate", "nodeNumber": 0, "coordinate": 0},
                        {"markerType": "NodeCoordinate", "nodeNumber": 1, "coordinate": 0}],
            "sensors": [{"sensorType": "Node", "nodeNumber": 1, "outputVariableType": "Coordinates", "name": "x"},
                        {"sensorType": "Body", "bodyNumber": 0, "outputVariableType": "Position", "name": "p"}],
            "solve": {"type": "Dynamic", "solverType": solver},
            "simulationSettings": {"timeIntegration": {"endTime": 1.0, "numberOfSteps": 2000}}}


@pytest.mark.parametrize("solver", ["GeneralizedAlpha", "RK44"])
def test_mass_on_a_coordinate_spring_oscillates_at_sqrt_k_over_m(solver):
    result = multibody.simulate(oscillator(solver))
    assert result.status == "succeeded", result.error
    t, x = result.sensors["x"].data.T
    assert x == pytest.approx(0.1 * np.cos(np.sqrt(K / M) * t), abs=2e-4)
    assert result.sensors["p"].data[-1, 1:] == pytest.approx([2.0 + x[-1], 0, 0])


def test_turned_mass_and_rotor_move_under_force_gravity_and_torque_along_their_reference_axes():
    A, B = rot_z(0.3) @ rot_x(0.2), rot_x(0.5) @ rot_z(0.1)
    F, g, T, end = np.array([1.0, 2.0, 0.5]), np.array([0, 0, -9.81]), np.array([0.3, -0.2, 1.5]), 0.5
    doc = {"nodes": [{"nodeType": "1D", "referenceCoordinates": [0.2]}, {"nodeType": "1D"}],
           "objects": [{"objectType": "Mass1D", "nodeNumber": 0, "mass": M, "referencePosition": [1, 2, 3],
                        "referenceRotation": A.tolist()},
                       {"objectType": "RotationalMass1D", "nodeNumber": 1, "inertia": J,
                        "referenceRotation": B.tolist()}],
           "markers": [{"markerType": "BodyPosition", "bodyNumber": 0, "localPosition": [0, 0.1, 0]},
                       {"markerType": "BodyMass", "bodyNumber": 0},
                       {"markerType": "BodyRigid", "bodyNumber": 1, "localPosition": [0, 0, 0.2]}],
           "loads": [{"loadType": "ForceVector", "markerNumber": 0, "loadVector": F.tolist()},
                     {"loadType": "MassProportional", "markerNumber": 1, "loadVector": g.tolist()},
                     {"loadType": "TorqueVector", "markerNumber": 2, "loadVector": T.tolist()}],
           "sensors": [{"sensorType": "Body", "bodyNumber": 0, "outputVariableType": "Displacement", "name": "u"},
                       {"sensorType": "Body", "bodyNumber": 1, "outputVariableType": "Rotation", "name": "phi"},
                       {"sensorType": "Body", "bodyNumber": 1, "outputVariableType": "AngularVelocity", "name": "w"},
                       {"sensorType": "Marker", "markerNumber": 2, "outputVariableType": "RotationMatrix",
                        "name": "R"}],
           "simulationSettings": {"timeIntegration": {"endTime": end, "numberOfSteps": 100}}}
    result = multibody.simulate(doc)
    assert result.status == "succeeded", result.error
    x = (F + M * g) @ A[:, 0] * end ** 2 / (2 * M)
    assert result.sensors["u"].data[-1, 1:] == pytest.approx(x * A[:, 0], rel=1e-8)
    phi = T @ B[:, 2] * end ** 2 / (2 * J)
    assert result.sensors["phi"].data[-1, 1] == pytest.approx(phi, rel=1e-8)
    assert result.sensors["w"].data[-1, 1:] == pytest.approx(T @ B[:, 2] * end / J * B[:, 2], rel=1e-8)
    assert result.sensors["R"].data[-1, 1:] == pytest.approx((B @ rot_z(phi)).ravel(), rel=1e-8, abs=1e-12)


def test_models_the_core_refuses_say_where():
    doc = oscillator()
    doc["objects"].append({"objectType": "RotationalMass1D", "nodeNumber": 1})
    doc["markers"].append({"markerType": "BodyMass", "bodyNumber": 2})
    problems = {p.path: p.message for p in multibody.validate_document(doc).problems}
    assert "one Mass1D or RotationalMass1D per Node1D" in problems["objects[2].nodeNumber"]
    assert "positive inertia" in problems["objects[2].inertia"]
    assert "Mass1D" in problems["markers[2].bodyNumber"]


exu = pytest.importorskip("exudyn")


def exudyn_drive():
    """A turned Mass1D on a spring to the ground under gravity, on a revolute-like joint with a rigid body
    (spherical joint, two axes), and a turned rotor on a coordinate spring under a torque, coupled to the rigid
    body's rotation by a generic joint; sensors of every output of both bodies, their nodes and a marker."""
    from exudyn.itemInterface import (LoadMassProportional, LoadTorqueVector, MarkerBodyMass, MarkerBodyPosition,
                                      MarkerBodyRigid, MarkerNodeCoordinate, Node1D, NodePointGround, NodeRigidBodyEP,
                                      ObjectConnectorCoordinateSpringDamper, ObjectConnectorSpringDamper,
                                      ObjectGround, ObjectJointSpherical, ObjectMass1D, ObjectRigidBody,
                                      ObjectRotationalMass1D, SensorBody, SensorMarker, SensorNode)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    A, B = rot_z(0.3) @ rot_x(0.2), rot_x(0.5)
    n_mass = mbs.AddNode(Node1D(referenceCoordinates=[0.2], initialVelocities=[0.5]))
    mass = mbs.AddObject(ObjectMass1D(nodeNumber=n_mass, mass=M, referencePosition=[1, 0, 0], referenceRotation=A))
    m_mass = mbs.AddMarker(MarkerBodyPosition(bodyNumber=mass, localPosition=[0, 0.1, 0]))
    m_ground = mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[0, 1, 0]))
    mbs.AddObject(ObjectConnectorSpringDamper(markerNumbers=[m_ground, m_mass], stiffness=50.0, damping=0.5,
                                              referenceLength=0.5))
    mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=mass)),
                                     loadVector=[0, -9.81, 0]))
    p = (A[:, 0] * 0.2 + [1, 0, 0]).tolist()  # at the mass
    n_body = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=p + [1, 0, 0, 0]))
    body = mbs.AddObject(ObjectRigidBody(nodeNumber=n_body, mass=0.5, inertia=[0.01, 0.01, 0.01, 0, 0, 0]))
    m_body = mbs.AddMarker(MarkerBodyRigid(bodyNumber=body))
    m_mass_rigid = mbs.AddMarker(MarkerBodyRigid(bodyNumber=mass, localPosition=[0.0, 0, 0]))
    mbs.AddObject(ObjectJointSpherical(markerNumbers=[m_mass_rigid, m_body], constrainedAxes=[1, 1, 1]))
    n_rotor = mbs.AddNode(Node1D(referenceCoordinates=[0.1], initialVelocities=[2.0]))
    rotor = mbs.AddObject(ObjectRotationalMass1D(nodeNumber=n_rotor, inertia=J, referencePosition=[0, 0, 1],
                                                 referenceRotation=B))
    m_rotor = mbs.AddMarker(MarkerBodyRigid(bodyNumber=rotor, localPosition=[0, 0, 0.2]))
    mbs.AddLoad(LoadTorqueVector(markerNumber=m_rotor, loadVector=[0.3, 0.2, 1.0]))
    m_fixed = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=mbs.AddNode(NodePointGround()), coordinate=0))
    mbs.AddObject(ObjectConnectorCoordinateSpringDamper(
        markerNumbers=[m_fixed, mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n_rotor, coordinate=0))],
        stiffness=20.0, damping=0.1))
    for b in (mass, rotor):
        for var in ("Position", "Displacement", "Velocity", "RotationMatrix", "Rotation", "AngularVelocity",
                    "AngularVelocityLocal"):
            mbs.AddSensor(SensorBody(bodyNumber=b, localPosition=[0.1, 0.2, 0.3] if b == rotor else [0, 0, 0],
                                     storeInternal=True, outputVariableType=getattr(exu.OutputVariableType, var)))
    for n in (n_mass, n_rotor):
        for var in ("Coordinates", "Coordinates_t", "Coordinates_tt", "CoordinatesTotal"):
            mbs.AddSensor(SensorNode(nodeNumber=n, storeInternal=True,
                                     outputVariableType=getattr(exu.OutputVariableType, var)))
    for var in ("Position", "Velocity", "RotationMatrix", "AngularVelocity"):
        mbs.AddSensor(SensorMarker(markerNumber=m_rotor, storeInternal=True,
                                   outputVariableType=getattr(exu.OutputVariableType, var)))
    mbs.Assemble()
    return mbs, exudyn_settings(1.0, 500, 0.01)


def test_mass_and_rotor_give_exudyns_sensors_and_newton_work():
    assert_solves_as_exudyn(*exudyn_drive(), rtol=1e-8, floor=1.0)
