"""Planar bodies (issue 13): NodeRigidBody2D, ObjectRigidBody2D, JointRevolute2D, JointPrismatic2D, their
markers, loads and output variables, against formulas and against Exudyn 1.13.6 on the same model."""
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
    doc["objects"].append({"objectType": "RigidBody2D", "name": "offCenter", "nodeNumber": 0, "mass": 1.0,
                           "centerOfMass": [0.1, 0.0]})
    with pytest.raises(ModelInvalid) as err:
        load_model(doc)
    problems = {p.path: p for p in err.value.problems}
    joint = problems["objects[2].markerNumbers[1]"]
    assert joint.item == "slide" and "a BodyPosition" in joint.message and "rigid-body markers" in joint.message
    node = problems["objects[3].nodeNumber"]
    assert node.item == "wrongNode" and "a RigidBody2D" in node.message and "RigidBodyEP" in node.message
    assert "center of mass" in problems["objects[4].centerOfMass"].message


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
                                      ObjectGround, ObjectJointPrismatic2D, ObjectJointRevolute2D, ObjectRigidBody2D,
                                      SensorBody, SensorMarker, SensorNode, SensorObject)
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
    out = exu.OutputVariableType
    for v in NODE:
        mbs.AddSensor(SensorNode(nodeNumber=n0, outputVariableType=getattr(out, v), storeInternal=True))
    for v in BODY:
        mbs.AddSensor(SensorBody(bodyNumber=b1, localPosition=[0.1, 0.05, 0], outputVariableType=getattr(out, v),
                                 storeInternal=True))
    for obj, variables in ((pivot, REVOLUTE), (slide, PRISMATIC)):
        for v in variables:
            mbs.AddSensor(SensorObject(objectNumber=obj, outputVariableType=getattr(out, v), storeInternal=True))
    for marker, variables in ((rigid0, RIGID_MARKER), (coordinate, ("Coordinates", "Coordinates_t"))):
        for v in variables:
            mbs.AddSensor(SensorMarker(markerNumber=marker, outputVariableType=getattr(out, v), storeInternal=True))
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.numberOfSteps = 200
    settings.timeIntegration.endTime = 1.0
    settings.timeIntegration.newton.relativeTolerance = 1e-12  # both converged to round-off, not to Newton's 1e-8
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False  # tests own their data: no file in the working directory
    return mbs, settings


def test_planar_mechanism_gives_exudyns_sensors():
    from mbserve.exudyn import export
    mbs, settings = exudyn_model()
    ours = multibody.simulate(export(mbs, settings))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings)
    assert len(ours.sensors) == mbs.systemData.NumberOfSensors()
    for i, (name, series) in enumerate(ours.sensors.items()):
        theirs = np.asarray(mbs.GetSensorStoredData(i))
        assert theirs.shape == series.data.shape, name
        # the same scheme, steps and Newton iterations: Exudyn's solution to round-off (accelerations
        # and multipliers, the unknowns Newton solves for, to its 1e-12 of their size)
        var = series.outputVariableType
        tolerance = 1e-9 if "Acceleration" in var or "Force" in var else 1e-10
        assert np.abs(series.data - theirs).max() <= tolerance * (1.0 + np.abs(theirs).max()), (name, var)
