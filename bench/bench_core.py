"""Numeric core vs Exudyn 1.13.6 on the same model documents, measured in one process run.

    python bench/bench_core.py [--repeat 3] [--models mini,slider_crank,chain_1,...] [--profile 15]

Prints per model the median solve time of mbserve (solveSeconds: the solve alone) and of
Exudyn (SolveDynamic alone; dense and sparse linear solver, the better one counted), the
ratio mbserve/Exudyn and steps/s, and whether each ratio meets the target (issue 12: every
model <= 1.5, mini and chain_1 <= 1.0, chains N >= 10 <= 0.6); the fitted exponent of the
per-step cost over the chain length; and the peak RSS (VmHWM) of a chain_200 and a chain_1000
solve, each in a fresh process (mbserve and Exudyn), when those models are among --models
(chain_1000, bench_load's chain of 1000 blocks, is not timed by default: --models chain_1000).

Motions are no Exudyn feature: Exudyn solves them as bench/bench_motions.py builds them (an
ObjectConnectorCoordinate with a Python offset user function).
"""
from __future__ import annotations

import argparse
import cProfile
import json
import math
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_load  # noqa: E402
import bench_motions  # noqa: E402
import exudyn_runner  # noqa: E402

import multibody  # noqa: E402

EXAMPLES = ROOT.parent / "shared" / "examples"
CASES = ROOT / "tests" / "multibody" / "cases"
EYE_HT = [[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0, 1.0]]


def mass_point(connector: dict, solver: str = "GeneralizedAlpha") -> dict:
    """A mass point on a spring to ground under gravity, as Exudyn's mainSystemExtensions tests
    build it (CreateMassPoint + CreateCartesianSpringDamper / CreateSpringDamper)."""
    return {
        "nodes": [{"nodeType": "Point", "referenceCoordinates": [1.0, 0, 0], "initialVelocities": [0, 0.5, 0]}],
        "objects": [{"objectType": "Ground"}, {"objectType": "MassPoint", "nodeNumber": 0, "mass": 2.0},
                    dict(connector, markerNumbers=[0, 1])],
        "markers": [{"markerType": "BodyPosition", "bodyNumber": 0, "localPosition": [0, 0, 0]},
                    {"markerType": "BodyPosition", "bodyNumber": 1, "localPosition": [0, 0, 0]},
                    {"markerType": "BodyMass", "bodyNumber": 1}],
        "loads": [{"loadType": "MassProportional", "markerNumber": 2, "loadVector": [0, -9.81, 0]}],
        "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position"}],
        "simulationSettings": {"timeIntegration": {"endTime": 2.0, "numberOfSteps": 2000},
                               "solution": {"sensors": {"writePeriod": 0.01}}},
        "solve": {"type": "Dynamic", "solverType": solver},
    }


def planar_double_pendulum() -> dict:
    """Two planar rigid bodies (RigidBody2D) on JointRevolute2D joints under gravity (issue 13's planar family)."""
    link = lambda k: {"nodeType": "RigidBody2D", "referenceCoordinates": [0.5 + k, 0.0, 0.0]}  # noqa: E731
    body = lambda k: {"objectType": "RigidBody2D", "nodeNumber": k, "mass": 1.0, "inertia": 1.0 / 12}  # noqa: E731
    at = lambda b, x: {"markerType": "BodyPosition", "bodyNumber": b, "localPosition": [x, 0, 0]}  # noqa: E731
    return {
        "nodes": [link(0), link(1)],
        "objects": [{"objectType": "Ground"}, body(0), body(1),
                    {"objectType": "JointRevolute2D", "markerNumbers": [0, 1]},
                    {"objectType": "JointRevolute2D", "markerNumbers": [2, 3]}],
        "markers": [at(0, 0.0), at(1, -0.5), at(1, 0.5), at(2, -0.5),
                    {"markerType": "BodyMass", "bodyNumber": 1}, {"markerType": "BodyMass", "bodyNumber": 2}],
        "loads": [{"loadType": "MassProportional", "markerNumber": m, "loadVector": [0, -9.81, 0]} for m in (4, 5)],
        "sensors": [{"sensorType": "Node", "nodeNumber": 1, "outputVariableType": "Position"}],
        "simulationSettings": {"timeIntegration": {"endTime": 2.0, "numberOfSteps": 2000},
                               "solution": {"sensors": {"writePeriod": 0.01}}},
        "solve": {"type": "Dynamic", "solverType": "GeneralizedAlpha"},
    }


