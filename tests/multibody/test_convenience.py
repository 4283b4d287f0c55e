"""Convenience items (Exudyn's mbs.Create... helpers in `objects`) against Exudyn 1.13.6 itself.

Each model is built twice: as a document with convenience items, expanded by mbserve, and in Exudyn
by calling the helper with the same arguments; the expansion must give Exudyn's item dictionaries
(exported with ../shared/examples/exudyn_export.py). Tolerances: 1e-14 relative for the items'
numbers (the same formulas; only the rounding of a few products may differ), 1e-7 relative for
visualization sizes, which Exudyn stores as float32.
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import pytest

import multibody
from multibody.convenience import expand_convenience

exu = pytest.importorskip("exudyn")
from exudyn import itemInterface as eii
from exudyn import rigidBodyUtilities as rbu

sys.path.insert(0, str(Path(__file__).resolve().parents[2].parent / "shared" / "examples"))
from exudyn_export import export_model

KINDS = {"nodes": "node", "objects": "object", "markers": "marker", "loads": "load"}
SOLVE = {"type": "Dynamic", "solverType": "GeneralizedAlpha"}


def exudyn_inertia(spec: dict):
    kind = spec.get("type", "RigidBodyInertia")
    args = {k: v for k, v in spec.items() if k != "type"}
    if kind == "RigidBodyInertia":
        tensor = args.pop("inertiaTensor", None)
        six = args.pop("inertia6D", None)
        tensor = np.array(tensor) if tensor is not None else rbu.Inertia6D2InertiaTensor(six)
        return rbu.RigidBodyInertia(inertiaTensor=tensor, **args)
    return {"Cuboid": rbu.InertiaCuboid, "Cylinder": rbu.InertiaCylinder, "Sphere": rbu.InertiaSphere}[kind](**args)


def build_in_exudyn(plain: callable, items: list[dict]) -> tuple[dict, dict]:
    """(document of the plain items, document after calling the helpers), both exported from Exudyn."""
    mbs = exu.SystemContainer().AddSystem()
    plain(mbs)
    before = export_model(mbs, exu.SimulationSettings(), SOLVE)
    names = {o["name"]: i for i, o in enumerate(before["objects"])}
    for item in items:
        args = {k: v for k, v in item.items() if k != "objectType"}
        for key in ("itemNumbers", "bodyNumbers"):
            if key in args:
                args[key] = [names.get(r, r) for r in args[key]]
        if "inertia" in args:
            args["inertia"] = exudyn_inertia(args["inertia"])
        for key in ("referenceRotationMatrix", "initialRotationMatrix"):  # Exudyn multiplies them with @
            if key in args:
                args[key] = np.array(args[key])
        if "nodeType" in args:
            args["nodeType"] = getattr(exu.NodeType, args["nodeType"].removeprefix("NodeType."))
        index = getattr(mbs, item["objectType"])(**args)
        names[mbs.GetObject(index)["name"]] = int(index)
    return before, export_model(mbs, exu.SimulationSettings(), SOLVE)


def expand(document: dict, items: list[dict]) -> tuple[dict, list]:
    doc = copy.deepcopy(document)
    doc["objects"] += copy.deepcopy(items)
    expanded, problems, warnings, failed = expand_convenience(doc)
    assert problems == [] and failed == set()
    return expanded, warnings


def with_default_name(item: dict, kind: str, index: int) -> dict:
    return {"name": f"{KINDS[kind]}{index}", **item}


def assert_same_items(ours: dict, exudyn: dict) -> None:
    for kind in KINDS:
        mine, theirs = ours.get(kind, []), exudyn[kind]
        assert len(mine) == len(theirs), kind
        for i, (a, b) in enumerate(zip(mine, theirs)):
            a = {k: v for k, v in with_default_name(a, kind, i).items() if k != "VgraphicsData"}
            where = f"{kind}[{i}]"
            assert a.keys() == b.keys(), where
            for key in a:
                if isinstance(b[key], (str, bool)):
                    assert a[key] == b[key], f"{where}.{key}"
                else:
                    tol = 1e-7 if key.startswith("V") else 1e-14
                    np.testing.assert_allclose(np.array(a[key], float), np.array(b[key], float), rtol=tol,
                                               atol=tol, err_msg=f"{where}.{key}")


def check_against_exudyn(plain: callable, items: list[dict]) -> None:
    before, after = build_in_exudyn(plain, items)
    expanded, _ = expand(before, items)
    assert_same_items(expanded, after)
    assert multibody.validate_document(expanded).ok


# ------------------------------------------------------------------------ plain parts
def ground_only(mbs):
    mbs.AddObject(eii.ObjectGround())


def ground_and_bodies(mbs):
    """A turned ground, a plain rigid body with turned Euler parameters, a mass point."""
    mbs.AddObject(eii.ObjectGround(name="base", referencePosition=[0.5, -1, 2],
                                   referenceRotation=rbu.RotationMatrixX(0.4)))
    ep = rbu.RotationMatrix2EulerParameters(rbu.RotationMatrixZ(0.7) @ rbu.RotationMatrixY(-0.2))
    n = mbs.AddNode(eii.NodeRigidBodyEP(referenceCoordinates=[1, 2, 3] + list(ep)))
    mbs.AddObject(eii.ObjectRigidBody(name="arm", nodeNumber=n, mass=2, inertia=[1, 2, 3, 0, 0, 0]))
    p = mbs.AddNode(eii.NodePoint(referenceCoordinates=[2, 0, -1]))
    mbs.AddObject(eii.ObjectMassPoint(name="point", nodeNumber=p, mass=0.5))


CUBOID = {"type": "Cuboid", "density": 5000, "sideLengths": [1, 0.1, 0.1]}


# --------------------------------------------------------------------------- the tests
def test_prismatic_joint_on_a_created_body_is_exudyns_items():
    """SPEC section 1's example: the body falls along a global y slide."""
    check_against_exudyn(ground_only, [
        {"objectType": "CreateRigidBody", "name": "block", "inertia": CUBOID, "referencePosition": [4, 0, 0],
         "referenceRotationMatrix": rbu.RotationMatrixZ(0.3).tolist(), "initialVelocity": [0, 4, 0],
         "initialAngularVelocity": [0.5, -1, 2], "gravity": [0, -9.81, 0]},
        {"objectType": "CreatePrismaticJoint", "name": "slide", "itemNumbers": [0, 1], "position": [3.5, 0, 0],
         "axis": [0, 1, 0], "useGlobalFrame": True, "axisRadius": 0.02, "axisLength": 1}])


