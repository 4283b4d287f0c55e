"""NodeRigidBodyRxyz (issue 13): a rigid-body node on Tait-Bryan angles x-y-z, A = Rx(φ0) Ry(φ1) Rz(φ2),
with ω = G φ̇, ω̄ = Ḡ φ̇ and the Ḡ̇ φ̇ terms of ObjectRigidBody's quadratic velocity vector.

A heavy top (its node pinned at the origin by a spherical joint, center of mass 0.5 above it, spinning
at 30 rad/s about its axis, tilted 0.3 rad about x) on an Rxyz node against the same top on an
Euler-parameter node; the top with every node and body output variable against Exudyn 1.13.6; and
bad input.
"""
from __future__ import annotations

import numpy as np
import pytest

import multibody
from multibody.api import load_model
from multibody.rotations import rotation_to_ep, rxyz_rotation
from multibody.values import ModelInvalid

G, MASS, COM, SPIN, TILT = 9.81, 1.0, 0.5, 30.0, 0.3
INERTIA = [0.02 + MASS * COM ** 2, 0.02 + MASS * COM ** 2, 0.01, 0.0, 0.0, 0.0]  # about the node (Steiner)


def g_local(phi) -> np.ndarray:
    """Ḡ of Tait-Bryan angles: ω̄ = Ḡ φ̇."""
    c1, s1, c2, s2 = np.cos(phi[1]), np.sin(phi[1]), np.cos(phi[2]), np.sin(phi[2])
    return np.array([[c1 * c2, s2, 0.0], [-c1 * s2, c2, 0.0], [s1, 0.0, 1.0]])


def ep_node(rotation: np.ndarray, omega_local, velocity=(0.0, 0.0, 0.0)) -> dict:
    """An Euler-parameter node at the origin turned by `rotation`, moving at `velocity`, turning at ω̄ = omega_local."""
    ep = rotation_to_ep(rotation)
    t0, t1, t2, t3 = ep
    g_bar = 2 * np.array([[-t1, t0, t3, -t2], [-t2, -t3, t0, t1], [-t3, t2, -t1, t0]])
    return {"nodeType": "RigidBodyEP", "referenceCoordinates": [0.0, 0.0, 0.0, *ep],
            "initialVelocities": [*velocity, *(0.25 * g_bar.T @ np.asarray(omega_local, float))]}


def top_node(rxyz: bool) -> dict:
    """The top's node: rotated by TILT about x, spinning at SPIN about its body z axis."""
    phi, omega_local = np.array([TILT, 0.0, 0.0]), np.array([0.0, 0.0, SPIN])
    if rxyz:
        rates = np.linalg.solve(g_local(phi), omega_local)
        return {"nodeType": "RigidBodyRxyz", "referenceCoordinates": [0.0, 0.0, 0.0, *phi],
                "initialVelocities": [0.0, 0.0, 0.0, *rates]}
    return ep_node(rxyz_rotation(phi), omega_local)


def heavy_top(rxyz: bool, steps: int, end: float = 0.5) -> dict:
    return top_model(top_node(rxyz), steps, end)