def rolling_coin() -> dict:
    """A coin tilted by 5° spinning about the vertical while it rolls on the plane z = 0 under gravity
    (Exudyn's rollingCoinTest, larger; JointRollingDisc, issue 13), with consistent initial velocities:
    the center moves with ω × p0 about the contact point, θ̇ = Gᵀω/4 (G = 2[-θv | θ0 I + θ̃v])."""
    tilt, r, mass = math.radians(5.0), 0.3, 2.0
    theta = np.array([math.cos(tilt / 2), 0.0, math.sin(tilt / 2), 0.0])
    center, omega = np.array([r * math.sin(tilt), 0.0, r * math.cos(tilt)]), np.array([0.0, 0.0, 12.0])
    t0, t1, t2, t3 = theta
    G = 2 * np.array([[-t1, t0, -t3, t2], [-t2, t3, t0, -t1], [-t3, -t2, t1, t0]])
    return {
        "nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [*center, *theta],
                   "initialVelocities": [*np.cross(omega, center), *(G.T @ omega / 4)]}],
        "objects": [{"objectType": "Ground"},
                    {"objectType": "RigidBody", "nodeNumber": 0, "mass": mass,
                     "inertia": [0.5 * mass * r * r, 0.25 * mass * r * r, 0.25 * mass * r * r, 0, 0, 0]},
                    {"objectType": "JointRollingDisc", "markerNumbers": [0, 1], "discRadius": r}],
        "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1},
                    {"markerType": "BodyMass", "bodyNumber": 1}],
        "loads": [{"loadType": "MassProportional", "markerNumber": 2, "loadVector": [0, 0, -9.81]}],
        "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position"}],
        "simulationSettings": {"timeIntegration": {"endTime": 2.0, "numberOfSteps": 2000},
                               "solution": {"sensors": {"writePeriod": 0.01}}},
        "solve": {"type": "Dynamic", "solverType": "GeneralizedAlpha"},
    }


def sphere_contact() -> dict:
    """A spinning ball (Euler parameters) thrown at a ground sphere under gravity, bouncing with the Gonthier/
    Carvalho-Martins impact model and regularized friction (ObjectContactSphereSphere, a NodeGenericData of 4
    data coordinates, Exudyn's discontinuous iteration; issue 13)."""
    r, mass = 0.1, 1.6
    return {
        "nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [0.01, 0, 2 * r + 0.02, 1, 0, 0, 0],
                   "initialVelocities": [0.3, 0.1, -1.0, 0, 5.0, 0, 2.0]},
                  {"nodeType": "GenericData", "numberOfDataCoordinates": 4, "initialCoordinates": [0.02, 0, 0, 0]}],
        "objects": [{"objectType": "Ground"},
                    {"objectType": "RigidBody", "nodeNumber": 0, "mass": mass,
                     "inertia": [0.4 * mass * r * r] * 3 + [0, 0, 0]},
                    {"objectType": "ContactSphereSphere", "markerNumbers": [0, 1], "nodeNumber": 1,
                     "spheresRadii": [r, r], "contactStiffness": 1e5, "contactDamping": 20.0,
                     "dynamicFriction": 0.3, "frictionProportionalZone": 0.01, "impactModel": 2,
                     "restitutionCoefficient": 0.7, "minimumImpactVelocity": 0.01}],
        "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1}],
        "loads": [{"loadType": "ForceVector", "markerNumber": 1, "loadVector": [0, 0, -9.81 * mass]}],
        "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position"},
                    {"sensorType": "Object", "objectNumber": 2, "outputVariableType": "Force"}],
        # fixed steps: Exudyn's adaptive ones with recommended step sizes follow rules of their own (issue 13)
        "simulationSettings": {"timeIntegration": {"endTime": 0.2, "numberOfSteps": 2000, "adaptiveStep": False,
                                                   "discontinuous": {"useRecommendedStepSize": False}},
                               "solution": {"sensors": {"writePeriod": 0.001}}},
        "solve": {"type": "Dynamic", "solverType": "GeneralizedAlpha"},
    }