@pytest.mark.parametrize("global_frame", [True, False])
@pytest.mark.parametrize("joint", ["CreatePrismaticJoint", "CreateRevoluteJoint"])
def test_axis_joints_between_turned_bodies_are_exudyns_items(joint, global_frame):
    """Skew axes (both branches of ComputeOrthonormalBasis), items by name, body-local frames."""
    check_against_exudyn(ground_and_bodies, [
        {"objectType": "CreateRigidBody", "name": "link", "referencePosition": [3, 1, 0],
         "referenceRotationMatrix": rbu.RotationMatrixY(1.1).tolist(),
         "inertia": {"mass": 2.0, "inertiaTensor": np.diag([1., 2., 3.]).tolist(), "com": [0.1, 0.2, 0.3],
                     "inertiaTensorAtCOM": True}},
        {"objectType": joint, "name": "j", "itemNumbers": ["arm", "link"], "position": [0.5, 0.2, -0.1],
         "axis": [1, 1, 0.3], "useGlobalFrame": global_frame, "show": False, "color": [1, 0, 0, 1]},
        {"objectType": joint, "itemNumbers": ["base", 1], "position": [1, 0.05, 0.02],
         "axis": [1, 0.05, 0.02], "useGlobalFrame": global_frame}])


@pytest.mark.parametrize("node_type", ["NodeType.RotationRxyz", "NodeType.RotationRotationVector"])
def test_revolute_joint_on_a_tait_bryan_or_rotation_vector_body_is_exudyns_items(node_type):
    """The joint frame from the body's reference rotation parameters (a RigidBodyRxyz or RigidBodyRotVecLG node)."""
    check_against_exudyn(ground_and_bodies, [
        {"objectType": "CreateRigidBody", "name": "link", "referencePosition": [3, 1, 0], "inertia": CUBOID,
         "referenceRotationMatrix": rbu.RotationMatrixY(1.1).tolist(), "nodeType": node_type},
        {"objectType": "CreateRevoluteJoint", "itemNumbers": ["arm", "link"], "position": [0.5, 0.2, -0.1],
         "axis": [1, 1, 0.3], "useGlobalFrame": False}])


