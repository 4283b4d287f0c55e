"""ObjectConnectorRigidBodySpringDamper (issue 13, items/rigid_body_spring_damper.py): a rigid body on a
diagonal 6x6 spring-damper to the ground, its marker at the center of mass, moves as three translational
oscillators m ẍ + d ẋ + k x = 0 and, turning about one principal axis, a rotational one J φ̈ + d φ̇ + k φ = 0
(the other angles stay 0, so the Tait-Bryan angle is φ exactly), in the generalized-α, explicit (planar)
and static solvers; two bodies on springs with rotated markers, off-diagonal stiffness and damping, offsets,
lever arms and an inactive item give Exudyn 1.13.6's sensors and Newton iterations.

Tolerances: generalized-α at Ωh ≤ 0.0055 has a phase error ~(Ωh)²Ωt/12 ≤ 2e-5 of the amplitude over the run
and ρ∞ = 0.9's damping (2e-4 allowed); RK44's error is ~(Ωh)⁴ per period (1e-9 allowed).
"""
from __future__ import annotations

import math

import exudyn as exu
import numpy as np
import pytest
from exudyn.itemInterface import (LoadMassProportional, MarkerBodyMass, MarkerBodyRigid, NodeRigidBodyEP,
                                  ObjectConnectorRigidBodySpringDamper, ObjectGround, ObjectRigidBody)
from exudyn.rigidBodyUtilities import RotationMatrixX, RotationMatrixY, RotationMatrixZ

import multibody
from multibody.api import load_model
from multibody.solvers.generalized_alpha import solve_dynamic
from multibody.values import ModelInvalid
from tests.multibody.test_planar import with_sensors
from tests.multibody.test_torsional_spring_damper import (EXUDYN_DEPRECATION, _ep_rates, _ht,
                                                          check_exudyn_newton_iterations, check_exudyn_sensors)

MASS = 2.0
INERTIA = (0.3, 0.4, 0.5)
STIFFNESS = (50.0, 80.0, 120.0, 3.0, 6.0, 10.0)  # x, y, z, rx, ry, rz
DAMPING = (0.4, 0.5, 0.6, 0.03, 0.05, 0.08)
V0 = (0.2, -0.3, 0.1)
OMEGA0 = 0.3
OUTPUTS = ("DisplacementLocal", "VelocityLocal", "Rotation", "AngularVelocityLocal", "ForceLocal", "TorqueLocal")


def oscillator(damping: bool, axis: int = 2, solve: dict | None = None, steps: int = 3000, end: float = 3.0,
               planar: bool = False) -> dict:
    """A body started with V0 and OMEGA0 about `axis` on the spring-damper to the ground (markers at the
    ground's origin and the body's center of mass): a RigidBodyEP body, or a RigidBody2D (axis 2)."""
    if planar:
        node = {"nodeType": "RigidBody2D", "initialVelocities": [V0[0], V0[1], OMEGA0]}
        body = {"objectType": "RigidBody2D", "nodeNumber": 0, "mass": MASS, "inertia": INERTIA[2]}
    else:
        omega = [OMEGA0 * (i == axis) for i in range(3)]
        node = {"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0, 1, 0, 0, 0],
                "initialVelocities": [*V0, *_ep_rates(np.array([1.0, 0, 0, 0]), np.array(omega))]}
        body = {"objectType": "RigidBody", "nodeNumber": 0, "mass": MASS, "inertia": [*INERTIA, 0, 0, 0]}
    return {
        "nodes": [node],
        "objects": [{"objectType": "Ground"}, body,
                    {"objectType": "ConnectorRigidBodySpringDamper", "name": "spring", "markerNumbers": [0, 1],
                     "stiffness": np.diag(STIFFNESS).tolist(), "damping": np.diag(DAMPING if damping else [0] * 6)
                     .tolist()}],
        "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1}],
        "sensors": [{"sensorType": "Object", "objectNumber": "spring", "outputVariableType": v, "name": v}
                    for v in OUTPUTS],
        "simulationSettings": {"timeIntegration": {"endTime": end, "numberOfSteps": steps}},
        **({"solve": solve} if solve else {}),
    }


def free_vibration(t: np.ndarray, k: float, m: float, d: float, v0: float) -> tuple[np.ndarray, np.ndarray]:
    """x, ẋ of m ẍ + d ẋ + k x = 0 from x = 0, ẋ = v0 (underdamped)."""
    omega = math.sqrt(k / m)
    zeta = d / (2 * math.sqrt(k * m))
    wd = omega * math.sqrt(1 - zeta ** 2)
    decay = np.exp(-zeta * omega * t)
    return v0 / wd * decay * np.sin(wd * t), v0 * decay * (np.cos(wd * t) - zeta * omega / wd * np.sin(wd * t))