def rotvec_top() -> dict:
    """A heavy top on a NodeRigidBodyRotVecLG (Lie group updates in generalized-α): pinned at the origin by a
    spherical joint, center of mass 0.5 above it, tilted 0.3 rad about x, spinning at 30 rad/s about its axis
    (the node's rates are ω̄)."""
    tilt, com, mass = 0.3, 0.5, 1.0
    return {
        "nodes": [{"nodeType": "RigidBodyRotVecLG", "referenceCoordinates": [0, 0, 0, tilt, 0, 0],
                   "initialVelocities": [0, 0, 0, 0, 0, 30.0]}],
        "objects": [{"objectType": "Ground"},
                    {"objectType": "RigidBody", "nodeNumber": 0, "mass": mass, "centerOfMass": [0, 0, com],
                     "inertia": [0.02 + mass * com ** 2, 0.02 + mass * com ** 2, 0.01, 0, 0, 0]},
                    {"objectType": "JointSpherical", "markerNumbers": [0, 1]}],
        "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1},
                    {"markerType": "BodyMass", "bodyNumber": 1}],
        "loads": [{"loadType": "MassProportional", "markerNumber": 2, "loadVector": [0, 0, -9.81]}],
        "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "RotationMatrix"}],
        "simulationSettings": {"timeIntegration": {"endTime": 2.0, "numberOfSteps": 2000},
                               "solution": {"sensors": {"writePeriod": 0.01}}},
        "solve": {"type": "Dynamic", "solverType": "GeneralizedAlpha"},
    }


def generic_ode2_chain(n: int = 100) -> dict:
    """A chain of n masses on springs, fixed at one end, as one ObjectGenericODE2 with sparse M, K and D
    (triplets) on one NodeGenericODE2, started with a displacement of the free end (issue 13)."""
    k, m = 1000.0, 0.1
    stiffness = [[i, i, 2 * k if i < n - 1 else k] for i in range(n)] \
        + [[i, j, -k] for i in range(n - 1) for j in (i + 1,)] + [[i + 1, i, -k] for i in range(n - 1)]
    sparse = lambda triplets: {"numberOfRows": n, "numberOfColumns": n, "triplets": triplets}  # noqa: E731
    return {
        "nodes": [{"nodeType": "GenericODE2", "numberOfODE2Coordinates": n,
                   "initialCoordinates": [0.01 * (i + 1) / n for i in range(n)],
                   "referenceCoordinates": [0.0] * n, "initialCoordinates_t": [0.0] * n}],  # Exudyn needs all
        "objects": [{"objectType": "GenericODE2", "nodeNumbers": [0], "massMatrix": sparse([[i, i, m] for i in range(n)]),
                     "stiffnessMatrix": sparse(stiffness),
                     "dampingMatrix": sparse([[i, j, 1e-3 * v] for i, j, v in stiffness])}],
        "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Coordinates"}],
        "simulationSettings": {"timeIntegration": {"endTime": 1.0, "numberOfSteps": 1000},
                               "solution": {"sensors": {"writePeriod": 0.01}}},
        "solve": {"type": "Dynamic", "solverType": "GeneralizedAlpha"},
    }


CARTESIAN = {"objectType": "ConnectorCartesianSpringDamper", "stiffness": [500.0, 500.0, 500.0],
             "damping": [2.0, 2.0, 2.0], "offset": [1.0, 0, 0]}
SPRING = {"objectType": "ConnectorSpringDamper", "stiffness": 500.0, "damping": 2.0, "referenceLength": 1.0}


