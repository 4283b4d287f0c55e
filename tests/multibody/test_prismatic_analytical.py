"""JointPrismaticX against closed-form solutions. Tolerances: generalized-α is exact for
constant accelerations (quadratic motion), so those cases hold to round-off (1e-10); Newton
stops at relTol 1e-8, which bounds constraint residuals and reactions."""
import copy

import numpy as np
import pytest

import multibody


EYE_HT = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]


def slider_model(axis_ht, load=None, gravity=None, active=True, end=1.0, steps=100, sensors=None, mass=2.0,
                 solve=None):
    """A block of `mass` on a JointPrismaticX to ground whose joint frame is `axis_ht` on both sides."""
    doc = {
        "nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0, 1, 0, 0, 0]}],
        "objects": [{"objectType": "Ground"},
                    {"objectType": "RigidBody", "nodeNumber": 0, "mass": mass, "inertia": [0.01, 0.02, 0.03, 0, 0, 0]},
                    {"objectType": "JointPrismaticX", "name": "slider", "markerNumbers": [0, 1],
                     "activeConnector": active}],
        "markers": [{"markerType": "BodyRigid", "bodyNumber": 0, "localHT": axis_ht},
                    {"markerType": "BodyRigid", "bodyNumber": 1, "localHT": axis_ht},
                    {"markerType": "BodyMass", "bodyNumber": 1}],
        "loads": [],
        "sensors": sensors or [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position"}],
        "simulationSettings": {"timeIntegration": {"endTime": end, "numberOfSteps": steps}},
    }
    if load is not None:
        doc["loads"].append({"loadType": "ForceVector", "markerNumber": 1, "loadVector": load})
    if gravity is not None:
        doc["loads"].append({"loadType": "MassProportional", "markerNumber": 2, "loadVector": gravity})
    if solve:
        doc["solve"] = solve
    return doc


def rotation_to(axis):
    """A rotation whose first column is the unit vector `axis`."""
    x = np.asarray(axis, float) / np.linalg.norm(axis)
    helper = np.array([0, 0, 1.0]) if abs(x[2]) < 0.9 else np.array([1.0, 0, 0])
    y = np.cross(helper, x)
    y /= np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def test_mini_example_test_result_is_one(mini_model):
    res = multibody.simulate(mini_model)
    disp = res.sensors["body_displacement"].data
    mass = mini_model["objects"][1]["mass"]
    assert disp[-1, 0] == pytest.approx(1.0, abs=1e-12)
    assert abs(disp[-1, 1:].sum() * 2 * mass - 1.0) < 1e-10


def test_free_fall_with_inactive_joint():
    g = -9.81
    res = multibody.simulate(slider_model(EYE_HT, gravity=[0, g, 0], active=False,
                                          sensors=[{"sensorType": "Node", "nodeNumber": 0,
                                                    "outputVariableType": "Position"},
                                                   {"sensorType": "Object", "objectNumber": "slider",
                                                    "outputVariableType": "ForceLocal"}]))
    pos = res.sensors["sensor0"].data
    t = pos[:, 0]
    np.testing.assert_allclose(pos[:, 2], 0.5 * g * t ** 2, atol=1e-10)
    np.testing.assert_allclose(pos[:, [1, 3]], 0.0, atol=1e-12)
    assert np.abs(res.sensors["sensor1"].data[:, 1:]).max() == 0.0  # inactive: multipliers are zero


def test_constant_force_along_slanted_axis():
    axis = np.array([1.0, 1.0, 1.0]) / np.sqrt(3)
    rot = rotation_to(axis)
    ht = {"rotation": rot.tolist(), "translation": [0, 0, 0]}
    force, mass = np.array([3.0, -1.0, 2.0]), 2.0
    res = multibody.simulate(slider_model(ht, load=force.tolist(), mass=mass, sensors=[
        {"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position"},
        {"sensorType": "Object", "objectNumber": "slider", "outputVariableType": "ForceLocal"},
        {"sensorType": "Object", "objectNumber": "slider", "outputVariableType": "DisplacementLocal"}]))
    pos = res.sensors["sensor0"].data
    t = pos[:, 0]
    s = (force @ axis) / (2 * mass) * t ** 2
    np.testing.assert_allclose(pos[:, 1:], s[:, None] * axis[None, :], atol=1e-10)
    # the joint carries the force components across the axis: ForceLocal = minus the constraint
    # force on marker 1's body, in J0 axes, i.e. the load's y and z components in J0 axes
    local = rot.T @ force
    fl = res.sensors["sensor1"].data
    np.testing.assert_allclose(fl[:, 2:], np.tile(local[1:], (len(fl), 1)), atol=1e-9)
    np.testing.assert_allclose(res.sensors["sensor2"].data[:, 1], s, atol=1e-10)


@pytest.mark.parametrize("solve, sign", [({"type": "Dynamic"}, -1.0), ({"type": "Static"}, 1.0)])
def test_hanging_body_reaction_equals_weight(solve, sign):
    """Joint along global x, gravity along -y: the joint holds m g. Exudyn reports it with
    opposite signs in dynamics (-m g) and statics (+m g); we follow it."""
    mass, g = 2.0, 9.81
    doc = slider_model(EYE_HT, gravity=[0, -g, 0], mass=mass, solve=solve, sensors=[
        {"sensorType": "Object", "objectNumber": "slider", "outputVariableType": "ForceLocal"}])
    if solve["type"] == "Static":  # the slide direction needs stiffness in statics
        doc["objects"].append({"objectType": "ConnectorCartesianSpringDamper", "markerNumbers": [0, 1],
                               "stiffness": [100.0, 0, 0]})
    fl = multibody.simulate(doc).sensors["sensor0"].data
    rows = fl[1:] if solve["type"] == "Static" else fl  # static: first row is the unloaded state
    np.testing.assert_allclose(rows[:, 2], sign * mass * g, rtol=1e-9)
    np.testing.assert_allclose(rows[:, [1, 3]], 0.0, atol=1e-9)


def test_bead_on_spinning_rod_follows_cosh():
    """A bead slides freely along a rod that spins about z at ω; with a rotor inertia 1e5 times
    the bead's m r², ω stays constant to ~1e-6 and the radius grows as r0 cosh(ωt) (the joint
    frame moves with the rod)."""
    omega, r0 = 2.0, 0.1
    half = omega / 2  # Euler-parameter rate for a rotation about z: θ̇3 = ω/2 at θ = (1,0,0,0)
    doc = {
        "nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0, 1, 0, 0, 0],
                   "initialVelocities": [0, 0, 0, 0, 0, 0, half]},
                  {"nodeType": "RigidBodyEP", "referenceCoordinates": [r0, 0, 0, 1, 0, 0, 0],
                   "initialVelocities": [0, r0 * omega, 0, 0, 0, 0, half]}],
        "objects": [{"objectType": "Ground"},
                    {"objectType": "RigidBody", "name": "rod", "nodeNumber": 0, "mass": 1.0,
                     "inertia": [1e5, 1e5, 1e5, 0, 0, 0]},
                    {"objectType": "RigidBody", "name": "bead", "nodeNumber": 1, "mass": 1.0,
                     "inertia": [1e-3, 1e-3, 1e-3, 0, 0, 0]},
                    {"objectType": "JointRevoluteZ", "markerNumbers": [0, 1]},
                    {"objectType": "JointPrismaticX", "name": "slide", "markerNumbers": [2, 3]}],
        "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1},
                    {"markerType": "BodyRigid", "bodyNumber": 1},
                    {"markerType": "BodyRigid", "bodyNumber": 2}],
        "sensors": [{"sensorType": "Object", "objectNumber": "slide", "outputVariableType": "DisplacementLocal"},
                    {"sensorType": "Object", "objectNumber": "slide", "outputVariableType": "Rotation"}],
        "simulationSettings": {"timeIntegration": {"endTime": 1.0, "numberOfSteps": 2000},
                               "solution": {"sensors": {"writePeriod": 0.05}}},
    }
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    d = res.sensors["sensor0"].data
    r = r0 * np.cosh(omega * d[:, 0])
    np.testing.assert_allclose(d[:, 1], r, rtol=2e-5)  # second-order method, h = 5e-4
    # the constrained directions hold at Newton tolerance at every written step
    assert np.abs(d[:, 2:]).max() < 1e-10
    assert np.abs(res.sensors["sensor1"].data[:, 1:]).max() < 1e-10