def check_vibration(res, damping: bool, axis: int, tolerance: float, axes=(0, 1, 2)) -> None:
    """Each translation and the angle about `axis` against its oscillator; the other angles 0; the force
    and torque K u + D w."""
    assert res.status == "succeeded", res.error
    s = {v: res.sensors[v].data for v in OUTPUTS}
    t = s["DisplacementLocal"][:, 0]
    d = DAMPING if damping else (0.0,) * 6
    for i in axes:
        x, rate = free_vibration(t, STIFFNESS[i], MASS, d[i], V0[i])
        assert np.abs(s["DisplacementLocal"][:, 1 + i] - x).max() < tolerance * abs(V0[i]), i
        assert np.abs(s["VelocityLocal"][:, 1 + i] - rate).max() < tolerance * abs(V0[i]), i
    phi, rate = free_vibration(t, STIFFNESS[3 + axis], INERTIA[axis], d[3 + axis], OMEGA0)
    assert np.abs(s["Rotation"][:, 1 + axis] - phi).max() < tolerance * OMEGA0
    assert np.abs(s["AngularVelocityLocal"][:, 1 + axis] - rate).max() < tolerance * OMEGA0
    others = [c for c in (1, 2, 3) if c != 1 + axis]
    assert np.abs(s["Rotation"][:, others]).max() < 1e-12
    for force, u, w, first in (("ForceLocal", "DisplacementLocal", "VelocityLocal", 0),
                               ("TorqueLocal", "Rotation", "AngularVelocityLocal", 3)):
        expected = s[u][:, 1:] * STIFFNESS[first:first + 3] + s[w][:, 1:] * d[first:first + 3]
        assert np.abs(s[force][:, 1:] - expected).max() < 1e-12 * max(STIFFNESS)


@pytest.mark.parametrize("damping", [False, True])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_body_on_the_spring_oscillates_with_each_axis_frequency(damping, axis):
    """x_i = (v0/ω_d) e^{-ζωt} sin ω_d t with ω = √(k_i/m); the angle about the turning axis likewise with
    ω = √(k_rot/J)."""
    res = solve_dynamic(load_model(oscillator(damping, axis)))
    check_vibration(res, damping, axis, 2e-4)


def test_planar_body_oscillates_in_the_plane():
    res = solve_dynamic(load_model(oscillator(True, planar=True)))
    check_vibration(res, True, 2, 2e-4, axes=(0, 1))


@pytest.mark.parametrize("solver", ["RK44", "DOPRI5"])
def test_explicit_solvers_apply_the_spring(solver):
    """A force type: the explicit solvers apply it (on a planar body: they integrate no Euler parameters)."""
    res = multibody.simulate(oscillator(True, solve={"type": "Dynamic", "solverType": solver}, steps=1000,
                                        end=1.0, planar=True))
    check_vibration(res, True, 2, 1e-9 if solver == "RK44" else 1e-6, axes=(0, 1))


def test_static_solver_deflects_the_spring_by_the_load_over_the_stiffness():
    """u = F/k + offset, angles = T/k_rot + offset for a force F and a torque T on the body: K(u - offset)
    balances the load exactly (the ground's joint frame is the global frame)."""
    force, torque, offset = [1.0, -2.0, 3.0], [0.1, 0.2, -0.3], [0.01, 0.02, -0.03, 0.05, -0.04, 0.02]
    doc = oscillator(True, solve={"type": "Static"})
    doc["nodes"][0].pop("initialVelocities")  # at rest: no damping force
    doc["simulationSettings"]["staticSolver"] = {"newton": {"relativeTolerance": 1e-12}}  # to round-off
    doc["objects"][-1]["offset"] = offset
    doc["loads"] = [{"loadType": "ForceVector", "markerNumber": 1, "loadVector": force},
                    {"loadType": "TorqueVector", "markerNumber": 1, "loadVector": torque}]
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    load = np.array(force + torque)
    expected = load / STIFFNESS + offset
    assert np.abs(res.sensors["DisplacementLocal"].data[-1, 1:] - expected[:3]).max() < 1e-10
    assert np.abs(res.sensors["Rotation"].data[-1, 1:] - expected[3:]).max() < 1e-10
    assert np.abs(res.sensors["ForceLocal"].data[-1, 1:] - load[:3]).max() < 1e-9
    assert np.abs(res.sensors["TorqueLocal"].data[-1, 1:] - load[3:]).max() < 1e-9


def test_bad_input_is_refused_with_its_path():
    doc = oscillator(False)
    doc["nodes"].append({"nodeType": "PointGround"})
    doc["objects"][2].update(nodeNumber=1, springForceTorqueUserFunction="k*x", postNewtonStepUserFunction="x",
                             useIntrinsicFormulation=True, offset=[0.0] * 5)
    doc["objects"][2]["damping"][3] = [0.0] * 7
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problems = {p.path: p for p in err.value.problems}
    node = problems["objects[2].nodeNumber"]
    assert node.item == "spring" and "NodeGenericData" in node.message and "-1" in node.message
    assert "0 (none) only" in problems["objects[2].springForceTorqueUserFunction"].message
    assert "0 (none) only" in problems["objects[2].postNewtonStepUserFunction"].message
    assert "intrinsic" in problems["objects[2].useIntrinsicFormulation"].message
    assert "objects[2].offset" in problems and "objects[2].damping[3]" in problems
    doc = oscillator(False)
    doc["markers"].append({"markerType": "BodyPosition", "bodyNumber": 1})
    doc["objects"][2]["markerNumbers"] = [0, 2]
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problem = next(p for p in err.value.problems if p.path == "objects[2].markerNumbers[1]")
    assert "rigid-body markers" in problem.message


