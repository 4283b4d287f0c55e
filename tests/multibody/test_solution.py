"""The stored solution against Exudyn's own solution file for the same model.

Both files are read with exudyn.utilities.LoadSolutionFile. Tolerances: ODE2 coordinates and
velocities 1e-10 absolute (the two solvers take the same Newton steps: round-off, ~1e-12 seen);
accelerations and algebraic variables 1e-6 relative to (1 + max |Exudyn|), as the sensor
cross-checks (Newton residue amplified by 1/(βh²)). A solution period other than the sensors'
exercises the every-step path (Recorder filters), which must leave the sensors unchanged.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import multibody
from multibody.solution import header

CASES = Path(__file__).resolve().parent / "cases"


@pytest.fixture(scope="module")
def exudyn_cases():
    pytest.importorskip("exudyn")
    sys.path.insert(0, str(CASES))
    import make_cases  # the case builders (Exudyn models); importing also finds exudyn_export
    return make_cases


@pytest.mark.parametrize("case_name, period, initial", [
    ("slider_crank", 0.02, True), ("spherical_and_generic", 0.02, True), ("coordinate_items", 0.03, True),
    ("rk44", 0.01, True), ("static_spring", 0.01, True),
    # writeInitialValues false (Exudyn: no start-time row in the solution or the sensors)
    ("slider_crank", 0.02, False), ("rk44", 0.01, False), ("static_spring_5steps", 0.01, False)])
def test_solution_file_equals_exudyns(exudyn_cases, tmp_path, case_name, period, initial):
    import exudyn as exu
    import exudyn_export as ee
    from exudyn.utilities import LoadSolutionFile
    case = exudyn_cases.build(exudyn_cases.CASES[case_name])
    exudyn_cases.flush_sensors(case)
    ss = case.ss
    doc = ee.export_model(case.mbs, ss, case.solve)
    ss.solution.file.write, ss.solution.file.writePeriod = True, period
    ss.solution.file.writeInitialValues = initial
    ss.solution.file.name, ss.solution.precision = str(tmp_path / "exudyn.txt"), 17  # 17 digits: lossless
    if case.solve["type"] == "Static":
        assert case.mbs.SolveStatic(ss)
    else:
        assert case.mbs.SolveDynamic(ss, solverType=getattr(exu.DynamicSolverType, case.solve["solverType"]))
    ours = multibody.simulate(multibody.merge_settings(doc, {"solution": {
        "file": {"write": True, "writePeriod": period}, "writeInitialValues": initial}}))
    assert ours.status == "succeeded", ours.error
    (tmp_path / "ours.txt").write_text(ours.solution.to_csv())
    ref = LoadSolutionFile(str(tmp_path / "exudyn.txt"), verbose=False)
    got = LoadSolutionFile(str(tmp_path / "ours.txt"), verbose=False)
    assert got["columnsExported"] == ref["columnsExported"]
    R, C = ref["data"], got["data"]
    assert C.shape == R.shape
    np.testing.assert_allclose(C[:, 0], R[:, 0], atol=1e-12, err_msg="row times")
    bounds = np.cumsum([1] + ref["columnsExported"])
    for name, lo, hi in zip(["q", "q_t", "q_tt", "ODE1", "ODE1_t", "lambda"], bounds[:-1], bounds[1:]):
        if hi == lo:
            continue
        err = np.abs(C[:, lo:hi] - R[:, lo:hi]).max()
        tol = 1e-10 if name in ("q", "q_t") else 1e-6 * (1 + np.abs(R[:, lo:hi]).max())
        assert err <= tol, f"{name}: max difference {err:.2e} > {tol:.1e}"
    # the sensors are those of a run without the solution, at Exudyn's times
    plain = multibody.simulate(doc)
    for i in range(case.mbs.systemData.NumberOfSensors()):
        key = case.mbs.GetSensor(i)["name"]
        got, theirs = ours.sensors[key].data, np.array(case.mbs.GetSensorStoredData(i))
        np.testing.assert_allclose(got[:, 0], theirs[:, 0], atol=1e-12, err_msg=key)
        same = np.isin(plain.sensors[key].data[:, 0], got[:, 0])
        np.testing.assert_array_equal(got[np.isin(got[:, 0], plain.sensors[key].data[:, 0])],
                                      plain.sensors[key].data[same], err_msg=key)


def test_solution_is_stored_only_when_asked():
    doc = {"nodes": [{"nodeType": "Point", "referenceCoordinates": [0, 0, 0]}],
           "objects": [{"objectType": "MassPoint", "nodeNumber": 0, "mass": 2.0}],
           "markers": [{"markerType": "BodyPosition", "bodyNumber": 0}],
           "loads": [{"loadType": "ForceVector", "markerNumber": 0, "loadVector": [0, 0, -4.0]}],
           "simulationSettings": {"timeIntegration": {"endTime": 1.0, "numberOfSteps": 100}}}
    assert multibody.simulate(doc).solution is None  # Exudyn's default write=true alone does not store it
    sol = multibody.simulate(doc, store_solution=True).solution
    assert sol.columnsExported == [3, 3, 3, 0, 0, 0, 0]
    assert sol.data.shape == (101, 10)
    # free fall under 4 N on 2 kg: z = -t², ż = -2t, z̈ = -2 (generalized-α is exact for constant force)
    t = sol.data[:, 0]
    np.testing.assert_allclose(sol.data[:, 3], -t ** 2, atol=1e-12)
    np.testing.assert_allclose(sol.data[:, 6], -2 * t, atol=1e-12)
    np.testing.assert_allclose(sol.data[:, 9], -2.0, atol=1e-12)
    d = sol.to_dict()
    assert d["columns"][:4] == ["time", "q0", "q1", "q2"] and len(d["data"]) == 101
    assert d["nodes"] == [{"name": "node0", "nodeType": "Point", "offset": 1, "count": 3}]
    assert header(sol.meta()).splitlines()[4].startswith("#number of written coordinates")
    off = multibody.merge_settings(doc, {"solution": {"file": {"write": True, "writePeriod": 0.1,
                                                               "export": {"velocities": False,
                                                                          "accelerations": False}}}})
    sol = multibody.simulate(off).solution
    assert sol.columnsExported == [3, 0, 0, 0, 0, 0, 0]
    np.testing.assert_allclose(sol.data[:, 0], np.linspace(0, 1, 11), atol=1e-12)


def test_spec_names_are_aliases_of_exudyns():
    """SPEC section 4 names solution.writeSolutionToFile / solutionWritePeriod; Exudyn 1.13.6 keeps
    them as solution.file.write / writePeriod. Both spellings give the same solution."""
    doc = {"nodes": [{"nodeType": "Point", "referenceCoordinates": [0, 0, 0]}],
           "objects": [{"objectType": "MassPoint", "nodeNumber": 0, "mass": 2.0}],
           "markers": [{"markerType": "BodyPosition", "bodyNumber": 0}],
           "loads": [{"loadType": "ForceVector", "markerNumber": 0, "loadVector": [0, 0, -4.0]}],
           "simulationSettings": {"timeIntegration": {"endTime": 1.0, "numberOfSteps": 100}}}
    spec = multibody.simulate(multibody.merge_settings(
        doc, {"solution": {"writeSolutionToFile": True, "solutionWritePeriod": 0.25}})).solution
    exudyn = multibody.simulate(multibody.merge_settings(
        doc, {"solution": {"file": {"write": True, "writePeriod": 0.25}}})).solution
    np.testing.assert_allclose(spec.data[:, 0], [0, 0.25, 0.5, 0.75, 1.0], atol=1e-12)
    np.testing.assert_array_equal(spec.data, exudyn.data)
    # an override under either name replaces the document's under the other (the service's store.solution)
    asked_off = multibody.merge_settings(doc, {"solution": {"writeSolutionToFile": False}})
    assert multibody.simulate(asked_off, store_solution=True).solution is not None
    on = multibody.merge_settings(doc, {"solution": {"writeSolutionToFile": True}})
    assert multibody.simulate(multibody.merge_settings(on, {"solution": {"file": {"write": False}}})).solution is None
    # a bad value is reported at the name given; both names at once is a problem
    bad = multibody.validate_document(multibody.merge_settings(
        doc, {"solution": {"solutionWritePeriod": "often", "writeSolutionToFile": True, "file": {"write": True}}}))
    assert {(p.path, p.message) for p in bad.problems} == {
        ("simulationSettings.solution.solutionWritePeriod", "expected a number, got 'often'"),
        ("simulationSettings.solution.writeSolutionToFile",
         "solution.writeSolutionToFile is another name of solution.file.write; give one of them")}
