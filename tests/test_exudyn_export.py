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


def converged_settings(steps: int, tolerance: float):
    """1 s in `steps` steps, full Newton to `tolerance`: Exudyn and mbserve both converged, so they
    compute the same discrete solution; no output files."""
    settings = exu.SimulationSettings()
    settings.timeIntegration.endTime, settings.timeIntegration.numberOfSteps = 1.0, steps
    newton = settings.timeIntegration.newton
    newton.relativeTolerance = newton.absoluteTolerance = tolerance
    newton.useModifiedNewton = False
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    return settings


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
    settings = converged_settings(200, 1e-14)
    ours = multibody.simulate(export(mbs, settings))
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings)
    for i, series in enumerate(ours.sensors.values()):
        theirs = np.asarray(mbs.GetSensorStoredData(i))
        assert series.columns[1:] == [f"H{r}{c}" for r in range(4) for c in range(4)]
        assert theirs.shape == series.data.shape == (101, 17)  # a row per 0.01 s (the default sensor period)
        assert np.abs(series.data - theirs).max() <= 1e-10, series.item
        assert np.ptp(theirs[:, 1:], axis=0).max() > (0.5 if i < 2 else -1), "the body's frames turn and move"


# module-level constants, as Exudyn scripts define them: they become the document's parameters
AMPLITUDE, OMEGA, T_SWITCH = 2.5, 7.0, 0.3


def sweep(t, f0, f1):
    return np.sin(2 * np.pi * (f0 + 0.5 * (f1 - f0) * t) * t)


def pushed_on_a_spring():
    """A mass point on a nonlinear Cartesian spring, driven by a load that switches at T_SWITCH;
    both are Python user functions (lists, numpy arrays, a helper function, an if statement)."""
    from exudyn.utilities import (CartesianSpringDamper, LoadForceVector, MarkerBodyPosition, MassPoint,
                                  NodePoint, ObjectGround, SensorNode)
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    node = mbs.AddNode(NodePoint(referenceCoordinates=[0, 0, 0], initialVelocities=[0.2, 0, -0.1]))
    body = mbs.AddObject(MassPoint(mass=2, nodeNumber=node))
    ground = mbs.AddObject(ObjectGround())
    marker = mbs.AddMarker(MarkerBodyPosition(bodyNumber=body))
    fixed = mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground))

    def drive(mbs, t, load):
        f = AMPLITUDE * sweep(t, 1, 3)
        if t > T_SWITCH:
            f = 0.5 * np.cos(OMEGA * t)
        return [f * load[0], 0, load[2] * t**2]

    def spring(mbs, t, itemNumber, u, v, k, d, offset):
        return np.array([k[0] * u[0] + 3 * k[0] * u[0]**3, k[1] * u[1], k[2] * np.sign(u[2]) * abs(u[2])**1.5]) \
            + np.array(d) * v

    mbs.AddObject(CartesianSpringDamper(markerNumbers=[fixed, marker], stiffness=[40, 50, 60], damping=[0.5, 0.2, 0.1],
                                        springForceUserFunction=spring))
    mbs.AddLoad(LoadForceVector(markerNumber=marker, loadVector=[3, 0, -2], loadVectorUserFunction=drive))
    for ov in (exu.OutputVariableType.Position, exu.OutputVariableType.Velocity):
        mbs.AddSensor(SensorNode(nodeNumber=node, outputVariableType=ov, storeInternal=True))
    mbs.Assemble()
    return sc, mbs, converged_settings(400, 1e-13)


def test_translated_python_user_functions_give_exudyns_results_with_them():
    sc, mbs, settings = pushed_on_a_spring()
    doc = export(mbs, settings, user_functions="translate")
    assert doc["parameters"] == {"AMPLITUDE": 2.5, "T_SWITCH": 0.3, "OMEGA": 7.0}
    drive = doc["loads"][0]["loadVectorUserFunction"]
    assert drive[1] == "0" and drive[2] == "loadVector[2] * t ** 2" and "if t > T_SWITCH else" in drive[0]
    spring = doc["objects"][2]["springForceUserFunction"]
    assert spring[0] == "stiffness[0] * displacement[0] + 3 * stiffness[0] * displacement[0] ** 3 + " \
                        "damping[0] * velocity[0]"
    ours = multibody.simulate(doc)
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings)  # with the Python functions
    for i, series in enumerate(ours.sensors.values()):
        theirs = np.asarray(mbs.GetSensorStoredData(i))
        assert theirs.shape == series.data.shape
        assert np.abs(series.data - theirs).max() <= 1e-10 * np.abs(theirs).max()
        assert np.ptp(theirs[:, 1]) > 0.01  # it moves
    with pytest.raises(ExportError):  # the default is still SPEC section 6's error
        export(mbs, settings)


def test_a_function_without_an_expression_form_keeps_the_error_with_the_reason():
    sc, mbs, settings = pushed_on_a_spring()

    def from_the_state(mbs, t, load):
        return [mbs.systemData.GetTime(), 0, 0]

    def looping(mbs, t, load):
        total = 0
        while total < 1:
            total += t + 0.1
        return [total, 0, 0]

    mbs.SetLoadParameter(0, "loadVectorUserFunction", from_the_state)
    with pytest.raises(ExportError) as err:
        export(mbs, settings, user_functions="translate")
    (path, message), = err.value.problems
    assert path == "loads[0] (load0).loadVectorUserFunction"
    assert "write it as an expression" in message
    assert message.endswith("(it could not be translated: line 2: reads mbs.systemData (the system's state))")
    mbs.SetLoadParameter(0, "loadVectorUserFunction", looping)
    with pytest.raises(ExportError) as err:
        export(mbs, settings, user_functions="translate")
    assert "could not be translated: line 3: a while loop has no expression form" in err.value.problems[0][1]


