"""Bad model documents: every problem reported at once, with its JSON path and item name."""
import copy

import pytest
from pydantic import ValidationError

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
    assert "objects[2].markerNumbers[1]" in found and "objects[1].mass" in found  # beside the schema problems


def test_schema_reference_output_and_type_problems_together_with_suggestions(mini_model):
    """One model, four kinds of mistake: all four come back at once, each at its path with a suggestion."""
    doc = copy.deepcopy(mini_model)
    doc["objects"][1]["mass"] = "1.0"  # schema: a string is not a number (strict types)
    doc["loads"][0]["markerNumber"] = "markr1"  # reference: a misspelled name
    doc["sensors"][3]["outputVariableType"] = "DisplacementLocl"  # a misspelled output variable
    doc["nodes"][0]["nodeType"] = "RigidBodyEp"  # a misspelled item type
    found = problems(doc)
    assert found["objects[1].mass"].message == 'expected a number, got "1.0" (a string)'
    assert found["loads[0].markerNumber"].message == "no marker named 'markr1'; did you mean 'marker1'?"
    assert found["sensors[3].outputVariableType"].message.startswith(
        "unknown OutputVariableType 'DisplacementLocl'; did you mean 'DisplacementLocal'?")
    assert found["nodes[0]"].message == "unknown nodeType 'RigidBodyEp'; did you mean 'RigidBodyEP'?"
    assert found["nodes[0]"].item == "node0" and found["objects[1].mass"].item == "object1"
    assert len(found) == 4, found  # the references to the misspelled node are not reported again


def test_suggestions_for_keys_names_and_output_variables_of_the_item(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["objects"][2]["markerNumbrs"] = doc["objects"][2].pop("markerNumbers")
    doc["sensors"][1]["objectNumber"] = "objekt2"
    doc["sensors"][2]["outputVariableType"] = "Forcelocal"  # an output variable, but not this item's spelling
    doc["solve"] = {"solverType": "GeneralisedAlpha"}
    found = problems(doc)
    assert found["objects[2].markerNumbrs"].message == "unknown key 'markerNumbrs'; did you mean 'markerNumbers'?"
    assert found["sensors[1].objectNumber"].message == "no object named 'objekt2'; did you mean 'object2'?"
    assert "did you mean 'ForceLocal'?" in found["sensors[2].outputVariableType"].message
    assert "did you mean 'GeneralizedAlpha'?" in found["solve.solverType"].message


def test_messages_in_the_users_words(mini_model):
    """No library prefixes; an omitted reference is 'missing', not '-1'."""
    doc = copy.deepcopy(mini_model)
    del doc["loads"][0]["markerNumber"]
    del doc["objects"][1]["mass"]
    doc["objects"][2]["rotationMarker0"] = [[2, 0, 0], [0, 1, 0], [0, 0, 1]]  # a validator's message
    doc["objects"][2]["activeConnector"] = 1  # strict: 1 is not true
    v = multibody.validate_document(doc)
    found = {p.path: p.message for p in v.problems}
    assert found["loads[0].markerNumber"].startswith("missing: give the index or the name of one of the markers")
    assert found["objects[1].mass"] == "missing: a RigidBody needs a positive mass"
    assert found["objects[2].rotationMarker0"] == "rotationMarker0 is not a rotation matrix (columns not orthonormal)"
    assert found["objects[2].activeConnector"] == "expected true or false, got 1 (a number)"
    assert not any("Value error" in m or "-1" in m or "Input should" in m for m in found.values()), found


def test_reference_errors_name_the_item(mini_model):
    doc = copy.deepcopy(mini_model)
    doc["objects"][2]["markerNumbers"] = [1, 7]
    doc["objects"][1]["mass"] = -1.0
    found = problems(doc)
    p = found["objects[2].markerNumbers[1]"]
    assert p.item == "object2" and p.message == "7 is not an index of markers (0..1 or a name)"
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


def test_a_document_is_validated_by_a_class_of_its_own_types_with_the_same_result(mini_model):
    from typing import get_args

    from multibody import schema as S
    doc = S.document(mini_model)
    assert isinstance(doc, S.ModelDocument) and type(doc) is not S.ModelDocument  # only the types mini uses
    objects = get_args(type(doc).model_fields["objects"].annotation)[0]  # Annotated[Union[...], discriminator]
    assert set(get_args(get_args(objects)[0])) == {S.ObjectGround, S.ObjectRigidBody, S.ObjectJointPrismaticX}
    assert doc.model_dump() == S.ModelDocument.model_validate(mini_model).model_dump()
    # problems come from the whole schema: an unknown type, and a bad value in an item of a known type
    for (kind, i, key), value in ((("nodes", 0, "nodeType"), "RigidBodyEp"), (("objects", 1, "mass"), "1.0")):
        bad = copy.deepcopy(mini_model)
        bad[kind][i][key] = value
        with pytest.raises(ValidationError) as whole:
            S.ModelDocument.model_validate(bad)
        with pytest.raises(ValidationError) as found:
            S.document(bad)
        assert found.value.errors() == whole.value.errors()