def top_model(node: dict, steps: int, end: float = 0.5) -> dict:
    """The heavy top on `node` (pinned at the origin by a spherical joint), with sensors of its motion and force."""
    return {
        "nodes": [node],
        "objects": [{"objectType": "Ground"},
                    {"objectType": "RigidBody", "nodeNumber": 0, "mass": MASS, "inertia": INERTIA,
                     "centerOfMass": [0.0, 0.0, COM]},
                    {"objectType": "JointSpherical", "markerNumbers": [0, 1]}],
        "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1},
                    {"markerType": "BodyMass", "bodyNumber": 1}],
        "loads": [{"loadType": "MassProportional", "markerNumber": 2, "loadVector": [0.0, 0.0, -G]}],
        "sensors": [{"sensorType": "Body", "bodyNumber": 1, "localPosition": [0.0, 0.0, COM],
                     "outputVariableType": "Position", "name": "com"},
                    {"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "RotationMatrix", "name": "A"},
                    {"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "AngularVelocity", "name": "omega"},
                    {"sensorType": "Object", "objectNumber": 2, "outputVariableType": "Force", "name": "force"}],
        "simulationSettings": {"timeIntegration": {"endTime": end, "numberOfSteps": steps,
                                                   "newton": {"relativeTolerance": 1e-12}}},
    }


def top_difference(steps: int) -> dict[str, float]:
    """Largest difference of each sensor between the top on Rxyz angles and on Euler parameters."""
    rxyz, ep = multibody.simulate(heavy_top(True, steps)), multibody.simulate(heavy_top(False, steps))
    assert rxyz.status == ep.status == "succeeded", (rxyz.error, ep.error)
    return {name: np.abs(rxyz.sensors[name].data - ep.sensors[name].data).max() for name in rxyz.sensors}


def test_top_on_tait_bryan_angles_moves_as_on_euler_parameters():
    """Both parametrizations integrate the same motion (the top precesses and nutates: its center of
    mass moves by 0.44 m in the 0.5 s); they differ only by their second-order integration errors,
    which shrink 4x with the step (measured 4.000 for every sensor): at h = 1e-4 5.8e-7 m in the
    position, 2.6e-6 in A, 3.3e-5 rad/s in ω, 3.4e-5 N in the joint force."""
    fine, coarse = top_difference(5000), top_difference(2500)
    assert fine["com"] < 1e-6 and fine["A"] < 5e-6 and fine["omega"] < 1e-4 and fine["force"] < 1e-4
    for name in fine:
        assert 3.9 < coarse[name] / fine[name] < 4.1, (name, coarse[name], fine[name])
    res = multibody.simulate(heavy_top(True, 500))
    com = res.sensors["com"].data
    assert np.linalg.norm(com[-1, 1:] - com[0, 1:]) > 0.4  # the top moved
    assert np.abs(np.linalg.norm(com[:, 1:], axis=1) - COM).max() < 1e-10  # about its fixed point


def test_tait_bryan_node_errors_name_the_json_path():
    doc = heavy_top(True, 10)
    doc["nodes"][0]["initialCoordinates"] = [0.0] * 7  # an Euler-parameter node's length
    doc["nodes"][0]["name"] = "top"
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problem = next(p for p in err.value.problems if p.path.startswith("nodes[0].initialCoordinates"))
    assert "6" in problem.message, problem.message


def test_explicit_solvers_refuse_tait_bryan_nodes_by_name():
    doc = heavy_top(True, 10)
    doc["nodes"][0]["name"] = "top"
    doc["objects"].pop()  # no constraint: only the node stands in the way
    doc["solve"] = {"type": "Dynamic", "solverType": "RK44"}
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problem = next(p for p in err.value.problems if p.path == "solve.solverType")
    assert "top" in problem.message and "GeneralizedAlpha" in problem.message


# ------------------------------------------------------------------------------- against Exudyn
exu = pytest.importorskip("exudyn")

# the planar node's output variables are those Exudyn 1.13.6 lists for NodeRigidBodyRxyz too; every body one
from tests.multibody.test_planar import (BODY, NODE, assert_exudyns_sensors, solved_both_ways,  # noqa: E402
                                         with_sensors)


def exudyn_top(top=None, node_outputs=NODE):
    """The heavy top in Exudyn on a NodeRigidBodyRxyz (or the node item `top`) with a body-fixed torque besides
    gravity, and a sensor for every node and body output variable and the joint's force."""
    from exudyn.itemInterface import (LoadMassProportional, LoadTorqueVector, MarkerBodyMass, MarkerBodyRigid,
                                      NodeRigidBodyRxyz, ObjectGround, ObjectJointSpherical, ObjectRigidBody)
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    spec = top_node(True)
    node = mbs.AddNode(top or NodeRigidBodyRxyz(referenceCoordinates=spec["referenceCoordinates"],
                                                initialVelocities=spec["initialVelocities"]))
    body = mbs.AddObject(ObjectRigidBody(nodeNumber=node, mass=MASS, inertia=INERTIA, centerOfMass=[0.0, 0.0, COM]))
    ground = mbs.AddObject(ObjectGround())
    marker = mbs.AddMarker(MarkerBodyRigid(bodyNumber=body))
    joint = mbs.AddObject(ObjectJointSpherical(markerNumbers=[mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground)),
                                                              marker]))
    mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=body)),
                                     loadVector=[0.0, 0.0, -G]))
    mbs.AddLoad(LoadTorqueVector(markerNumber=marker, loadVector=[0.2, -0.1, 0.3], bodyFixed=True))
    return with_sensors(mbs, nodes=[(node, node_outputs)], bodies=[(body, BODY)], objects=[(joint, ("Force",))],
                        markers=[])