@pytest.mark.parametrize("global_frame", [True, False])
def test_spherical_joint_with_ground_and_mass_point_is_exudyns_items(global_frame):
    check_against_exudyn(ground_and_bodies, [
        {"objectType": "CreateSphericalJoint", "name": "ball", "itemNumbers": ["base", "arm"],
         "position": [1, 2.5, 3], "useGlobalFrame": global_frame, "jointRadius": 0.05},
        {"objectType": "CreateSphericalJoint", "itemNumbers": ["arm", "point"], "position": [0.2, 0, 0],
         "constrainedAxes": [1, 0, 1], "useGlobalFrame": global_frame}])


@pytest.mark.filterwarnings("ignore:the argument MainSystem.CreateSpringDamper.bodyNumbers is deprecated")
def test_spring_dampers_are_exudyns_items_and_bodyNumbers_warns():
    items = [
        {"objectType": "CreateSpringDamper", "name": "spring", "itemNumbers": ["base", "arm"],
         "localPosition0": [1, 2, 3], "localPosition1": [0.1, -0.2, 0.3], "stiffness": 1e4, "damping": 12,
         "force": 3, "velocityOffset": 0.5, "drawSize": 0.2},
        {"objectType": "CreateSpringDamper", "bodyNumbers": ["arm", "point"], "referenceLength": 0.7,
         "stiffness": 50}]
    check_against_exudyn(ground_and_bodies, items)
    _, warnings = expand(build_in_exudyn(ground_and_bodies, [])[0], items)
    assert [w["item"] for w in warnings] == ["object4"] and "bodyNumbers" in warnings[0]["message"]


def test_distance_constraints_are_exudyns_items():
    """The distance from the reference configuration (turned ground and body), or the one given."""
    check_against_exudyn(ground_and_bodies, [
        {"objectType": "CreateDistanceConstraint", "name": "rod", "itemNumbers": ["base", "arm"],
         "localPosition0": [1, 2, 3], "localPosition1": [0.1, -0.2, 0.3], "drawSize": 0.06},
        {"objectType": "CreateDistanceConstraint", "itemNumbers": ["arm", "point"], "distance": 0.7, "show": False,
         "color": [0, 0, 1, 1]}])


def test_a_distance_constraint_of_length_0_is_exudyns_spherical_joint_and_warns():
    items = [{"objectType": "CreateDistanceConstraint", "name": "pin", "itemNumbers": ["arm", "point"],
              "localPosition1": [0, 0, 0], "distance": 0.0, "drawSize": 0.2}]
    check_against_exudyn(ground_and_bodies, items)
    expanded, warnings = expand(build_in_exudyn(ground_and_bodies, [])[0], items)
    assert expanded["objects"][3]["objectType"] == "JointSpherical"
    assert [(w["code"], w["item"]) for w in warnings] == [("SphericalJointInstead", "pin")]


@pytest.mark.parametrize("body", [
    {"inertia": {"mass": 3.0, "inertia6D": [1, 2, 2.5, 0.1, -0.2, 0.05]}, "referenceHT":
        rbu.HomogeneousTransformation(rbu.RotationMatrixZ(np.pi), [1, 2, 3]).tolist()},  # a half turn
    {"inertia": {"type": "Cylinder", "density": 7800, "length": 0.2, "outerRadius": 0.05, "axis": 2,
                 "innerRadius": 0.01}, "referenceRotationMatrix": rbu.RotationMatrixX(2.5).tolist(),
     "initialDisplacement": [0.1, 0, 0], "initialRotationMatrix": rbu.RotationMatrixZ(0.1).tolist(),
     "initialAngularVelocity": [1, 2, 3], "nodeType": "NodeType.RotationEulerParameters"},
    {"inertia": {"type": "Sphere", "density": 1000, "radius": 0.1}, "initialHT":
        rbu.HomogeneousTransformation(rbu.RotationMatrixY(0.3), [0, 0.1, 0]).tolist(),
     "show": False, "color": [0, 1, 0, 1], "drawSize": 3, "graphicsDataList": [{"type": "Sphere"}]},
    {"inertia": CUBOID, "referenceRotationMatrix": (rbu.RotationMatrixX(0.4) @ rbu.RotationMatrixY(-0.2)).tolist(),
     "initialDisplacement": [0.1, 0, 0], "initialRotationMatrix": rbu.RotationMatrixZ(0.1).tolist(),
     "initialAngularVelocity": [1, 2, 3], "nodeType": "NodeType.RotationRxyz"},
    {"inertia": CUBOID, "referenceRotationMatrix": (rbu.RotationMatrixX(0.4) @ rbu.RotationMatrixY(-0.2)).tolist(),
     "initialDisplacement": [0.1, 0, 0], "initialRotationMatrix": rbu.RotationMatrixZ(0.1).tolist(),
     "initialAngularVelocity": [1, 2, 3], "nodeType": "NodeType.RotationRotationVector"},
], ids=["inertia6D-halfturn", "cylinder-initial-rotation", "sphere-initialHT", "rxyz-initial-rotation",
        "rotvec-initial-rotation"])