# ------------------------------------------------------------------------------- against Exudyn
def _spd(diagonal, coupling: float, seed: int) -> np.ndarray:
    """A symmetric positive definite 6x6 matrix: `diagonal` and off-diagonal terms up to `coupling` of it."""
    noise = np.random.default_rng(seed).uniform(-1, 1, (6, 6))
    scale = np.sqrt(np.outer(diagonal, diagonal))
    return np.diag(diagonal) + coupling * scale * (noise + noise.T) / 2 * (1 - np.eye(6))


def exudyn_springs():
    """Body A on a spring-damper to the ground (both markers turned by localHT and off the node, the
    joint frames turned further by rotationMarker0/1, coupled stiffness and damping, an offset); body B
    on one to A (lever arms on both sides); an inactive one from the ground to B; A and B spinning;
    gravity; a sensor of every output of the three items."""
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    identity = np.array([1.0, 0, 0, 0])
    omega_a, omega_b = np.array([0.5, -1.0, 2.0]), np.array([0.8, -0.6, 2.3])
    na = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[0, 0, 0, *identity],
                                     initialVelocities=[0.1, -0.2, 0.3, *_ep_rates(identity, omega_a)]))
    a = mbs.AddObject(ObjectRigidBody(nodeNumber=na, mass=2.0, inertia=[0.3, 0.25, 0.4, 0.01, 0.0, 0.02]))
    nb = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=[0.5, 0, 0, *identity],
                                     initialVelocities=[0.0, 1.0, -0.2, *_ep_rates(identity, omega_b)]))
    b = mbs.AddObject(ObjectRigidBody(nodeNumber=nb, mass=0.5, inertia=[0.02, 0.05, 0.05, 0, 0, 0],
                                      centerOfMass=[0.0, 0.05, 0.02]))
    springs = [
        mbs.AddObject(ObjectConnectorRigidBodySpringDamper(
            markerNumbers=[mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localHT=_ht(RotationMatrixX(0.5),
                                                                                         [0, 0.1, 0]))),
                           mbs.AddMarker(MarkerBodyRigid(bodyNumber=a, localHT=_ht(RotationMatrixY(0.3),
                                                                                    [0.1, 0, -0.05])))],
            stiffness=_spd([400, 300, 500, 40, 30, 50], 0.3, 1), damping=_spd([2, 1.5, 2.5, 0.2, 0.1, 0.3], 0.3, 2),
            offset=[0.01, -0.02, 0.03, 0.05, -0.04, 0.02], rotationMarker0=RotationMatrixZ(0.4),
            rotationMarker1=RotationMatrixX(-0.3))),
        mbs.AddObject(ObjectConnectorRigidBodySpringDamper(
            markerNumbers=[mbs.AddMarker(MarkerBodyRigid(bodyNumber=a, localPosition=[0.25, 0, 0])),
                           mbs.AddMarker(MarkerBodyRigid(bodyNumber=b, localPosition=[-0.25, 0.02, 0]))],
            stiffness=_spd([800, 900, 700, 20, 25, 30], 0.2, 3), damping=_spd([1, 1, 1, 0.05, 0.05, 0.05], 0.2, 4))),
        mbs.AddObject(ObjectConnectorRigidBodySpringDamper(
            markerNumbers=[mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground, localPosition=[0.5, 0, 0])),
                           mbs.AddMarker(MarkerBodyRigid(bodyNumber=b, localPosition=[0, 0, 0]))],
            stiffness=np.eye(6) * 10, damping=np.eye(6), activeConnector=False))]
    for body in (a, b):
        mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=body)),
                                         loadVector=[0, -9.81, 0]))
    return with_sensors(mbs, nodes=[(n, ("Position", "Rotation")) for n in (na, nb)], bodies=[],
                        objects=[(s, OUTPUTS) for s in springs], markers=[])


@EXUDYN_DEPRECATION
def test_springs_give_exudyns_sensors():
    """The same scheme, steps and Newton iterations converged to round-off: Exudyn's solution to 1e-10 of
    each sensor's size (the inactive item's displacements, rotation and velocities too)."""
    theirs = check_exudyn_sensors(*exudyn_springs())
    assert np.abs(theirs[-6][:, 1:]).max() > 0.1 and not theirs[-2][:, 1:].any()  # its displacement, no force


@EXUDYN_DEPRECATION
def test_springs_take_exudyns_newton_iterations():
    """With Exudyn's default (modified) Newton and tolerance: the same Jacobian count and iterations
    (Exudyn's connector Jacobian is numerical, ours exact along the rotation parameters' tangent)."""
    check_exudyn_newton_iterations(*exudyn_springs())
