"""ObjectConnectorTorsionalSpringDamper (issue 13, items/torsional_spring_damper.py): a rigid body on a
JointRevoluteZ with the torsional spring to the ground oscillates as J φ̈ + d φ̇ + k φ = 0, in the
generalized-α, explicit and static solvers; a two-body mechanism with tilted joint frames, rotationMarker0/1
and a spinning body (its Rotation passing ±π) gives Exudyn 1.13.6's sensors and Newton iterations.

Tolerances: generalized-α at Ωh = 0.0063 has a phase error ~(Ωh)²Ωt/12 ≈ 1e-5 of the amplitude over
the run and ρ∞ = 0.9's damping (2e-4 allowed); RK44's error is ~(Ωh)⁴ per period (1e-9 allowed).
"""
from __future__ import annotations

import math

import exudyn as exu
import numpy as np
import pytest
from exudyn.itemInterface import (LoadMassProportional, LoadTorqueVector, MarkerBodyMass, MarkerBodyRigid,
                                  NodeRigidBodyEP, ObjectConnectorTorsionalSpringDamper, ObjectGround,
                                  ObjectJointRevoluteZ, ObjectRigidBody)
from exudyn.rigidBodyUtilities import RotationMatrix2EulerParameters, RotationMatrixX, RotationMatrixY

import multibody
from mbserve.exudyn import export
from multibody.api import load_model
from multibody.solvers.generalized_alpha import solve_dynamic
from multibody.values import ModelInvalid
from tests.multibody.test_planar import with_sensors

J, K = 0.5, 20.0  # the body's inertia about z, the spring's stiffness
OMEGA = math.sqrt(K / J)
OUTPUTS = ("Rotation", "AngularVelocityLocal", "TorqueLocal")