def test_rigid_bodies_are_exudyns_items(body):
    args = copy.deepcopy(body)
    if "graphicsDataList" in body:  # Exudyn wants its own graphics data; they are drawing only
        args["graphicsDataList"] = [exu.graphics.Sphere(radius=0.1)]
    before, after = build_in_exudyn(ground_only, [{"objectType": "CreateRigidBody", "name": "b", **args}])
    expanded, _ = expand(before, [{"objectType": "CreateRigidBody", "name": "b", **body}])
    assert_same_items(expanded, after)
    assert expanded["objects"][1].get("VgraphicsData") == body.get("graphicsDataList")


def test_a_joint_may_name_a_body_created_later_in_objects():
    """Exudyn needs the body first; a document is a set of items, so the order does not matter."""
    joint = {"objectType": "CreatePrismaticJoint", "name": "slide", "itemNumbers": [0, "block"],
             "position": [3.5, 0, 0], "axis": [0, 1, 0]}
    block = {"objectType": "CreateRigidBody", "name": "block", "inertia": CUBOID, "referencePosition": [4, 0, 0]}
    ordered, _ = expand({"objects": [{"objectType": "Ground"}]}, [block, joint])
    reversed_, _ = expand({"objects": [{"objectType": "Ground"}]}, [joint, block])
    assert reversed_["nodes"] == ordered["nodes"] and [m["bodyNumber"] for m in reversed_["markers"]] == [0, 2]
    assert [m["localHT"] for m in reversed_["markers"]] == [m["localHT"] for m in ordered["markers"]]


# ---------------------------------------------------------------------- same results
SLIDER_SENSORS = [
    {"sensorType": "Object", "objectNumber": "slide", "outputVariableType": "HomogeneousTransformation"},
    {"sensorType": "Object", "objectNumber": "slide", "outputVariableType": "ForceLocal"},
    {"sensorType": "Body", "bodyNumber": "block", "outputVariableType": "Displacement"},
    {"sensorType": "Body", "bodyNumber": "block", "outputVariableType": "AngularVelocity"},
]
SETTINGS = {"timeIntegration": {"endTime": 1.0, "numberOfSteps": 200}}


