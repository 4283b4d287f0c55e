"""Planar bodies (issue 13): NodeRigidBody2D, ObjectRigidBody2D (also with its center of mass away from
the node), NodePoint2D, ObjectMassPoint2D, JointRevolute2D, JointPrismatic2D, their markers, loads and
output variables, against formulas and against Exudyn 1.13.6 on the same models."""
import math

import numpy as np
import pytest

import multibody
from multibody.model import load_model
from multibody.values import ModelInvalid

G = 9.81


def pendulum(phi0: float, steps: int, end: float, length: float = 0.8, mass: float = 2.0, inertia: float = 0.1,
             sensors=("Rotation",)) -> dict:
    """A planar rigid pendulum: its center of mass at `length` below the pivot (a JointRevolute2D
    between the ground and a BodyPosition marker on the body), turned by phi0, under gravity."""
    return {
        "nodes": [{"nodeType": "RigidBody2D", "name": "node",
                   "referenceCoordinates": [length * math.sin(phi0), -length * math.cos(phi0), phi0]}],
        "objects": [{"objectType": "Ground"},
                    {"objectType": "RigidBody2D", "name": "body", "nodeNumber": 0, "mass": mass, "inertia": inertia},
                    {"objectType": "JointRevolute2D", "name": "pivot", "markerNumbers": [0, 1]}],
        "markers": [{"markerType": "BodyPosition", "bodyNumber": 0, "localPosition": [0, 0, 0]},
                    {"markerType": "BodyPosition", "bodyNumber": 1, "localPosition": [0, length, 0]},
                    {"markerType": "BodyMass", "bodyNumber": 1}],
        "loads": [{"loadType": "MassProportional", "markerNumber": 2, "loadVector": [0, -G, 0]}],
        "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": v, "name": v} for v in sensors],
        "simulationSettings": {"timeIntegration": {"endTime": end, "numberOfSteps": steps}},
    }


def test_pendulum_swings_with_its_small_amplitude_period():
    """T = 2π √((J + m L²) / (m g L)) for a small amplitude (the finite-amplitude correction
    φ0²/16 is 6e-6 here)."""
    length, mass, inertia = 0.8, 2.0, 0.1
    period = 2 * math.pi * math.sqrt((inertia + mass * length ** 2) / (mass * G * length))
    res = multibody.simulate(pendulum(0.01, 5000, 2.5 * period, length, mass, inertia))
    assert res.status == "succeeded", res.error
    t, phi = res.sensors["Rotation"].data[:, 0], res.sensors["Rotation"].data[:, 3]
    # downward zero crossings of φ (linear interpolation): a period apart
    k = np.nonzero((phi[:-1] > 0) & (phi[1:] <= 0))[0]
    crossings = t[k] + (t[k + 1] - t[k]) * phi[k] / (phi[k] - phi[k + 1])
    assert len(crossings) >= 2
    assert abs(crossings[1] - crossings[0] - period) < 2e-4 * period
    assert abs(phi.max() - 0.01) < 1e-4  # the node's Rotation is the total angle φ (with the reference)


def slider(alpha: float, v0: float, steps: int = 100, end: float = 1.0, mass: float = 3.0) -> dict:
    """A block on a JointPrismatic2D along a ground axis at angle alpha, under gravity, started
    with speed v0 along the axis."""
    axis = [math.cos(alpha), math.sin(alpha), 0.0]
    return {
        "nodes": [{"nodeType": "RigidBody2D", "referenceCoordinates": [0.0, 0.0, alpha],
                   "initialVelocities": [v0 * axis[0], v0 * axis[1], 0.0]}],
        "objects": [{"objectType": "Ground"},
                    {"objectType": "RigidBody2D", "nodeNumber": 0, "mass": mass, "inertia": 0.2},
                    {"objectType": "JointPrismatic2D", "name": "slide", "markerNumbers": [0, 1], "axisMarker0": axis,
                     "normalMarker1": [0.0, 1.0, 0.0]}],
        "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "NodeRigid", "nodeNumber": 0},
                    {"markerType": "BodyMass", "bodyNumber": 1}],
        "loads": [{"loadType": "MassProportional", "markerNumber": 2, "loadVector": [0, -G, 0]}],
        "sensors": [{"sensorType": "Object", "objectNumber": 2, "outputVariableType": v, "name": v}
                    for v in ("Distance", "ForceLocal", "Rotation")],
        "simulationSettings": {"timeIntegration": {"endTime": end, "numberOfSteps": steps}},
    }


