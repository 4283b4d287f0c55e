"""The core's own bounds (issue 18): step counts, nesting depth, values that are not JSON text,
and the static solver's load factors made one at a time and stopped by cancel."""
import copy
import json
import time
import tracemalloc

import pytest

import multibody
from multibody import settings as settings_mod
from multibody.limits import MAX_NESTING_DEPTH, json_shape
from tests.conftest import example

STATIC_SPRING = {  # a slider on a spring under a force: one Newton iteration per load step
    "nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0, 1, 0, 0, 0]}],
    "objects": [{"objectType": "Ground"},
                {"objectType": "RigidBody", "nodeNumber": 0, "mass": 1.0, "inertia": [0.1, 0.1, 0.1, 0, 0, 0]},
                {"objectType": "JointPrismaticX", "markerNumbers": [0, 1]},
                {"objectType": "ConnectorSpringDamper", "markerNumbers": [2, 3], "stiffness": 250.0,
                 "referenceLength": 1.0}],
    "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1},
                {"markerType": "BodyPosition", "bodyNumber": 0, "localPosition": [-1, 0, 0]},
                {"markerType": "BodyPosition", "bodyNumber": 1}],
    "loads": [{"loadType": "ForceVector", "markerNumber": 1, "loadVector": [7.5, 0, 0]}],
    "simulationSettings": {"solution": {"sensors": {"writePeriod": 1.0}}},
    "solve": {"type": "Static"},
}


def problems(doc) -> dict:
    return {p.path: p.message for p in multibody.validate_document(doc).problems}


def nested(depth: int):
    value = 1.0
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("section,key,limit", [("timeIntegration", "numberOfSteps", settings_mod.MAX_STEPS),
                                               ("staticSolver", "numberOfLoadSteps", settings_mod.MAX_LOAD_STEPS)])
@pytest.mark.parametrize("factor", [10, 1e21])
def test_step_counts_over_the_core_limit_are_problems(mini, section, key, limit, factor):
    """Finding 1 and 6: 1e9 load steps and 1e12..1e30 steps were accepted. The problem names its
    bound (a caller answers limit_exceeded for it, not model_invalid)."""
    doc = multibody.merge_settings(mini, {section: {key: limit * factor}})
    assert f"the limit is {limit}" in problems(doc)[f"simulationSettings.{section}.{key}"]
    [problem] = multibody.validate_document(doc).problems
    assert problem.limit == f"multibody.settings.{'MAX_STEPS' if section == 'timeIntegration' else 'MAX_LOAD_STEPS'}"
    assert not problems(multibody.merge_settings(mini, {section: {key: limit}}))


def test_static_load_factors_are_made_lazily_and_the_solve_stops_on_cancel():
    """Finding 1: with 1e9 load steps the solver built a list of n floats (23 GB) before the first
    step and never polled cancel. At the core's limit a cancel after 3 polls stops it at once,
    and the memory used stays below what a list of the load factors would take (32 MB for 1e6)."""
    multibody.simulate(STATIC_SPRING)  # imports and caches: not the memory under test
    doc = multibody.merge_settings(STATIC_SPRING, {"staticSolver": {"numberOfLoadSteps": settings_mod.MAX_LOAD_STEPS}})
    polls = []
    tracemalloc.start()
    started = time.perf_counter()
    with pytest.raises(multibody.SimulationCanceled):
        multibody.simulate(doc, cancel=lambda: polls.append(1) or len(polls) > 3)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(polls) == 4 and time.perf_counter() - started < 30
    assert peak < 4_000_000, peak


def test_few_load_steps_reach_the_full_load_exactly():
    doc = multibody.merge_settings(STATIC_SPRING, {"staticSolver": {"numberOfLoadSteps": 3}})
    doc["sensors"] = [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Displacement"}]
    data = multibody.simulate(doc).sensors["sensor0"].data
    assert data[-1, 0] == 1.0 and data[-1, 1] == pytest.approx(7.5 / 250.0, abs=1e-12)


@pytest.mark.parametrize("where", ["objects[1].Vcolor", "simulationSettings.solution"])
def test_nesting_past_the_limit_is_one_problem_at_its_path(mini, where):
    """Findings 3 and 4: 254+ levels broke serialization and deepcopy far from the input."""
    doc = copy.deepcopy(mini)
    if where.startswith("objects"):
        doc["objects"][1]["Vcolor"] = nested(5000)
    else:
        doc["simulationSettings"]["solution"] = {"x": nested(5000)}
    found = problems(doc)
    assert len(found) == 1
    (path, message), = found.items()
    assert path.startswith(where) and f"deeper than {MAX_NESTING_DEPTH} levels" in message


def test_non_finite_numbers_are_refused_in_visualization_keys(mini):
    """Finding 9: NaN/Infinity in V* keys were stored and served back as bare NaN (not JSON)."""
    doc = copy.deepcopy(mini)
    doc["objects"][1]["Vcolor"] = [float("nan"), 0.0, float("inf"), 1.0]
    doc["objects"][1]["VgraphicsData"] = [{"radius": -float("inf")}]
    assert set(problems(doc)) == {"objects[1].Vcolor[0]", "objects[1].Vcolor[2]", "objects[1].VgraphicsData[0].radius"}


def test_integers_beyond_a_float64_are_a_problem_not_a_crash(mini):
    """math.isfinite(10**400) raises OverflowError: such a number must never reach the settings."""
    doc = multibody.merge_settings(mini, {"timeIntegration": {"numberOfSteps": 10**400}})
    assert "beyond the range of a float64" in problems(doc)["simulationSettings.timeIntegration.numberOfSteps"]


def test_lone_surrogates_in_keys_and_values_are_refused_with_a_path_that_is_text(mini):
    """JSON's \\ud800 escape gives Python a string that no UTF-8 encoder takes (a 500 before)."""
    doc = copy.deepcopy(mini)
    doc["name"] = "a\ud800"
    doc["simulationSettings"]["\udfff"] = {"x": 1}
    found = problems(doc)
    assert set(found) == {"name", "simulationSettings.\\udfff"}
    assert all("lone surrogate" in m for m in found.values())
    json.dumps(found, ensure_ascii=False).encode()  # the problems themselves are text


def test_shape_check_reports_at_most_twenty_values_and_counts_the_rest():
    shape = json_shape({"a": [float("nan")] * 25})
    assert shape.too_deep is None and len(shape.values) == 21 and "5 more" in shape.values[-1].message


@pytest.mark.parametrize("name", ["a/b", "..", ".", "x y", "é", "a?b", "a#b", "a%2F", "x" * 129])
def test_item_names_are_url_safe(mini, name):
    """Finding 10: a sensor named 'a/b' was accepted but could never be fetched."""
    doc = copy.deepcopy(mini)
    doc["sensors"][0]["name"] = name
    assert "not allowed" in problems(doc)["sensors[0].name"]


def test_names_of_the_allowed_characters_pass(mini):
    doc = copy.deepcopy(mini)
    doc["sensors"][0]["name"] = "Marker1:slide-end_2.x~@+"
    assert not problems(doc)


def test_validation_polls_cancel_between_stages_and_motion_laws():
    doc = example("motion_sine")
    polls = []
    assert multibody.validate_document(doc, cancel=lambda: polls.append(1) and False).ok
    assert len(polls) >= 5 + len(doc["motions"])
    with pytest.raises(multibody.SimulationCanceled):
        multibody.validate_document(doc, cancel=lambda: True)