def test_prismatic_joint_model_gives_the_same_results_as_plain_items():
    """The slider of SPEC section 1 under gravity and a skew force, written once with CreateRigidBody +
    CreatePrismaticJoint and once with plain items: the same numbers go into the solver, so the
    results must agree bit for bit."""
    convenient = {
        "objects": [{"objectType": "Ground"},
                    {"objectType": "CreateRigidBody", "name": "block", "inertia": CUBOID,
                     "referencePosition": [4, 0, 0], "initialVelocity": [0, 4, 0], "gravity": [0, -9.81, 0]},
                    {"objectType": "CreatePrismaticJoint", "name": "slide", "itemNumbers": [0, "block"],
                     "position": [3.5, 0, 0], "axis": [0, 1, 0], "useGlobalFrame": True}],
        "loads": [{"loadType": "ForceVector", "markerNumber": "Marker1:slide", "loadVector": [1, 2, 3]}],
        "sensors": SLIDER_SENSORS, "simulationSettings": SETTINGS}
    slide_frame = [[0, 1, 0], [1, 0, 0], [0, 0, -1]]  # x along global y (ComputeOrthonormalBasis)
    plain = {  # as the expansion orders them: the document's own loads first, the created items after
        "nodes": [{"nodeType": "RigidBodyEP", "name": "Node:block", "referenceCoordinates": [4, 0, 0, 1, 0, 0, 0],
                   "initialVelocities": [0, 4, 0, 0, 0, 0, 0]}],
        "objects": [{"objectType": "Ground"},
                    {"objectType": "RigidBody", "name": "block", "nodeNumber": 0, "mass": 50.0,  # InertiaCuboid's
                     "inertia": [0.08333333333333336, 4.208333333333334, 4.208333333333334, 0, 0, 0]},
                    {"objectType": "JointPrismaticX", "name": "slide", "markerNumbers": [1, 2]}],
        "markers": [{"markerType": "BodyMass", "bodyNumber": 1},
                    {"markerType": "BodyRigid", "bodyNumber": 0,
                     "localHT": {"rotation": slide_frame, "translation": [3.5, 0, 0]}},
                    {"markerType": "BodyRigid", "name": "Marker1:slide", "bodyNumber": 1,
                     "localHT": {"rotation": slide_frame, "translation": [-0.5, 0, 0]}}],
        "loads": [{"loadType": "ForceVector", "markerNumber": "Marker1:slide", "loadVector": [1, 2, 3]},
                  {"loadType": "MassProportional", "markerNumber": 0, "loadVector": [0, -9.81, 0]}],
        "sensors": SLIDER_SENSORS, "simulationSettings": SETTINGS}
    ours, reference = multibody.simulate(convenient), multibody.simulate(plain)
    assert ours.status == reference.status == "succeeded"
    for name, series in reference.sensors.items():
        assert np.array_equal(ours.sensors[name].data, series.data), name
    displacement = ours.sensors["sensor2"].data[-1]
    assert displacement[2] == pytest.approx(4 * 1.0 + (2 / 50 - 9.81) / 2, rel=1e-9)  # free fall along y


# ------------------------------------------------------------------------- problems
def problems_of(objects: list, **doc) -> dict[str, str]:
    v = multibody.validate_document({"objects": objects, **doc})
    assert not v.ok
    return {p.path: p.message for p in v.problems}


def test_bad_convenience_items_give_every_problem_with_its_path():
    problems = problems_of([
        {"objectType": "Ground"},
        {"objectType": "CreateRigidBody", "name": "b", "inertia": CUBOID, "referencePosition": [1, 0, 0]},
        {"objectType": "CreatePrismaticJoint", "name": "zero", "itemNumbers": [0, 1], "position": [0, 0, 0],
         "axis": [0, 0, 0]},
        {"objectType": "CreateRevoluteJoint", "itemNumbers": [0, "nope"], "position": [0, 0, 0], "axis": [0, 0, 1]},
        {"objectType": "CreateSphericalJoint", "itemNumbers": [17, 1], "position": [0, 0, 0]},
        {"objectType": "CreatePrismaticJoint", "itemNumbers": [0, 1], "position": [0, 0, 0], "axes": [1, 0, 0]},
        {"objectType": "CreateSpringDamper", "itemNumbers": [0, 2]},  # 2 has problems of its own
        {"objectType": "CreateRigidBody", "inertia": {"type": "Cuboid", "density": 1, "sideLengths": [1, 0, 1]}},
        {"objectType": "CreateRigidBody", "inertia": {"mass": 1, "inertia6D": [1, 1, 1, 0, 0, 0]},
         "referenceHT": np.eye(4).tolist(), "referencePosition": [0, 0, 0]},
        {"objectType": "CreateRigidBody", "inertia": {"mass": 1}},
        {"objectType": "CreateGenericJoint", "itemNumbers": [0, 1]},
        {"objectType": "CreateSpringDamper", "itemNumbers": [1, 1]},
        {"objectType": "CreateSpringDamper", "itemNumbers": [0, 13]},
        {"objectType": "CreatePrismaticJoint", "itemNumbers": [0, 1], "position": [0, 0, 0], "axis": [0, 0, 1]},
    ])
    assert problems == {
        "objects[2].axis": "is the zero vector; the joint axis needs a direction",
        "objects[3].itemNumbers[1]": "no object named 'nope'",
        "objects[4].itemNumbers[0]": "= 17, but there are 14 objects",
        "objects[5].axes": "unknown key 'axes'",
        "objects[5].axis": "Field required",
        "objects[7].inertia.sideLengths[1]": "Input should be greater than 0",
        "objects[8].referenceHT": "give referenceHT or referencePosition and referenceRotationMatrix, not both",
        "objects[9].inertia": "give inertiaTensor (3x3) or inertia6D, one of them",
        "objects[10].objectType": "unknown convenience item 'CreateGenericJoint'; supported: CreateRigidBody, "
                                  "CreatePrismaticJoint, CreateRevoluteJoint, CreateSphericalJoint, CreateSpringDamper, "
                                  "CreateDistanceConstraint",
        "objects[11].itemNumbers": "connects an object with itself",
        "objects[12].itemNumbers[1]": "refers to objects[13] (object13), a CreatePrismaticJoint; expected Ground "
                                      "or MassPoint or RigidBody",
    }  # objects[6] connects objects[2], whose own problems say why it cannot be expanded