def test_slider_on_an_inclined_prismatic_joint_moves_as_the_formula():
    """s = v0 t - ½ g sin α t² along the axis (Newmark integrates a constant acceleration exactly);
    the transverse force holds m g cos α; the body keeps its angle α to the ground."""
    alpha, v0, mass = 0.5, 1.2, 3.0
    res = multibody.simulate(slider(alpha, v0, mass=mass))
    assert res.status == "succeeded", res.error
    t, s = res.sensors["Distance"].data.T
    assert np.abs(s - (v0 * t - 0.5 * G * math.sin(alpha) * t ** 2)).max() < 1e-9
    force = res.sensors["ForceLocal"].data[1:, 1:]
    assert np.abs(np.linalg.norm(force, axis=1) - mass * G * math.cos(alpha)).max() < 1e-8
    assert np.abs(res.sensors["Rotation"].data[:, 1] - alpha).max() < 1e-12  # body turned by α, held


def test_wrong_marker_kinds_on_planar_items_name_the_item_and_the_path():
    doc = slider(0.3, 0.0)
    doc["markers"][1] = {"markerType": "BodyPosition", "bodyNumber": 1}  # the prismatic joint needs a rigid marker
    doc["objects"].append({"objectType": "RigidBody", "name": "wrongNode", "nodeNumber": 0, "mass": 1.0})
    doc["objects"].append({"objectType": "MassPoint2D", "name": "pointOnRigidNode", "nodeNumber": 0, "mass": 1.0})
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problems = {p.path: p for p in err.value.problems}
    joint = problems["objects[2].markerNumbers[1]"]
    assert joint.item == "slide" and "a BodyPosition" in joint.message and "rigid-body markers" in joint.message
    node = problems["objects[3].nodeNumber"]
    assert node.item == "wrongNode" and "a RigidBody2D" in node.message and "RigidBodyEP" in node.message
    point = problems["objects[4].nodeNumber"]
    assert point.item == "pointOnRigidNode" and "a Point2D node" in point.message


def off_center_pendulum(phi0: float, steps: int, end: float, com=(0.0, -0.6), mass: float = 2.0,
                        inertia: float = 0.9) -> dict:
    """A RigidBody2D whose node is the pivot (a JointRevolute2D to the ground at the node) and whose
    center of mass is `com` away from it (body axes), turned by phi0, under gravity (at the center
    of mass); `inertia` is about the node."""
    doc = pendulum(phi0, steps, end, sensors=("Rotation", "Coordinates_t"))
    doc["nodes"][0]["referenceCoordinates"] = [0.0, 0.0, phi0]
    doc["objects"][1].update(mass=mass, inertia=inertia, centerOfMass=list(com))
    doc["markers"][1]["localPosition"] = [0, 0, 0]
    doc["sensors"].append({"sensorType": "Object", "objectNumber": 2, "outputVariableType": "Force", "name": "Force"})
    return doc


def test_off_center_pendulum_swings_with_the_period_about_its_node():
    """T = 2π √(J_node / (m g |b|)) for a small amplitude, J about the node (the pivot), b the center
    of mass; at rest hanging down the pin carries the weight m g."""
    mass, inertia, com = 2.0, 0.9, (0.2, -0.6)
    arm = math.hypot(*com)
    period = 2 * math.pi * math.sqrt(inertia / (mass * G * arm))
    hanging = math.atan2(-com[0], -com[1])  # φ at which the center of mass is straight below the pivot
    res = multibody.simulate(off_center_pendulum(hanging + 0.01, 5000, 2.5 * period, com, mass, inertia))
    assert res.status == "succeeded", res.error
    t, phi = res.sensors["Rotation"].data[:, 0], res.sensors["Rotation"].data[:, 3] - hanging
    k = np.nonzero((phi[:-1] > 0) & (phi[1:] <= 0))[0]
    crossings = t[k] + (t[k + 1] - t[k]) * phi[k] / (phi[k] - phi[k + 1])
    assert len(crossings) >= 2
    assert abs(crossings[1] - crossings[0] - period) < 2e-4 * period
    assert abs(phi.max() - 0.01) < 1e-4
    rest = multibody.simulate(off_center_pendulum(hanging, 10, 0.1, com, mass, inertia))
    force = rest.sensors["Force"].data[:, 1:]
    assert np.abs(force - [0.0, -mass * G, 0.0]).max() < 1e-9  # λ = f: C_qᵀλ balances the weight
    assert np.abs(rest.sensors["Rotation"].data[:, 3] - hanging).max() < 1e-12


