"""Models with prescribed motions: mbserve against Exudyn, the same model, one process run.

    python bench/bench_motions.py [--repeat 5]

Exudyn has no Motion item; its own way to prescribe a coordinate is an ObjectConnectorCoordinate
between a ground coordinate and the driven one, with a Python offsetUserFunction (position
level) or, with velocityLevel, offsetUserFunction_t (velocity level). The models here drive the
x coordinate of a block on a JointPrismaticX from the world frame, so the joint's coordinate
and the node's x coincide and both programs solve the same equations. Prints the median solve
time of each (mbserve: solveSeconds; Exudyn: SolveDynamic alone, the better of dense and
sparse), the ratio, and the largest difference of the block's position.
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import exudyn_runner  # noqa: E402

import multibody  # noqa: E402

SINE = json.loads((ROOT.parent / "shared" / "examples" / "motion_sine" / "model.json").read_text())


def velocity_model() -> dict:
    """motion_sine driven at velocity level instead: u = 0.2π cos(2πt) (1 + 0.5 q), u depending on q."""
    doc = copy.deepcopy(SINE)
    doc["name"] = "velocity-level motion of a slider"
    doc["motions"] = [{"motionType": "Custom", "name": "drive", "joint": "slider", "level": "Velocity",
                       "velocity": "0.2*pi*cos(2*pi*t)*(1 + 0.5*q)"}]
    return doc


CASES = {
    # name: (document, Exudyn's user function of (t, q), velocity level?)
    "motion_sine": (SINE, lambda t, q: 0.1 * math.sin(2 * math.pi * t), False),
    "motion_velocity": (velocity_model(), lambda t, q: 0.2 * math.pi * math.cos(2 * math.pi * t) * (1 + 0.5 * q),
                        True),
}


def exudyn_solve(doc: dict, law, velocity: bool, sparse: bool):
    """(solve seconds, block x rows) of doc without its motion, driven by a CoordinateConstraint."""
    plain = dict(doc, motions=[], sensors=[s for s in doc["sensors"] if s["sensorType"] != "Motion"])
    exu, sc, mbs, settings = exudyn_runner.build(plain)
    if sparse:
        settings.linearSolverType = exu.LinearSolverType.EigenSparse
    ground = mbs.AddNode({"nodeType": "PointGround", "referenceCoordinates": [0.0, 0.0, 0.0]})
    m_ground = mbs.AddMarker({"markerType": "NodeCoordinate", "nodeNumber": ground, "coordinate": 0})
    m_block = mbs.AddMarker({"markerType": "NodeCoordinate", "nodeNumber": 0, "coordinate": 0})
    if velocity:
        def offset_t(mbs_, t, item, offset):
            return law(t, mbs_.GetNodeOutput(0, exu.OutputVariableType.Position)[0])
        mbs.AddObject({"objectType": "ConnectorCoordinate", "markerNumbers": [m_ground, m_block],
                       "velocityLevel": True, "offsetUserFunction_t": offset_t})
    else:
        mbs.AddObject({"objectType": "ConnectorCoordinate", "markerNumbers": [m_ground, m_block],
                       "offsetUserFunction": lambda mbs_, t, item, offset: law(t, 0.0)})
    mbs.Assemble()
    started = time.perf_counter()
    mbs.SolveDynamic(settings, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    seconds = time.perf_counter() - started
    return seconds, exudyn_runner.sensor_data(mbs, 0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'model':16s} {'steps':>6s} {'mbserve s':>10s} {'exudyn s':>10s} {'ratio':>7s} {'max |dx|':>10s}")
    for name, (doc, law, velocity) in CASES.items():
        res = multibody.simulate(doc)  # also loads (or compiles) the kernels
        assert res.status == "succeeded", res.error
        ours = statistics.median(multibody.simulate(doc).solver["solveSeconds"] for _ in range(args.repeat))
        theirs = min(statistics.median(exudyn_solve(doc, law, velocity, sparse)[0] for _ in range(args.repeat))
                     for sparse in (False, True))
        x_ours = res.sensors["block_position"].data
        x_theirs = exudyn_solve(doc, law, velocity, False)[1]
        dx = float(np.abs(x_ours[:, 1:] - x_theirs[:, 1:]).max()) if x_ours.shape == x_theirs.shape else math.nan
        print(f"{name:16s} {res.solver['steps']:6d} {ours:10.4f} {theirs:10.4f} {ours / theirs:7.2f} {dx:10.2e}")


if __name__ == "__main__":
    main()
