"""Sweep documents without a service: paths, designs, reductions (store.design)."""
import numpy as np
import pytest

from store import design
from tests.conftest import example


def spec(**kw) -> design.SweepSpec:
    return design.SweepSpec.model_validate(kw)


def test_paths_by_index_and_by_name():
    doc = example("spring_slider")
    doc["loads"] = [{"loadType": "ForceVector", "markerNumber": 1, "loadVector": [1.0, 0, 0], "name": "push"}]
    doc["parameters"] = {"k": 1.0}
    s = spec(parameters=[{"path": "objects[spring].stiffness", "values": [1]},
                         {"path": "loads[push].loadVector[0]", "values": [2.5]},
                         {"path": "parameters.k", "values": [3]}, {"path": "objects[3].damping", "values": [4]}])
    paths = design.check(s, doc)
    assert paths == ["objects[3].stiffness", "loads[0].loadVector[0]", "parameters.k", "objects[3].damping"]
    varied = design.variation(doc, paths, (1, 2.5, 3, 4))
    assert (varied["objects"][3]["stiffness"], varied["loads"][0]["loadVector"], varied["parameters"]["k"],
            varied["objects"][3]["damping"]) == (1, [2.5, 0, 0], 3, 4)
    assert doc["objects"][3]["stiffness"] == 100.0  # the model document itself is untouched


@pytest.mark.parametrize("path, says", [
    ("objects[nope].stiffness", "no items named 'nope'"), ("objects[9].mass", "no item 9"),
    ("parameters.k", "no 'parameters'"), ("objects..mass", "an empty key"), ("objects[0", "character"),
    ("simulationSettings[0]", "not a list"), ("objects[spring].stiffness.x", "not an object or a list")])
def test_a_bad_path_names_the_parameter(path, says):
    with pytest.raises(design.SweepInvalid) as err:
        design.check(spec(parameters=[{"path": path, "values": [1]}]), example("spring_slider"))
    [problem] = err.value.problems
    assert problem["path"] == "parameters[0].path" and says in problem["message"], problem


def test_grid_is_every_combination_first_parameter_slowest():
    s = spec(parameters=[{"path": "a", "values": [1, 2]}, {"path": "b", "range": {"start": 0, "stop": 1, "num": 3}}])
    assert design.count(s) == 6
    assert design.rows(s, 0) == [(1, 0.0), (1, 0.5), (1, 1.0), (2, 0.0), (2, 0.5), (2, 1.0)]


def test_zip_takes_the_lists_side_by_side():
    s = spec(design="zip", parameters=[{"path": "objects[spring].stiffness", "values": [10, 20, 30]},
                                       {"path": "objects[spring].damping", "range": {"start": 1, "stop": 2, "num": 3}}])
    assert design.count(s) == 3 and design.rows(s, 0) == [(10, 1.0), (20, 1.5), (30, 2.0)]
    uneven = spec(design="zip", parameters=[{"path": "objects[spring].stiffness", "values": [1, 2]},
                                            {"path": "objects[spring].damping", "values": [1]}])
    with pytest.raises(design.SweepInvalid, match="problem"):
        design.check(uneven, example("spring_slider"))


@pytest.mark.parametrize("kind", ["random", "latinHypercube"])
def test_random_designs_count_bounds_and_seed(kind):
    s = spec(design=kind, samples=50, parameters=[{"path": "a", "range": {"start": 10, "stop": 20}},
                                                  {"path": "b", "range": {"start": -1, "stop": 0}}])
    rows = np.array(design.rows(s, 7))
    assert rows.shape == (50, 2)
    assert (rows[:, 0] >= 10).all() and (rows[:, 0] <= 20).all() and (rows[:, 1] >= -1).all() and (rows[:, 1] <= 0).all()
    assert design.rows(s, 7) == design.rows(s, 7) and design.rows(s, 8) != design.rows(s, 7)
    if kind == "latinHypercube":  # one sample in each of the 50 strata of every parameter
        for col, (lo, hi) in zip(rows.T, [(10, 20), (-1, 0)]):
            assert sorted(np.floor((col - lo) / (hi - lo) * 50).astype(int)) == list(range(50))


def test_random_designs_need_ranges_and_samples():
    with pytest.raises(design.SweepInvalid) as err:
        design.check(spec(design="latinHypercube", parameters=[{"path": "objects[spring].stiffness", "values": [1]}]),
                     example("spring_slider"))
    assert {p["path"] for p in err.value.problems} == {"parameters[0]", "samples"}


def test_outputs_name_a_sensor_of_the_model_and_a_free_column_name():
    s = spec(parameters=[{"path": "objects[spring].stiffness", "values": [1]}],
             outputs=[{"name": "x", "sensor": "nope", "column": "PositionX"},
                      {"name": "objects[spring].stiffness", "sensor": "block_position", "column": "PositionX"}])
    with pytest.raises(design.SweepInvalid) as err:
        design.check(s, example("spring_slider"))
    assert [p["path"] for p in err.value.problems] == ["outputs[0].sensor", "outputs[1].name"]


def test_reductions():
    data = np.array([[0.0, 1.0], [1.0, -3.0], [2.0, 2.0]])
    got = {how: design.reduce_column(data, 1, how) for how in design.REDUCTIONS}
    assert got == {"last": 2.0, "first": 1.0, "min": -3.0, "max": 2.0, "mean": 0.0,
                   "rms": float(np.sqrt(14 / 3)), "absMax": 3.0}
    assert design.reduce_column(data, 1, design.At(at=0.5)) == -1.0
    assert design.reduce_column(data, 1, design.At(at=2.5)) is None