def test_free_off_center_body_spins_about_its_resting_center_of_mass():
    """No force: the center of mass stays where it is and φ̇ stays ω, so the node circles it,
    p(t) = c - A(φ0 + ω t) b; started with the node velocity -ω e_z × (A b) that keeps c at rest.
    Only the coupling m ∂(A b)/∂φ and the centrifugal force m φ̇² A b keep it there."""
    b, phi0, omega = np.array([0.3, -0.1]), 0.4, 2.5
    rot = lambda phi: np.array([[math.cos(phi), -math.sin(phi)], [math.sin(phi), math.cos(phi)]])  # noqa: E731
    Ab = rot(phi0) @ b
    doc = {"nodes": [{"nodeType": "RigidBody2D", "referenceCoordinates": [0.0, 0.0, phi0],
                      "initialVelocities": [omega * Ab[1], -omega * Ab[0], omega]}],
           "objects": [{"objectType": "RigidBody2D", "nodeNumber": 0, "mass": 1.5, "inertia": 0.2,
                        "centerOfMass": b.tolist()}],
           "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": v, "name": v}
                       for v in ("Position", "Coordinates_t")],
           "simulationSettings": {"timeIntegration": {"endTime": 2.0, "numberOfSteps": 20000}}}
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    t = res.sensors["Position"].data[:, 0]
    expected = Ab[None, :] - np.einsum("kij,j->ki", np.array([rot(phi0 + omega * x) for x in t]), b)
    assert np.abs(res.sensors["Position"].data[:, 1:3] - expected).max() < 1e-6
    assert np.abs(res.sensors["Coordinates_t"].data[:, 3] - omega).max() < 1e-6  # generalized-α's damping: 1e-7


def mass_point_2d(solve: dict, steps: int) -> dict:
    """A MassPoint2D on a Cartesian spring to the ground (the same stiffness in x and y), under
    gravity, started away from the spring's rest position."""
    return {"nodes": [{"nodeType": "Point2D", "referenceCoordinates": [0.0, 0.0], "initialCoordinates": [0.1, 0.0],
                       "initialVelocities": [0.0, 0.3]}],
            "objects": [{"objectType": "Ground"}, {"objectType": "MassPoint2D", "nodeNumber": 0, "mass": 0.5},
                        {"objectType": "ConnectorCartesianSpringDamper", "markerNumbers": [0, 1],
                         "stiffness": [20.0, 20.0, 20.0]}],
            "markers": [{"markerType": "BodyPosition", "bodyNumber": 0},
                        {"markerType": "NodePosition", "nodeNumber": 0}, {"markerType": "BodyMass", "bodyNumber": 1}],
            "loads": [{"loadType": "MassProportional", "markerNumber": 2, "loadVector": [0.0, -G, 0.0]}],
            "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position", "name": "p"}],
            "simulationSettings": {"timeIntegration": {"endTime": 1.0, "numberOfSteps": steps}},
            "solve": solve}


@pytest.mark.parametrize("solver,steps,tolerance", [("GeneralizedAlpha", 10000, 2e-6), ("RK44", 1000, 1e-9)])
def test_mass_point_2d_on_a_spring_under_gravity_oscillates_as_the_formula(solver, steps, tolerance):
    """x = x0 cos ωt, y = -(g/ω²)(1 - cos ωt) + (v0/ω) sin ωt with ω = √(k/m); z stays 0."""
    res = multibody.simulate(mass_point_2d({"type": "Dynamic", "solverType": solver}, steps))
    assert res.status == "succeeded", res.error
    t, x, y, z = res.sensors["p"].data.T
    w = math.sqrt(20.0 / 0.5)
    assert np.abs(x - 0.1 * np.cos(w * t)).max() < tolerance
    assert np.abs(y - (-(G / w ** 2) * (1 - np.cos(w * t)) + 0.3 / w * np.sin(w * t))).max() < tolerance
    assert not z.any()