def oscillator(damping: float = 0.0, omega0: float = 0.3, solve: dict | None = None, steps: int = 3000,
               end: float = 3.0, torque: float = 0.0, planar: bool = False) -> dict:
    """A body turning about z, started at omega0, with the torsional spring-damper to the ground and a
    torque load: on a JointRevoluteZ (Euler parameters, θ̇ = ½Gᵀω), or planar (a RigidBody2D, free)."""
    if planar:
        node = {"nodeType": "RigidBody2D", "initialVelocities": [0, 0, omega0]}
        body = [{"objectType": "RigidBody2D", "nodeNumber": 0, "mass": 2.0, "inertia": J}]
    else:
        node = {"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0, 1, 0, 0, 0],
                "initialVelocities": [0, 0, 0, 0, 0, 0, omega0 / 2]}
        body = [{"objectType": "RigidBody", "nodeNumber": 0, "mass": 2.0, "inertia": [0.3, 0.4, J, 0, 0, 0]},
                {"objectType": "JointRevoluteZ", "markerNumbers": [0, 1]}]
    doc = {
        "nodes": [node],
        "objects": [{"objectType": "Ground"}, *body,
                    {"objectType": "ConnectorTorsionalSpringDamper", "name": "spring", "markerNumbers": [0, 1],
                     "stiffness": K, "damping": damping}],
        "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1}],
        "loads": [{"loadType": "TorqueVector", "markerNumber": 1, "loadVector": [0, 0, torque]}],
        "sensors": [{"sensorType": "Object", "objectNumber": "spring", "outputVariableType": v, "name": v}
                    for v in OUTPUTS]
        + [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Rotation", "name": "node"}],
        "simulationSettings": {"timeIntegration": {"endTime": end, "numberOfSteps": steps}},
    }
    if solve:
        doc["solve"] = solve
    return doc


def free_vibration(t: np.ndarray, damping: float, omega0: float) -> tuple[np.ndarray, np.ndarray]:
    """φ, φ̇ of J φ̈ + d φ̇ + k φ = 0 from φ = 0, φ̇ = omega0 (underdamped)."""
    zeta = damping / (2 * math.sqrt(K * J))
    wd = OMEGA * math.sqrt(1 - zeta ** 2)
    decay = np.exp(-zeta * OMEGA * t)
    phi = omega0 / wd * decay * np.sin(wd * t)
    rate = omega0 * decay * (np.cos(wd * t) - zeta * OMEGA / wd * np.sin(wd * t))
    return phi, rate


def check_vibration(res, damping: float, omega0: float, tolerance: float) -> None:
    assert res.status == "succeeded", res.error
    t, phi = res.sensors["Rotation"].data.T
    exact_phi, exact_rate = free_vibration(t, damping, omega0)
    amplitude = omega0 / OMEGA
    assert np.abs(phi - exact_phi).max() < tolerance * amplitude
    assert np.abs(res.sensors["AngularVelocityLocal"].data[:, 1] - exact_rate).max() < tolerance * omega0
    # the torque on marker 1's side is k φ + d φ̇; the node turns by φ about z
    torque = res.sensors["TorqueLocal"].data[:, 1]
    expected = K * phi + damping * res.sensors["AngularVelocityLocal"].data[:, 1]
    assert np.abs(torque - expected).max() < 1e-12 * K * amplitude
    assert np.abs(res.sensors["node"].data[:, 3] - phi).max() < 1e-12


@pytest.mark.parametrize("damping", [0.0, 0.4])
@pytest.mark.parametrize("planar", [False, True])
def test_torsional_oscillator_turns_with_its_frequency_and_decay(damping, planar):
    """φ = (ω0/Ω_d) e^{-ζΩt} sin Ω_d t, Ω = √(k/J), ζ = d / (2√(kJ)), Ω_d = Ω√(1 - ζ²)."""
    res = solve_dynamic(load_model(oscillator(damping, planar=planar)))
    check_vibration(res, damping, 0.3, 2e-4)


@pytest.mark.parametrize("solver", ["RK44", "DOPRI5"])
def test_explicit_solvers_apply_the_torsional_spring(solver):
    """A force type: the explicit solvers apply it (on a planar body: they integrate no Euler parameters)."""
    res = multibody.simulate(oscillator(0.4, solve={"type": "Dynamic", "solverType": solver}, steps=1000,
                                        end=1.0, planar=True))
    check_vibration(res, 0.4, 0.3, 1e-9 if solver == "RK44" else 1e-6)


def test_static_solver_turns_the_spring_to_balance_a_torque():
    """φ = (T - torque parameter)/k + offset for a torque load T (Exudyn's mini example, here in statics)."""
    doc = oscillator(0.4, omega0=0.0, solve={"type": "Static"}, torque=1.5)
    doc["objects"][-1].update(offset=0.1, torque=0.5)
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    assert res.sensors["Rotation"].data[-1, 1] == pytest.approx(1.0 / K + 0.1, abs=1e-10)
    assert res.sensors["TorqueLocal"].data[-1, 1] == pytest.approx(1.5, abs=1e-9)


def test_an_inactive_spring_applies_and_reports_no_torque():
    doc = oscillator(0.4, steps=100, end=0.1)
    doc["objects"][-1]["activeConnector"] = False
    res = multibody.simulate(doc)
    t, phi = res.sensors["Rotation"].data.T
    assert np.abs(phi - 0.3 * t).max() < 1e-9  # turns freely (generalized-α's error on the Euler parameters)
    assert not res.sensors["TorqueLocal"].data[:, 1].any()  # Exudyn's TorqueLocal of an inactive item: 0


def test_bad_input_is_refused_with_its_path():
    doc = oscillator()
    doc["nodes"].append({"nodeType": "PointGround"})
    doc["objects"][3].update(nodeNumber=1, springTorqueUserFunction="stiffness*rotation")
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problems = {p.path: p for p in err.value.problems}
    node = problems["objects[3].nodeNumber"]
    assert node.item == "spring" and "NodeGenericData" in node.message and "-1" in node.message
    assert "0 (none) only" in problems["objects[3].springTorqueUserFunction"].message
    doc = oscillator()
    doc["markers"].append({"markerType": "BodyPosition", "bodyNumber": 1})
    doc["objects"][3]["markerNumbers"] = [0, 2]
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problem = next(p for p in err.value.problems if p.path == "objects[3].markerNumbers[1]")
    assert "rigid-body markers" in problem.message


# ------------------------------------------------------------------------------- against Exudyn
def _ep_rates(ep: np.ndarray, omega: np.ndarray) -> list[float]:
    """θ̇ = ¼ Gᵀω of unit Euler parameters (Exudyn's utilities' rule)."""
    t0, t1, t2, t3 = ep
    G = 2 * np.array([[-t1, t0, -t3, t2], [-t2, t3, t0, -t1], [-t3, -t2, t1, t0]])
    return list(0.25 * G.T @ omega)


def _ht(rotation, position=(0.0, 0.0, 0.0)) -> np.ndarray:
    ht = np.eye(4)
    ht[:3, :3], ht[:3, 3] = rotation, position
    return ht


def exudyn_mechanism():
    """Body A on a revolute joint to the ground about a tilted axis (both markers' localHT turned by
    Rx(0.5)), with a torsional spring-damper (offset, velocity offset, torque) on the same markers;
    body B, its center of mass off the axis, on a revolute joint to A about A's x axis (markers' localHT
    Ry(π/2)), spinning, with a damper-only torsional item on plain markers whose rotationMarker0/1 turn
    z to A's x, so that its Rotation passes ±π; gravity; a sensor of every output of both items."""
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    tilt, turn = RotationMatrixX(0.5), RotationMatrixY(0.5 * math.pi)
    identity, pin = np.array([1.0, 0, 0, 0]), np.array([0.3, 0.0, 0.0])
    omega_a = tilt @ [0, 0, 0.8]
    na = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[0, 0, 0, *identity],
                                     initialVelocities=[0, 0, 0, *_ep_rates(identity, omega_a)]))
    a = mbs.AddObject(ObjectRigidBody(nodeNumber=na, mass=2.0, inertia=[0.3, 0.25, 0.4, 0.01, 0.0, 0.02]))
    nb = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[*pin, *identity],
                                     initialVelocities=[*np.cross(omega_a, pin),
                                                        *_ep_rates(identity, omega_a + [6.0, 0, 0])]))
    b = mbs.AddObject(ObjectRigidBody(nodeNumber=nb, mass=0.5, inertia=[0.02, 0.05, 0.05, 0, 0, 0],
                                      centerOfMass=[0.0, 0.2, 0.1]))
    hinge = [mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localHT=_ht(tilt))),
             mbs.AddMarker(MarkerBodyRigid(bodyNumber=a, localHT=_ht(tilt)))]
    mbs.AddObject(ObjectJointRevoluteZ(markerNumbers=hinge))
    spring = mbs.AddObject(ObjectConnectorTorsionalSpringDamper(markerNumbers=hinge, stiffness=3.0, damping=0.05,
                                                                offset=0.2, velocityOffset=0.1, torque=0.3))
    mbs.AddObject(ObjectJointRevoluteZ(markerNumbers=[
        mbs.AddMarker(MarkerBodyRigid(bodyNumber=a, localHT=_ht(turn, pin))),
        mbs.AddMarker(MarkerBodyRigid(bodyNumber=b, localHT=_ht(turn)))]))
    damper = mbs.AddObject(ObjectConnectorTorsionalSpringDamper(
        markerNumbers=[mbs.AddMarker(MarkerBodyRigid(bodyNumber=a, localPosition=list(pin))),
                       mbs.AddMarker(MarkerBodyRigid(bodyNumber=b, localPosition=[0, 0, 0]))],
        damping=0.02, torque=0.05, rotationMarker0=turn, rotationMarker1=turn))
    for body in (a, b):
        mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=body)),
                                         loadVector=[0, -9.81, 0]))
    mbs.AddLoad(LoadTorqueVector(markerNumber=hinge[1], loadVector=[0, 0, 0.4], bodyFixed=True))
    # sensors: the nodes' Rotation, AngularVelocity (0..3), then the spring's and the damper's outputs (4..9)
    return with_sensors(mbs, nodes=[(n, ("Rotation", "AngularVelocity")) for n in (na, nb)], bodies=[],
                        objects=[(spring, OUTPUTS), (damper, OUTPUTS)], markers=[])


