"""Bad model documents: every problem reported at once, with its JSON path and item name."""
import copy

import multibody


def problems(doc):
    v = multibody.validate_document(doc)
    assert not v.ok
    return {p.path: p for p in v.problems}


def test_mini_example_is_valid_and_keeps_visualization(mini_model):
    v = multibody.validate_document(mini_model)
    assert v.ok, v.problems
    assert v.summary["coordinates"] == 7


def test_all_problems_at_once_with_paths_and_names(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["objects"][2]["markerNumbers"] = [1, 7]
    doc["objects"][1]["mass"] = float("nan") if False else -1.0
    doc["loads"][0]["loadVector"] = [1, 2]
    doc["sensors"][0]["outputVariableType"] = "Bogus"
    doc["simulationSettings"]["timeIntegration"]["numberOfStep"] = 10
    found = problems(doc)
    assert "loads[0].loadVector" in found
    assert "sensors[0].outputVariableType" in found
    assert "simulationSettings.timeIntegration.numberOfStep" in found
    assert "numberOfSteps" in found["simulationSettings.timeIntegration.numberOfStep"].message  # a suggestion


def test_reference_errors_name_the_item(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["objects"][2]["markerNumbers"] = [1, 7]
    doc["objects"][1]["mass"] = -1.0
    found = problems(doc)
    p = found["objects[2].markerNumbers[1]"]
    assert p.item == "object2" and "= 7, but there are 2 markers" in p.message
    assert "must be positive" in found["objects[1].mass"].message


def test_references_by_name_and_wrong_targets(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["objects"][2]["markerNumbers"] = ["marker1", "nope"]
    doc["loads"][0]["markerNumber"] = "marker0"
    assert multibody.validate_document(copy.deepcopy(doc) | {"objects": doc["objects"][:2] + [
        dict(doc["objects"][2], markerNumbers=["marker1", "marker0"])]}).ok
    found = problems(doc)
    assert "no marker named 'nope'" in found["objects[2].markerNumbers[1]"].message


def test_unknown_keys_types_and_non_finite_numbers_are_rejected(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["objects"][1]["masss"] = 1.0
    doc["objects"].append({"objectType": "JointWarp"})
    doc["nodes"][0]["initialVelocities"] = [0, 0, float("inf"), 0, 0, 0, 0]
    found = problems(doc)
    assert "unknown key 'masss'" in found["objects[1].masss"].message
    assert "objects[3]" in found and "JointWarp" in found["objects[3]"].message
    assert "nodes[0].initialVelocities[2]" in found


def test_enums_with_prefix_and_rotation_translation_local_ht(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["sensors"][1]["outputVariableType"] = "OutputVariableType.HomogeneousTransformation"
    doc["markers"][0]["localHT"] = {"rotation": [[0, -1, 0], [1, 0, 0], [0, 0, 1]], "translation": [0, 0, 0]}
    assert multibody.validate_document(doc).ok


def test_deprecated_rotation_marker_warns_with_item(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["markers"][0]["localHT"] = doc["markers"][1]["localHT"] = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    rot = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
    doc["objects"][2]["rotationMarker0"] = doc["objects"][2]["rotationMarker1"] = rot
    res = multibody.simulate(doc)
    assert [w["item"] for w in res.warnings] == ["object2", "object2"]
    assert all(w["code"] == "DeprecationWarning" and "localHT" in w["message"] for w in res.warnings)
    # and it means the same as the frame in localHT: the mini example's result
    ref = multibody.simulate(mini_model)
    assert abs(res.sensors["body_displacement"].data - ref.sensors["body_displacement"].data).max() < 1e-14


def test_reserved_default_names(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["loads"][0]["name"] = "load3"
    assert "reserved" in problems(doc)["loads[0].name"].message


def test_user_functions_cannot_be_sent(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["loads"][0]["loadVectorUserFunction"] = "def f(): pass"
    assert "loads[0].loadVectorUserFunction" in problems(doc)


def test_not_a_document():
    v = multibody.validate_document([1, 2])
    assert not v.ok and v.problems[0].path == "$"