def test_explicit_solvers_refuse_an_off_center_planar_body_by_name():
    doc = off_center_pendulum(0.1, 10, 0.1)
    doc["solve"] = {"type": "Dynamic", "solverType": "RK44"}
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problem = next(p for p in err.value.problems if p.path == "solve.solverType" and "centerOfMass" in p.message)
    assert "body" in problem.message and "GeneralizedAlpha" in problem.message


# ------------------------------------------------------------------------------- against Exudyn
exu = pytest.importorskip("exudyn")

NODE = ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t", "Coordinates_tt",
        "CoordinatesTotal", "RotationMatrix", "Rotation", "AngularVelocity", "AngularVelocityLocal",
        "AngularAcceleration", "HomogeneousTransformation")
BODY = ("Position", "Displacement", "Velocity", "VelocityLocal", "Acceleration", "AccelerationLocal",
        "RotationMatrix", "Rotation", "AngularVelocity", "AngularVelocityLocal", "AngularAcceleration",
        "AngularAccelerationLocal", "HomogeneousTransformation")
REVOLUTE = ("Position", "Displacement", "Velocity", "Force")
PRISMATIC = ("Distance", "Position", "DisplacementLocal", "Velocity", "Rotation", "ForceLocal",
             "HomogeneousTransformation", "HomogeneousTransformationLocal")
RIGID_MARKER = ("Position", "Velocity", "RotationMatrix", "Rotation", "AngularVelocity", "AngularVelocityLocal")


def exudyn_model():
    """A pendulum (Revolute2D at its tip) carrying a slider (Prismatic2D along the pendulum, a spring
    to the tip), gravity, a torque, a body-fixed force; a sensor for every output variable."""
    from exudyn.itemInterface import (LoadForceVector, LoadMassProportional, LoadTorqueVector, MarkerBodyMass,
                                      MarkerBodyPosition, MarkerBodyRigid, MarkerNodeCoordinate,
                                      MarkerNodePosition, MarkerNodeRigid, NodeRigidBody2D, ObjectConnectorSpringDamper,
                                      ObjectGround, ObjectJointPrismatic2D, ObjectJointRevolute2D, ObjectRigidBody2D)
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    length, phi = 0.8, 0.4
    ground = mbs.AddObject(ObjectGround())
    n0 = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[length * math.sin(phi), -length * math.cos(phi), phi],
                                     initialVelocities=[0.3 * length * math.cos(phi), 0.3 * length * math.sin(phi),
                                                        0.3]))
    b0 = mbs.AddObject(ObjectRigidBody2D(mass=2.0, inertia=0.1, nodeNumber=n0))
    pivot = mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[0, 0, 0])),
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=b0, localPosition=[0, length, 0]))]))
    n1 = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[0.5 * length * math.sin(phi),
                                                           -0.5 * length * math.cos(phi), phi]))
    b1 = mbs.AddObject(ObjectRigidBody2D(mass=0.5, inertia=0.02, nodeNumber=n1))
    rigid0 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=b0, localPosition=[0, 0, 0]))
    slide = mbs.AddObject(ObjectJointPrismatic2D(markerNumbers=[rigid0, mbs.AddMarker(MarkerNodeRigid(nodeNumber=n1))],
                                                 axisMarker0=[0, 1, 0], normalMarker1=[1, 0, 0]))
    tip = mbs.AddMarker(MarkerBodyPosition(bodyNumber=b0, localPosition=[0, length, 0]))
    mbs.AddObject(ObjectConnectorSpringDamper(markerNumbers=[tip, mbs.AddMarker(MarkerNodePosition(nodeNumber=n1))],
                                              stiffness=50.0, damping=0.5, referenceLength=0.4))
    for body in (b0, b1):
        mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=body)),
                                         loadVector=[0, -G, 0]))
    mbs.AddLoad(LoadTorqueVector(markerNumber=rigid0, loadVector=[0, 0, 0.2]))
    mbs.AddLoad(LoadForceVector(markerNumber=rigid0, loadVector=[0.3, 0, 0], bodyFixed=True))
    coordinate = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n0, coordinate=2))
    return with_sensors(mbs, nodes=[(n0, NODE)], bodies=[(b1, BODY)], objects=[(pivot, REVOLUTE), (slide, PRISMATIC)],
                        markers=[(rigid0, RIGID_MARKER), (coordinate, ("Coordinates", "Coordinates_t"))])


