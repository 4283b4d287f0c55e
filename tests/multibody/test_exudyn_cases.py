"""Cross-checks against Exudyn 1.13.6 on the cases in tests/multibody/cases (made by make_cases.py).

`_tight` cases were solved by Exudyn with Newton tolerances 1e-14: both codes then sit on the
same discrete solution, so the difference is round-off and Newton residue: 1e-7 relative to
the sensor's magnitude on kinematics, 1e-6 on accelerations and forces (which amplify Newton
residue by 1/(βh²)). With default settings Exudyn stops Newton at relTol 1e-8; its own
default-vs-tight difference reaches 7e-4 relative on forces and accelerations (slider_crank,
newmark_index3), so those get 2e-3 there, kinematics 1e-7.
"""
import numpy as np
import pytest

import multibody

from .conftest import CASES, load_json

DYNAMIC_LEVEL = {"Acceleration", "AngularAcceleration", "AngularAccelerationLocal", "Coordinates_tt",
                 "ForceLocal", "TorqueLocal", "Force", "Torque"}


# known differences; strict: they fail once they pass
PENDING = {"slider_crank": "joint forces 1.7e-2 off with default Newton settings (Exudyn's own default-vs-tight: "
                           "7e-4): the modified-Newton path (777 Jacobians vs Exudyn's 453); slider_crank_tight "
                           "agrees to 4e-9"}


def case_names(tight: bool):
    names = sorted(p.name for p in CASES.iterdir()
                   if (p / "exudyn.json").exists() and p.name.endswith("_tight") == tight)
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=PENDING[n])) if n in PENDING else n
            for n in names]


def compare(case: str, kin_tol: float, dyn_tol: float):
    doc = load_json(CASES / case / "model.json")
    ref = load_json(CASES / case / "exudyn.json")
    res = multibody.simulate(doc)
    assert res.status == "succeeded", res.error
    for name, rs in ref["sensors"].items():
        R = np.asarray(rs["data"], float)
        C = res.sensors[name].data
        assert C.shape == R.shape, f"{name}: shape {C.shape} vs Exudyn {R.shape}"
        np.testing.assert_allclose(C[:, 0], R[:, 0], atol=1e-9, err_msg=f"{name}: row times")
        scale = 1.0 + np.abs(R[:, 1:]).max()
        tol = dyn_tol if rs["outputVariableType"] in DYNAMIC_LEVEL else kin_tol
        err = np.abs(C[:, 1:] - R[:, 1:]).max() / scale
        assert err <= tol, f"{name} ({rs['outputVariableType']}): relative error {err:.2e} > {tol:.0e}"


@pytest.mark.parametrize("case", case_names(tight=True))
def test_matches_exudyn_tight(case):
    compare(case, kin_tol=1e-7, dyn_tol=1e-6)


@pytest.mark.parametrize("case", case_names(tight=False))
def test_matches_exudyn_default_settings(case):
    compare(case, kin_tol=1e-7, dyn_tol=2e-3)