@pytest.mark.parametrize("index2", [False, True])
def test_top_gives_exudyns_sensors(index2):
    assert_exudyns_sensors(*solved_both_ways(*exudyn_top(), index2=index2))


@pytest.mark.parametrize("index2", [False, True])
def test_top_takes_exudyns_newton_iterations(index2):
    """With Exudyn's default tolerance (1e-8) and modified Newton: the Ḡ̇ φ̇ terms in the forward-difference
    Jacobian give Exudyn's work exactly (measured 4 Jacobians, 1151 / 1152 iterations both)."""
    ours, mbs = solved_both_ways(*exudyn_top(), index2=index2, relative_tolerance=1e-8)
    it = mbs.sys["dynamicSolver"].it
    assert ours.solver["jacobians"] == it.newtonJacobiCount
    assert ours.solver["newtonIterations"] == it.newtonStepsCount


def exudyn_connected_body():
    """An off-center body on Tait-Bryan angles held by a 6x6 spring-damper (BodyRigid marker) and a
    torsional spring (NodeRigid marker): the connectors' Jacobians through J_rot = [0 | G(φ)]."""
    from exudyn.itemInterface import (MarkerBodyRigid, MarkerNodeRigid, NodeRigidBodyRxyz,
                                      ObjectConnectorRigidBodySpringDamper, ObjectConnectorTorsionalSpringDamper,
                                      ObjectGround, ObjectRigidBody)
    mbs = exu.SystemContainer().AddSystem()
    node = mbs.AddNode(NodeRigidBodyRxyz(referenceCoordinates=[0.1, 0, 0, 0.2, 0.1, -0.3],
                                         initialVelocities=[0, 0.1, 0, 1, -2, 3]))
    body = mbs.AddObject(ObjectRigidBody(nodeNumber=node, mass=2.0, inertia=[0.1, 0.2, 0.3, 0.01, 0.02, 0.0],
                                         centerOfMass=[0.1, 0.05, 0.0]))
    ground = mbs.AddMarker(MarkerBodyRigid(bodyNumber=mbs.AddObject(ObjectGround())))
    stiffness = np.diag([100.0, 200.0, 300.0, 10.0, 20.0, 30.0])
    spring = mbs.AddObject(ObjectConnectorRigidBodySpringDamper(
        markerNumbers=[ground, mbs.AddMarker(MarkerBodyRigid(bodyNumber=body, localPosition=[0.2, 0, 0]))],
        stiffness=stiffness, damping=0.1 * stiffness))
    torsion = mbs.AddObject(ObjectConnectorTorsionalSpringDamper(
        markerNumbers=[ground, mbs.AddMarker(MarkerNodeRigid(nodeNumber=node))], stiffness=5.0, damping=0.1))
    return with_sensors(mbs, nodes=[(node, ("Position", "Rotation", "AngularVelocity"))], bodies=[],
                        objects=[(spring, ("ForceLocal", "TorqueLocal")), (torsion, ("TorqueLocal",))], markers=[])


@pytest.mark.parametrize("index2", [False, True])
def test_connectors_on_tait_bryan_markers_give_exudyns_sensors_and_work(index2):
    """Exudyn's values to round-off; with its default tolerance its Jacobians and iterations (measured
    3 and 1299 both)."""
    assert_exudyns_sensors(*solved_both_ways(*exudyn_connected_body(), index2=index2))
    ours, mbs = solved_both_ways(*exudyn_connected_body(), index2=index2, relative_tolerance=1e-8)
    it = mbs.sys["dynamicSolver"].it
    assert (ours.solver["jacobians"], ours.solver["newtonIterations"]) == (it.newtonJacobiCount, it.newtonStepsCount)