def with_sensors(mbs, nodes, bodies, objects, markers):
    """mbs with a stored sensor per (item, its output variables) of each list (body sensors at a
    point off the node), assembled, and the settings of a 200-step run."""
    from exudyn.itemInterface import SensorBody, SensorMarker, SensorNode, SensorObject
    out = exu.OutputVariableType
    for sensor, key, items, extra in ((SensorNode, "nodeNumber", nodes, {}),
                                      (SensorBody, "bodyNumber", bodies, {"localPosition": [0.1, 0.05, 0]}),
                                      (SensorObject, "objectNumber", objects, {}),
                                      (SensorMarker, "markerNumber", markers, {})):
        for item, variables in items:
            for v in variables:
                mbs.AddSensor(sensor(**{key: item}, outputVariableType=getattr(out, v), storeInternal=True, **extra))
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.numberOfSteps = 200
    settings.timeIntegration.endTime = 1.0
    settings.timeIntegration.newton.relativeTolerance = 1e-12  # both converged to round-off, not to Newton's 1e-8
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False  # tests own their data: no file in the working directory
    return mbs, settings


POINT_NODE = ("Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t", "Coordinates_tt",
              "CoordinatesTotal", "RotationMatrix", "Rotation", "AngularVelocity", "AngularVelocityLocal",
              "HomogeneousTransformation")
POINT_BODY = ("Position", "Displacement", "Velocity", "Acceleration", "RotationMatrix", "Rotation", "AngularVelocity",
              "AngularVelocityLocal", "HomogeneousTransformation")


def exudyn_off_center_model():
    """A pendulum whose center of mass is off its node (pinned by a JointRevolute2D away from both),
    with a torque, and a MassPoint2D hanging from it on a spring-damper, pulled by a ForceVector on
    its node and a Coordinate load; gravity on both; a sensor for every output variable of the
    Point2D node, the MassPoint2D, the off-center body and its node, and the markers. The pendulum
    starts at rest: with the pin's velocity nonzero, Exudyn's t0 accelerations and λ carry the
    round-off of its forward-difference ∂(C_q v0)/∂q v0 (steps of 1e-9 at q = 0), 1e-8 here."""
    from exudyn.itemInterface import (LoadCoordinate, LoadForceVector, LoadMassProportional, LoadTorqueVector,
                                      MarkerBodyMass, MarkerBodyPosition, MarkerBodyRigid, MarkerNodeCoordinate,
                                      MarkerNodePosition, NodePoint2D, NodeRigidBody2D, ObjectConnectorSpringDamper,
                                      ObjectGround, ObjectJointRevolute2D, ObjectMassPoint2D, ObjectRigidBody2D)
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    phi, pin, node = 0.3, np.array([-0.2, 0.1]), np.array([0.1, -0.4])  # the pin in body axes
    pin_global = node + np.array([[math.cos(phi), -math.sin(phi)], [math.sin(phi), math.cos(phi)]]) @ pin
    ground = mbs.AddObject(ObjectGround())
    n0 = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[*node, phi]))
    b0 = mbs.AddObject(ObjectRigidBody2D(mass=1.5, inertia=0.3, centerOfMass=[0.25, -0.1], nodeNumber=n0))
    pivot = mbs.AddObject(ObjectJointRevolute2D(markerNumbers=[
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground, localPosition=[*pin_global, 0])),
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=b0, localPosition=[*pin, 0]))]))
    n1 = mbs.AddNode(NodePoint2D(referenceCoordinates=[0.4, -0.8], initialVelocities=[0.2, -0.1]))
    b1 = mbs.AddObject(ObjectMassPoint2D(mass=0.4, nodeNumber=n1))
    spring = mbs.AddObject(ObjectConnectorSpringDamper(markerNumbers=[
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=b0, localPosition=[0.3, -0.2, 0])),
        mbs.AddMarker(MarkerBodyPosition(bodyNumber=b1, localPosition=[0, 0, 0]))],
        stiffness=80.0, damping=0.3, referenceLength=0.25))
    for body in (b0, b1):
        mbs.AddLoad(LoadMassProportional(markerNumber=mbs.AddMarker(MarkerBodyMass(bodyNumber=body)),
                                         loadVector=[0, -G, 0]))
    rigid0 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=b0, localPosition=[0.1, 0, 0]))
    mbs.AddLoad(LoadTorqueVector(markerNumber=rigid0, loadVector=[0, 0, 0.4]))
    point = mbs.AddMarker(MarkerNodePosition(nodeNumber=n1))
    mbs.AddLoad(LoadForceVector(markerNumber=point, loadVector=[0.5, 0.2, 0]))
    coordinate = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=n1, coordinate=1))
    mbs.AddLoad(LoadCoordinate(markerNumber=coordinate, load=-0.3))
    return with_sensors(mbs, nodes=[(n1, POINT_NODE), (n0, NODE)], bodies=[(b1, POINT_BODY), (b0, BODY)],
                        objects=[(pivot, REVOLUTE), (spring, ("Force", "Distance", "Velocity"))],
                        markers=[(point, ("Position", "Velocity")), (coordinate, ("Coordinates", "Coordinates_t"))])