# the damper's rotationMarker0/1, deprecated in Exudyn 1.13.6 (as in mbserve), are what an older model exports
EXUDYN_DEPRECATION = pytest.mark.filterwarnings("ignore:.*rotationMarker:DeprecationWarning")


def check_exudyn_sensors(mbs, settings) -> list[np.ndarray]:
    """Ours and Exudyn's run of mbs: each sensor to 1e-10 of its size; Exudyn's sensor data."""
    ours = multibody.simulate(export(mbs, settings))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings)
    theirs = [np.asarray(mbs.GetSensorStoredData(i)) for i in range(mbs.systemData.NumberOfSensors())]
    for (name, series), data in zip(ours.sensors.items(), theirs, strict=True):
        assert data.shape == series.data.shape, name
        assert np.abs(series.data - data).max() <= 1e-10 * (1.0 + np.abs(data).max()), name
    return theirs


def check_exudyn_newton_iterations(mbs, settings) -> dict:
    """At Exudyn's default Newton tolerance: the same Jacobian count, iterations to 0.1 %; our counts."""
    settings.timeIntegration.newton.relativeTolerance = 1e-8  # Exudyn's default
    doc = export(mbs, settings)
    exu.SolveDynamic(mbs, settings, storeSolver=True)
    theirs = mbs.sys["dynamicSolver"].it
    ours = multibody.simulate(doc).solver
    assert ours["jacobians"] == theirs.newtonJacobiCount
    assert abs(ours["newtonIterations"] - theirs.newtonStepsCount) <= 1 + 0.001 * theirs.newtonStepsCount
    return ours


@EXUDYN_DEPRECATION
def test_mechanism_gives_exudyns_sensors():
    """The same scheme, steps and Newton iterations converged to round-off: Exudyn's solution to 1e-10 of
    each sensor's size, the damper's Rotation passing ±π at the same step."""
    theirs = check_exudyn_sensors(*exudyn_mechanism())
    assert (np.abs(np.diff(theirs[7][:, 1])) > 6).any()  # the damper's Rotation wrapped at ±π


@EXUDYN_DEPRECATION
def test_mechanism_takes_exudyns_newton_iterations():
    """With Exudyn's default (modified) Newton and tolerance: the same Jacobian count and iterations
    (Exudyn's connector Jacobian is numerical, ours exact: a step near the tolerance may go either way)."""
    check_exudyn_newton_iterations(*exudyn_mechanism())  # measured: 32 Jacobians and 1561 iterations, as Exudyn
