"""Cross-checks against Exudyn 1.13.6 on the cases in tests/multibody/cases (made by make_cases.py).

Error measure, per sensor: max |ours - Exudyn| / (1 + max |Exudyn|). Tolerances:
- `_tight` cases (Exudyn's Newton converged to 1e-14, ours likewise): both sit on the same
  discrete solution; what is left is round-off and Newton residue, amplified by 1/(βh²) in
  accelerations and multipliers: 1e-7 on kinematics, 1e-6 on accelerations and forces.
- default-settings cases: Exudyn stops Newton at relTol 1e-8 with modified Newton, so its
  result differs from its own tight result; we allow twice that difference (its largest over
  the case's sensors: the Newton residue of a coupled system spreads over all of them), at
  least 1e-7 (the `_tight` twin gives Exudyn's own error).
- explicit solvers have no Newton: fixed steps agree to round-off (1e-12); DOPRI5 with step
  size control to 1e-9 (its error estimate turns round-off into ~1e-11 step-size differences).
- static cases: full Newton to convergence, 1e-9.
"""
import numpy as np
import pytest

import multibody

from .conftest import CASES, load_json

DYNAMIC_LEVEL = {"Acceleration", "AngularAcceleration", "AngularAccelerationLocal", "Coordinates_tt",
                 "ForceLocal", "TorqueLocal", "Force", "Torque"}
FIXED_TOLERANCE = {"rk44": 1e-12, "dopri5": 1e-12, "dopri5_adaptive": 1e-9, "static_spring": 1e-9,
                   "static_spring_5steps": 1e-9}
ALL_CASES = sorted(p.name for p in CASES.iterdir() if (p / "exudyn.json").exists())


def relative_errors(ours: dict, ref: dict) -> dict[str, float]:
    out = {}
    for name, rs in ref.items():
        R = np.asarray(rs["data"], float)
        C = np.asarray(ours[name], float)
        assert C.shape == R.shape, f"{name}: shape {C.shape} vs Exudyn {R.shape}"
        np.testing.assert_allclose(C[:, 0], R[:, 0], atol=1e-9, err_msg=f"{name}: row times")
        out[name] = float(np.abs(C[:, 1:] - R[:, 1:]).max() / (1.0 + np.abs(R[:, 1:]).max()))
    return out


@pytest.mark.parametrize("case", ALL_CASES)
def test_matches_exudyn(case):
    ref = load_json(CASES / case / "exudyn.json")["sensors"]
    res = multibody.simulate(load_json(CASES / case / "model.json"))
    assert res.status == "succeeded", res.error
    errors = relative_errors({k: s.data for k, s in res.sensors.items()}, ref)
    twin = CASES / f"{case}_tight" / "exudyn.json"
    own = relative_errors({k: v["data"] for k, v in ref.items()}, load_json(twin)["sensors"]) if twin.exists() else {}
    for name, err in errors.items():
        if case in FIXED_TOLERANCE:
            tol = FIXED_TOLERANCE[case]
        elif case.endswith("_tight"):
            tol = 1e-6 if ref[name]["outputVariableType"] in DYNAMIC_LEVEL else 1e-7
        else:
            tol = max(1e-7, 2.0 * max(own.values()))
        assert err <= tol, f"{name} ({ref[name]['outputVariableType']}): relative error {err:.2e} > {tol:.1e}"


IMPLICIT_DEFAULT_CASES = [c for c in ALL_CASES if not c.endswith("_tight")
                          and load_json(CASES / c / "meta.json").get("exudynSolver", {}).get("solverType")
                          in ("GeneralizedAlpha", "TrapezoidalIndex2")]


@pytest.mark.parametrize("case", IMPLICIT_DEFAULT_CASES)
def test_newton_follows_exudyn(case):
    """With Exudyn's default (modified) Newton, the same rules give the same work: Newton
    iterations within 0.1 % (a residual near the tolerance may go either way) and the same
    Jacobian count. (The `_tight` twins iterate at round-off level, where counts are noise.)"""
    meta = load_json(CASES / case / "meta.json")
    res = multibody.simulate(load_json(CASES / case / "model.json"))
    iterations = meta["exudynSolver"]["newtonIterations"]
    assert res.solver["steps"] == meta["exudynSolver"]["steps"]
    assert abs(res.solver["newtonIterations"] - iterations) <= 1 + 0.001 * iterations
    assert res.solver["jacobians"] == meta["exudynJacobianEvaluations"]