def ancf_cable(n: int = 8) -> dict:
    """A cable pendulum of n ANCFCable2D elements (2 m, steel-like wire), pinned at its first node, falling from
    the horizontal under gravity on its nodes (issue 13's flexible family)."""
    h = 2.0 / n
    return {
        "nodes": [{"nodeType": "PointGround"}]
        + [{"nodeType": "Point2DSlope1", "referenceCoordinates": [k * h, 0.0, 1.0, 0.0]} for k in range(n + 1)],
        "objects": [{"objectType": "ANCFCable2D", "nodeNumbers": [k + 1, k + 2], "length": h, "massPerLength": 0.1,
                     "bendingStiffness": 2.0, "axialStiffness": 1e4, "bendingDamping": 0.01} for k in range(n)]
        + [{"objectType": "ConnectorCoordinate", "markerNumbers": [0, c]} for c in (1, 2)],
        "markers": [{"markerType": "NodeCoordinate", "nodeNumber": 0, "coordinate": 0}]
        + [{"markerType": "NodeCoordinate", "nodeNumber": 1, "coordinate": c} for c in (0, 1)]
        + [{"markerType": "NodePosition", "nodeNumber": k + 1} for k in range(n + 1)],
        "loads": [{"loadType": "ForceVector", "markerNumber": 3 + k, "loadVector": [0, -9.81 * 0.1 * h, 0]}
                  for k in range(n + 1)],
        "sensors": [{"sensorType": "Node", "nodeNumber": n + 1, "outputVariableType": "Position"}],
        "simulationSettings": {"timeIntegration": {"endTime": 1.0, "numberOfSteps": 1000},
                               "solution": {"sensors": {"writePeriod": 0.01}}},
        "solve": {"type": "Dynamic", "solverType": "GeneralizedAlpha"},
    }


def user_function_load() -> dict:
    """mass_point(SPRING) with a force F_y = 5 sin(10 t) given as a user-function expression."""
    doc = mass_point(SPRING)
    doc["loads"].append({"loadType": "ForceVector", "markerNumber": 1, "loadVector": [0, 5.0, 0],
                         "loadVectorUserFunction": ["0", "loadVector[1]*sin(10*t)", "0"]})
    return doc


# the Python user functions Exudyn runs for the models' expressions: (list, index, parameter) -> function
PYTHON_USER_FUNCTIONS = {"user_function_load": {
    ("loads", 1, "loadVectorUserFunction"): lambda mbs, t, load: [0, load[1] * math.sin(10 * t), 0]}}
MODELS = {  # name: model document, or a function making one
    "mini": EXAMPLES / "mini" / "model.json",
    "motion_sine": lambda: bench_motions.CASES["motion_sine"][0],
    "motion_velocity": lambda: bench_motions.CASES["motion_velocity"][0],
    "revolute_prismatic_test": CASES / "revolute_prismatic_testmodel" / "model.json",
    "mass_point_cartesian": lambda: mass_point(CARTESIAN),
    "explicit_midpoint": lambda: mass_point(SPRING, "ExplicitMidpoint"),
    "user_function_load": user_function_load,
    "slider_crank": CASES / "slider_crank" / "model.json",
    "planar_double_pendulum": planar_double_pendulum,
    "rolling_coin": rolling_coin,
    "rotvec_top": rotvec_top,
    "sphere_contact": sphere_contact,
    "generic_ode2_chain": generic_ode2_chain,
    "ancf_cable": ancf_cable,
    "chain_1": EXAMPLES / "chain_1" / "model.json",
    "chain_10": EXAMPLES / "chain_10" / "model.json",
    "chain_50": EXAMPLES / "chain_50" / "model.json",
    "chain_200": EXAMPLES / "chain_200" / "model.json",
    "chain_1000": lambda: bench_load.chain(1000),
}
TIMED_BY_DEFAULT = [name for name in MODELS if name != "chain_1000"]
RSS_MODELS = ("chain_200", "chain_1000")


def model(name: str) -> dict:
    source = MODELS[name]
    return source() if callable(source) else json.loads(source.read_text())


def target(name: str) -> float:
    """The issue's target for the ratio mbserve/Exudyn."""
    if name in ("mini", "chain_1"):
        return 1.0
    if name.startswith("chain_"):
        return 0.6
    return 1.5