def test_a_translation_that_disagrees_with_the_function_is_refused():
    """float32 constants: Python computes in single precision, the expression in double; they
    differ by ~1e-8, so the translation is not used."""
    sc, mbs, settings = pushed_on_a_spring()
    gain = np.float32(0.1)

    def single(mbs, t, load):
        return [gain * t, 0, 0]  # float32: a Python float does not widen it

    mbs.SetLoadParameter(0, "loadVectorUserFunction", single)
    with pytest.raises(ExportError) as err:
        export(mbs, settings, user_functions="translate")
    message = err.value.problems[0][1]
    assert "could not be translated: its translation ['gain * t', '0', '0'] gives" in message
    assert "where the function gives" in message


def norm(vector):  # as exudyn.basicUtilities.NormL2: a loop over the vector
    value = 0
    for x in vector:
        value += x**2
    return value**0.5


def test_lambdas_loops_and_helper_functions_translate():
    sc, mbs, settings = pushed_on_a_spring()
    mbs.SetLoadParameter(0, "loadVectorUserFunction", lambda mbs, t, load: [norm(load) * t, 0, -load[2]])
    doc = export(mbs, settings, user_functions="translate")
    assert doc["loads"][0]["loadVectorUserFunction"] == [
        "(0 + loadVector[0] ** 2 + loadVector[1] ** 2 + loadVector[2] ** 2) ** 0.5 * t", "0", "-loadVector[2]"]


def test_symbolic_user_functions_translate_from_the_python_functions_they_were_made_from():
    from exudyn.utilities import LoadForceVector, MarkerBodyPosition, MassPoint, NodePoint, ObjectGround, SensorNode
    from exudyn.utilities import ObjectConnectorSpringDamper as SpringDamper
    from mbserve.exudyn import keep_symbolic_sources
    esym = exu.symbolic
    omega = 20 * np.pi  # printed by the symbolic object as 62.8319

    def drive(mbs, t, loadVector):  # a symbolic vector argument: arithmetic on it is elementwise
        return esym.cos(omega * t) * loadVector

    def spring(mbs, t, itemNumber, deltaL, deltaL_t, stiffness, damping, force):
        return damping * deltaL_t + stiffness * esym.sign(deltaL) * esym.abs(deltaL) ** 1.2

    def system(made_after_keep: bool):
        import exudyn.utilities
        sc = exu.SystemContainer()
        mbs = sc.AddSystem()
        node = mbs.AddNode(NodePoint(referenceCoordinates=[1.05, 0, 0]))
        body = mbs.AddObject(MassPoint(mass=1.0, nodeNumber=node))
        ground = mbs.AddObject(ObjectGround())
        marker = mbs.AddMarker(MarkerBodyPosition(bodyNumber=body))
        fixed = mbs.AddMarker(MarkerBodyPosition(bodyNumber=ground))
        spring_item = mbs.AddObject(SpringDamper(markerNumbers=[fixed, marker], referenceLength=1.0, stiffness=100,
                                                 damping=1, springForceUserFunction=spring))
        load = mbs.AddLoad(LoadForceVector(markerNumber=marker, loadVector=[3, 0, 0], loadVectorUserFunction=drive))
        if made_after_keep:
            keep_symbolic_sources()
        create = exudyn.utilities.CreateSymbolicUserFunction
        mbs.SetObjectParameter(spring_item, "springForceUserFunction",
                               create(mbs, spring, "springForceUserFunction", spring_item))
        mbs.SetLoadParameter(load, "loadVectorUserFunction", create(mbs, drive, "loadVectorUserFunction", load))
        mbs.AddSensor(SensorNode(nodeNumber=node, outputVariableType=exu.OutputVariableType.Position,
                                 storeInternal=True))
        mbs.Assemble()
        return sc, mbs, converged_settings(400, 1e-13)

    import exudyn.advancedUtilities
    import exudyn.utilities
    made = exudyn.utilities.CreateSymbolicUserFunction, exudyn.advancedUtilities.CreateSymbolicUserFunction
    try:
        sc, mbs, settings = system(made_after_keep=False)  # its source unknown: an error that says why
        with pytest.raises(ExportError) as err:
            export(mbs, settings, user_functions="translate")
        assert "keep_symbolic_sources" in err.value.problems[0][1]
        sc, mbs, settings = system(made_after_keep=True)
        doc = export(mbs, settings, user_functions="translate")
    finally:
        exudyn.utilities.CreateSymbolicUserFunction, exudyn.advancedUtilities.CreateSymbolicUserFunction = made
    assert doc["parameters"] == {"omega": omega}  # full precision, not the symbolic print's 62.8319
    assert doc["loads"][0]["loadVectorUserFunction"] == [f"cos(omega * t) * loadVector[{i}]" for i in range(3)]
    ours = multibody.simulate(doc)
    assert ours.status == "succeeded", ours.error
    exu.SolveDynamic(mbs, settings)  # with the symbolic functions
    theirs = np.asarray(mbs.GetSensorStoredData(0))
    series = next(iter(ours.sensors.values())).data
    assert theirs.shape == series.shape and np.ptp(theirs[:, 1]) > 1e-3  # it moves
    assert np.abs(series - theirs).max() <= 1e-10 * np.abs(theirs).max()