@pytest.mark.parametrize("build", [exudyn_model, exudyn_off_center_model])
def test_planar_mechanism_gives_exudyns_sensors(build):
    from mbserve.exudyn import export
    mbs, settings = build()
    ours = multibody.simulate(export(mbs, settings))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings)
    assert_exudyns_sensors(ours, mbs)


def solved_both_ways(mbs, settings, index2: bool, relative_tolerance: float | None = None):
    """(mbserve's results of mbs exported, mbs solved by Exudyn) in one scheme: index 2 with Newmark
    (Exudyn's index 2 needs it) or index 3; Newton's relative tolerance if given."""
    from mbserve.exudyn import export
    settings.timeIntegration.generalizedAlpha.useIndex2Constraints = index2
    settings.timeIntegration.generalizedAlpha.useNewmark = index2
    if relative_tolerance is not None:
        settings.timeIntegration.newton.relativeTolerance = relative_tolerance
    ours = multibody.simulate(export(mbs, settings))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings, storeSolver=True)
    return ours, mbs


def assert_exudyns_sensors(ours, mbs) -> None:
    """mbserve's sensors are those Exudyn stored in mbs, in order: with the same scheme, steps and
    Newton iterations Exudyn's solution to round-off (accelerations and multipliers, the unknowns
    Newton solves for, to its 1e-12 of their size)."""
    assert len(ours.sensors) == mbs.systemData.NumberOfSensors()
    for i, (name, series) in enumerate(ours.sensors.items()):
        theirs = np.asarray(mbs.GetSensorStoredData(i))
        assert theirs.shape == series.data.shape, name
        var = series.outputVariableType
        tolerance = 1e-9 if "Acceleration" in var or "Force" in var or var == "Coordinates_tt" else 1e-10
        assert np.abs(series.data - theirs).max() <= tolerance * (1.0 + np.abs(theirs).max()), (name, var)


def test_off_center_body_takes_exudyns_newton_iterations():
    """With Exudyn's default (modified) Newton the same work: the Jacobian of the centrifugal force by
    Exudyn's forward differences in φ and φ̇ (kernels.rigid_quadratic_velocity_jacobians) gives the
    same Jacobian count and Newton iterations within 0.1 %."""
    from mbserve.exudyn import export
    mbs, settings = exudyn_off_center_model()
    settings.timeIntegration.newton.relativeTolerance = 1e-8  # Exudyn's default
    ours = multibody.simulate(export(mbs, settings))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings, storeSolver=True)
    it = mbs.sys["dynamicSolver"].it
    assert ours.solver["jacobians"] == it.newtonJacobiCount
    assert abs(ours.solver["newtonIterations"] - it.newtonStepsCount) <= 1 + 0.001 * it.newtonStepsCount