def exudyn_seconds(name: str, doc: dict, sparse: bool) -> float:
    """Exudyn's solve time of the model (motions as bench_motions builds them)."""
    if name in bench_motions.CASES:
        _, law, velocity = bench_motions.CASES[name]
        return bench_motions.exudyn_solve(doc, law, velocity, sparse)[0]
    return exudyn_runner.solve(doc, sparse=sparse, functions=PYTHON_USER_FUNCTIONS.get(name))[0]


def median_time(fn, repeat: int) -> float:
    return statistics.median(fn() for _ in range(repeat))


# A fresh process solves the model document in a file with one program (mbserve, or Exudyn through
# exudyn_runner with its sparse solver; nothing else imported) and prints its peak resident set
# (VmHWM, kB).
RSS_SCRIPT = """
import json, sys
sys.path[:0] = [{root!r}, {bench!r}]
doc = json.load(open({model!r}))
if {which!r} == "mbserve":
    import multibody
    status = multibody.simulate(doc)
    assert status.status == "succeeded", status.error
else:
    import exudyn_runner
    exudyn_runner.solve(doc, sparse=True)  # dense LU at N = 1000 would take minutes
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))
"""


def peak_rss_mb(doc: dict, which: str) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(doc, f)
        f.flush()
        code = RSS_SCRIPT.format(bench=str(Path(__file__).resolve().parent), root=str(ROOT), model=f.name,
                                 which=which)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1]) / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", default=",".join(TIMED_BY_DEFAULT))
    ap.add_argument("--json", help="also write the table here")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="also print the N functions with the most own time in one mbserve run per model (cProfile)")
    args = ap.parse_args()
    rows = []
    first_call = None
    print(f"{'model':24s} {'steps':>6s} {'mbserve s':>10s} {'exudyn dense':>12s} {'exudyn sparse':>13s} "
          f"{'ratio':>7s} {'target':>7s} {'mbserve steps/s':>15s}")
    for name in args.models.split(","):
        doc = model(name)
        started = time.perf_counter()
        status = multibody.simulate(doc)  # also warms up: compiled kernels are loaded (or compiled) on first use
        first_call = first_call or (name, time.perf_counter() - started)
        if status.status != "succeeded":
            print(f"{name:24s} mbserve failed: {status.error}")
            continue
        steps = status.solver["steps"]
        ours = median_time(lambda: multibody.simulate(doc).solver["solveSeconds"], args.repeat)
        dense = median_time(lambda: exudyn_seconds(name, doc, False), args.repeat)
        sparse = median_time(lambda: exudyn_seconds(name, doc, True), args.repeat)
        best = min(dense, sparse)
        rows.append({"model": name, "steps": steps, "mbserve": ours, "exudynDense": dense, "exudynSparse": sparse,
                     "ratio": ours / best, "target": target(name), "stepsPerSecond": steps / ours})
        met = "ok" if ours / best <= target(name) else f"> {target(name)}"
        print(f"{name:24s} {steps:6d} {ours:10.4f} {dense:12.4f} {sparse:13.4f} {ours / best:7.2f} {met:>7s} "
              f"{steps / ours:15.0f}")
    if first_call:
        print(f"first simulate in this process ({first_call[0]}, loads or compiles the numba kernels): "
              f"{first_call[1]:.2f} s")
    chains = [r for r in rows if r["model"].startswith("chain_") and r["model"] != "chain_1"]
    if len(chains) >= 2:
        n = np.array([int(r["model"].split("_")[1]) for r in chains], float)
        cost = np.array([r["mbserve"] / r["steps"] for r in chains])
        slope = np.polyfit(np.log(n), np.log(cost), 1)[0]
        print(f"per-step cost ~ N^{slope:.2f} over chains N = {', '.join(str(int(x)) for x in n)}")
    for name in RSS_MODELS:
        if name in args.models.split(","):
            doc = model(name)
            print(f"peak RSS {name}: mbserve {peak_rss_mb(doc, 'mbserve'):.0f} MB, "
                  f"Exudyn {peak_rss_mb(doc, 'exudyn'):.0f} MB (whole process)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    for name in args.models.split(",") if args.profile else []:
        print(f"\n--- profile of one mbserve run: {name}")
        prof = cProfile.Profile()
        doc = model(name)
        prof.runcall(multibody.simulate, doc)
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
