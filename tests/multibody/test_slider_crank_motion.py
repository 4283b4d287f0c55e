"""A slider-crank driven by a Steady motion on the crank's JointRevoluteZ (SPEC section 2).

Crank r on a revolute to ground, rod l on a revolute to the crank tip, the rod's end held to
the slider in x and y (JointSpherical, constrainedAxes [1,1,0]), the slider on a
JointPrismaticX along global x. Closed form: x(φ) = r cos φ + sqrt(l² - r² sin² φ), φ = ωt.
With light bodies (1e-4 kg) and a 10 N load on the slider the drive torque is the
virtual-work one, τ = -F dx/dφ, up to inertial terms of order m r ω² ≈ 1e-5 N·m.
"""
import numpy as np

import multibody

R_CRANK, L_ROD, OMEGA, F = 0.1, 0.3, 1.0, -10.0
LIGHT = {"mass": 1e-4, "inertia": [1e-6, 1e-6, 1e-6, 0, 0, 0]}


def slider_crank():
    body = lambda name, node: {"objectType": "RigidBody", "name": name, "nodeNumber": node, **LIGHT}  # noqa: E731
    node = lambda x: {"nodeType": "RigidBodyEP", "referenceCoordinates": [x, 0, 0, 1, 0, 0, 0]}  # noqa: E731
    rigid = lambda b, p: {"markerType": "BodyRigid", "bodyNumber": b, "localPosition": p}  # noqa: E731
    return {
        "nodes": [node(0.0), node(R_CRANK + L_ROD / 2), node(R_CRANK + L_ROD)],
        "objects": [{"objectType": "Ground", "name": "ground"}, body("crank", 0), body("rod", 1), body("slider", 2),
                    {"objectType": "JointRevoluteZ", "name": "crankPivot", "markerNumbers": [0, 1]},
                    {"objectType": "JointRevoluteZ", "name": "crankPin", "markerNumbers": [2, 3]},
                    {"objectType": "JointSpherical", "name": "wristPin", "markerNumbers": [4, 5],
                     "constrainedAxes": [1, 1, 0]},
                    {"objectType": "JointPrismaticX", "name": "guide", "markerNumbers": [6, 7]}],
        "markers": [rigid("ground", [0, 0, 0]), rigid("crank", [0, 0, 0]),
                    rigid("crank", [R_CRANK, 0, 0]), rigid("rod", [-L_ROD / 2, 0, 0]),
                    rigid("rod", [L_ROD / 2, 0, 0]), rigid("slider", [0, 0, 0]),
                    rigid("ground", [0, 0, 0]), rigid("slider", [0, 0, 0])],
        "loads": [{"loadType": "ForceVector", "markerNumber": 7, "loadVector": [F, 0, 0]}],
        "sensors": [{"sensorType": "Node", "name": "slider_x", "nodeNumber": 2, "outputVariableType": "Position"},
                    {"sensorType": "Motion", "name": "angle", "motionNumber": "drive",
                     "outputVariableType": "Coordinate"},
                    {"sensorType": "Motion", "name": "torque", "motionNumber": "drive", "outputVariableType": "Force"},
                    {"sensorType": "Object", "name": "pivot_torque", "objectNumber": "crankPivot",
                     "outputVariableType": "TorqueLocal"}],
        "motions": [{"motionType": "Steady", "name": "drive", "joint": "crankPivot", "u": OMEGA}],
        "simulationSettings": {"timeIntegration": {"endTime": 2.0, "numberOfSteps": 800},
                               "solution": {"sensors": {"writePeriod": 0.02}}},
    }


def test_slider_follows_closed_form_and_torque_is_virtual_work():
    res = multibody.simulate(slider_crank())
    assert res.status == "succeeded", res.error
    assert any(w["code"] == "InitialStateCorrected" for w in res.warnings)  # starts at rest, driven at ω
    t = res.sensors["slider_x"].data[:, 0]
    # a velocity-level motion: the scheme integrates the angle, O(h²) off ωt at h = 2.5e-3 ...
    np.testing.assert_allclose(res.sensors["angle"].data[:, 1], OMEGA * t, atol=1e-6)
    # ... and the mechanism follows the angle it reached to Newton tolerance
    phi = res.sensors["angle"].data[:, 1]
    x = R_CRANK * np.cos(phi) + np.sqrt(L_ROD ** 2 - (R_CRANK * np.sin(phi)) ** 2)
    np.testing.assert_allclose(res.sensors["slider_x"].data[:, 1], x, atol=1e-9)
    dx = -R_CRANK * np.sin(phi) - R_CRANK ** 2 * np.sin(phi) * np.cos(phi) / np.sqrt(L_ROD ** 2 - (R_CRANK * np.sin(phi)) ** 2)
    torque = res.sensors["torque"].data[:, 1]
    np.testing.assert_allclose(torque[1:], -F * dx[1:], atol=1e-3)
    # the joint reports the same torque about z with the joint sign convention
    np.testing.assert_allclose(res.sensors["pivot_torque"].data[:, 3], -torque, atol=1e-12)