def test_all_ten_joint_outputs_on_the_mini_example(mini_model):
    doc = copy.deepcopy(mini_model)
    outputs = ["Position", "Velocity", "DisplacementLocal", "VelocityLocal", "Rotation", "AngularVelocityLocal",
               "ForceLocal", "TorqueLocal", "HomogeneousTransformation", "HomogeneousTransformationLocal"]
    doc["sensors"] = [{"sensorType": "Object", "objectNumber": 2, "outputVariableType": f"OutputVariableType.{o}",
                       "name": o} for o in outputs]
    res = multibody.simulate(doc)
    last = {o: res.sensors[o].data[-1] for o in outputs}
    t = last["Position"][0]
    y = 0.5 * t ** 2  # F_y / (2 m) t², m = 1
    # markerNumbers [1, 0]: marker 0 of the joint is on ground, marker 1 on the block; the joint
    # x axis is global y, so the block's travel shows as +x in joint axes
    np.testing.assert_allclose(last["Position"][1:], 0, atol=1e-15)
    np.testing.assert_allclose(last["Velocity"][1:], 0, atol=1e-15)
    np.testing.assert_allclose(last["DisplacementLocal"][1:], [y, 0, 0], atol=1e-10)
    np.testing.assert_allclose(last["VelocityLocal"][1:], [t, 0, 0], atol=1e-10)
    np.testing.assert_allclose(last["Rotation"][1:], 0, atol=1e-12)
    np.testing.assert_allclose(last["AngularVelocityLocal"][1:], 0, atol=1e-12)
    # load [1,1,1]: across the axis the joint carries F·y0 = -1 and F·z0 = 1
    np.testing.assert_allclose(last["ForceLocal"][1:], [0, -1, 1], atol=1e-9)
    np.testing.assert_allclose(last["TorqueLocal"][1:], 0, atol=1e-9)
    H = last["HomogeneousTransformation"][1:].reshape(4, 4)
    np.testing.assert_allclose(H[:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(H[:3, 3], 0, atol=1e-15)
    np.testing.assert_allclose(H[3], [0, 0, 0, 1])
    HL = last["HomogeneousTransformationLocal"][1:].reshape(4, 4)
    np.testing.assert_allclose(HL[:3, :3], np.eye(3), atol=1e-12)
    np.testing.assert_allclose(HL[:3, 3], [y, 0, 0], atol=1e-10)
    assert res.sensors["HomogeneousTransformation"].columns == ["time"] + [f"H{r}{c}" for r in range(4) for c in range(4)]


def test_index2_trapezoidal_matches_closed_form_and_keeps_velocity_constraints():
    axis = np.array([1.0, 2.0, 0.5])
    ht = {"rotation": rotation_to(axis).tolist(), "translation": [0, 0, 0]}
    force = np.array([1.0, 0.0, -2.0])
    doc = slider_model(ht, load=force.tolist(), solve={"type": "Dynamic", "solverType": "TrapezoidalIndex2"},
                       sensors=[{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position"}])
    pos = multibody.simulate(doc).sensors["sensor0"].data
    a = axis / np.linalg.norm(axis)
    s = (force @ a) / 4.0 * pos[:, 0] ** 2
    np.testing.assert_allclose(pos[:, 1:], s[:, None] * a, atol=1e-10)
