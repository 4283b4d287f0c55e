"""mbserve.exudyn.export: a system built in Exudyn, written as a document, runs in mbserve as the
shared example it was built from, and gives Exudyn's own results for it."""
import copy

import numpy as np
import pytest

import multibody
from mbserve.exudyn import ExportError, export
from multibody.settings import resolve
from tests.conftest import example

exu = pytest.importorskip("exudyn")

CASES = ["mini", "spring_slider", "chain_1", "chain_10"]  # the shared examples without motions
ADD = (("nodes", "AddNode"), ("objects", "AddObject"), ("markers", "AddMarker"), ("loads", "AddLoad"),
       ("sensors", "AddSensor"))


def set_settings(target, values: dict) -> None:
    for key, value in values.items():
        if isinstance(value, dict):
            set_settings(getattr(target, key), value)
        else:
            setattr(target, key, value)


def build(doc: dict):
    """The document's items added to an Exudyn MainSystem as the dictionaries they are."""
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    for kind, add in ADD:
        for item in doc[kind]:
            if kind == "sensors":  # enums by value, and the data kept for the comparison
                item = {**item, "storeInternal": True,
                        "outputVariableType": getattr(exu.OutputVariableType, item["outputVariableType"])}
            getattr(mbs, add)(item)
    settings = exu.SimulationSettings()
    set_settings(settings, doc.get("simulationSettings", {}))
    mbs.Assemble()
    return sc, mbs, settings


@pytest.mark.parametrize("case", CASES)
def test_an_exported_exudyn_system_runs_as_the_example_and_as_exudyn(case):
    doc = example(case)
    sc, mbs, settings = build(doc)
    exported = export(mbs, settings, solve=doc["solve"])
    # only the entries that differ from Exudyn's defaults, which give the example's settings
    assert resolve(exported["simulationSettings"]) == resolve(doc["simulationSettings"])
    ours, original = multibody.simulate(exported), multibody.simulate(doc)
    assert ours.status == "succeeded" and set(ours.sensors) == set(original.sensors)
    settings.timeIntegration.verboseMode = 0
    settings.solutionSettings.writeSolutionToFile = False  # tests own their data: no file in the working directory
    exu.SolveDynamic(mbs, settings)
    for i, (name, series) in enumerate(ours.sensors.items()):
        assert np.array_equal(series.data, original.sensors[name].data)  # the same document, the same numbers
        theirs = np.asarray(mbs.GetSensorStoredData(i))
        assert theirs.shape == series.data.shape
        # the same scheme and steps: Exudyn's solution, to Newton's tolerance
        scale = 1.0 + np.abs(theirs).max()
        assert np.abs(series.data - theirs).max() <= 1e-6 * scale, name


def test_python_user_functions_are_errors_that_name_the_item_and_show_the_expression_form():
    doc = copy.deepcopy(example("mini"))
    sc, mbs, settings = build(doc)

    def pull(mbs, t, load):
        return [0, 0.1 * np.sin(t), 0]

    mbs.SetLoadParameter(0, "loadVectorUserFunction", pull)
    with pytest.raises(ExportError) as err:
        export(mbs, settings)
    (path, message), = err.value.problems
    assert path == "loads[0] (load0).loadVectorUserFunction"
    assert "pull(mbs, t, load)" in message and "write it as an expression" in message
    assert 'a list of 3 strings (one per component) over t, loadVector[0], loadVector[1], loadVector[2]' in message


def test_system_user_functions_and_general_contacts_are_errors_not_dropped():
    doc = copy.deepcopy(example("mini"))
    sc, mbs, settings = build(doc)

    def before_step(mbs, t):
        return True

    mbs.SetPreStepUserFunction(before_step)
    mbs.AddGeneralContact()
    with pytest.raises(ExportError) as err:
        export(mbs, settings)
    paths = [path for path, _ in err.value.problems]
    assert paths == ["mbs.SetPreStepUserFunction", "mbs.AddGeneralContact"]
    assert "before_step" in err.value.problems[0][1] and "GeneralContact" in err.value.problems[1][1]


def test_export_reads_the_system_without_importing_exudyn():
    import subprocess
    import sys
    code = "import sys, mbserve.exudyn; print('exudyn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_node_and_body_homogeneous_transformations_are_exudyns():
    """A body tumbling under gravity: the 4x4 frame of its node, of a point on it and of the
    ground, row by row, as Exudyn 1.13.6 writes them."""
    from exudyn.utilities import InertiaCuboid, ObjectGround, SensorBody, SensorNode
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround(referencePosition=[0.5, 0, -1]))
    body = mbs.CreateRigidBody(inertia=InertiaCuboid(1000, [1, 0.2, 0.3]), referencePosition=[1, 2, 3],
                               initialVelocity=[0.1, 0, 0.2], initialAngularVelocity=[1, 2, 3],
                               gravity=[0, -9.81, 0])
    ht = exu.OutputVariableType.HomogeneousTransformation
    sensors = [SensorNode(nodeNumber=mbs.GetObject(body)["nodeNumber"], outputVariableType=ht),
               SensorBody(bodyNumber=body, localPosition=[0.5, 0.1, -0.2], outputVariableType=ht),
               SensorBody(bodyNumber=ground, localPosition=[0, 1, 0], outputVariableType=ht)]
    for sensor in sensors:
        sensor.storeInternal = True
        mbs.AddSensor(sensor)
    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.endTime, settings.timeIntegration.numberOfSteps = 1.0, 200
    newton = settings.timeIntegration.newton  # both converged: the same discrete solution
    newton.relativeTolerance = newton.absoluteTolerance = 1e-14
    newton.useModifiedNewton = False
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    ours = multibody.simulate(export(mbs, settings))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings)
    for i, series in enumerate(ours.sensors.values()):
        theirs = np.asarray(mbs.GetSensorStoredData(i))
        assert series.columns[1:] == [f"H{r}{c}" for r in range(4) for c in range(4)]
        assert theirs.shape == series.data.shape == (101, 17)  # a row per 0.01 s (the default sensor period)
        assert np.abs(series.data - theirs).max() <= 1e-10, series.item
        assert np.ptp(theirs[:, 1:], axis=0).max() > (0.5 if i < 2 else -1), "the body's frames turn and move"