def test_problem_names_the_convenience_item():
    v = multibody.validate_document({"objects": [{"objectType": "Ground"}, {
        "objectType": "CreatePrismaticJoint", "name": "slide", "itemNumbers": [0, 0], "position": [0, 0, 0],
        "axis": [1, 0, 0], "bodyNumbers": [0, 0]}]})
    assert [(p.path, p.item) for p in v.problems] == [("objects[1].bodyNumbers", "slide")]


def test_problems_of_the_expanded_document_keep_the_users_paths():
    """A bad plain item next to convenience items: its path is the one in the user's document."""
    v = multibody.validate_document({
        "objects": [{"objectType": "Ground"},
                    {"objectType": "CreateRigidBody", "name": "b", "inertia": CUBOID},
                    {"objectType": "CreatePrismaticJoint", "itemNumbers": [0, 1], "position": [0, 0, 0],
                     "axis": [1, 0, 0]}],
        "sensors": [{"sensorType": "Body", "bodyNumber": "b", "outputVariableType": "Nonsense"}]})
    assert [p.path for p in v.problems] == ["sensors[0].outputVariableType"]


def test_expanded_document_is_reported_and_loads_as_it_is():
    doc = {"objects": [{"objectType": "Ground"},
                       {"objectType": "CreateRigidBody", "name": "b", "inertia": CUBOID, "gravity": [0, 0, -9.81]},
                       {"objectType": "CreateSphericalJoint", "itemNumbers": [0, "b"], "position": [0, 0, 0]}]}
    original = copy.deepcopy(doc)
    v = multibody.validate_document(doc)
    assert v.ok and doc == original  # the user's document is not changed
    assert [o["objectType"] for o in v.expanded["objects"]] == ["Ground", "RigidBody", "JointSpherical"]
    again = multibody.validate_document(v.expanded)
    assert again.ok and again.expanded == v.expanded and again.summary == v.summary


def test_convenience_problems_come_with_the_rest_of_the_documents_problems():
    """A bad convenience item does not hide the schema, reference and sensor problems elsewhere."""
    v = multibody.validate_document({
        "nodes": [{"nodeType": "Point", "referenceCoordinates": [0, 0]}],  # schema
        "objects": [{"objectType": "Ground"},
                    {"objectType": "CreateRigidBody", "name": "b", "inertia": CUBOID},
                    {"objectType": "CreatePrismaticJoint", "itemNumbers": [0, "b"], "position": [0, 0, 0],
                     "axis": [0, 0, 0]},  # convenience
                    {"objectType": "CreateSpringDamper", "itemNumbers": [0, 2]}],  # connects the bad joint
        "markers": [{"markerType": "BodyPosition", "bodyNumber": "bb"}],  # reference
        "loads": [{"loadType": "ForceVector", "markerNumber": 0, "loadVector": [0, 0, 1]}],
        "sensors": [{"sensorType": "Body", "bodyNumber": "b", "outputVariableType": "Positon"}]})  # output
    found = {p.path: p.message for p in v.problems}
    assert found == {
        "nodes[0].referenceCoordinates": "expected 3 values, got 2",
        "objects[2].axis": "is the zero vector; the joint axis needs a direction",
        "markers[0].bodyNumber": "no object named 'bb'; did you mean 'b'?",
        "sensors[0].outputVariableType": "unknown OutputVariableType 'Positon'; did you mean 'Position'?",
    }  # objects[3] connects objects[2], whose own problem says why neither is expanded
