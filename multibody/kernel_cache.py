"""The core's compiled kernels on disk: which exist, whether their cache is fresh, and the one-time
compile, done by one process at a time and reported while it runs.

    ensure_compiled(report)   # compile if any kernel's cache is missing or stale; report(done, total)
    compiling()               # another process holds the compile lock right now

The kernels are found, not listed: every numba dispatcher defined in a module of this package that
mentions numba or @jit. The compile runs the warm-up models (`warm_up`), which reach every kernel
from Python or through another kernel (tests/multibody/test_kernel_cache.py checks that none is
left out). Numba's cache checks only a kernel's own source file, not those of the kernels it calls,
so when any kernel is stale all are compiled again.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from numba.core.dispatcher import Dispatcher

from .api import simulate
from .model import load_model
from .programs import warm_up as warm_up_programs
from .solvers.linear import DENSE_LU_MAX_UNKNOWNS

PACKAGE = Path(__file__).resolve().parent
LOCK_NAME = "mbserve-compile.lock"

_BODY = {"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0, 1, 0, 0, 0],
         "initialCoordinates": [0.1, 0, 0, 0, 0, 0, 0]}
WARM_UP_MODEL = {  # one body on a slider with a spring, a torsional and a 6x6 spring, a point on a rod, a rolling
    # disc, free bodies on Tait-Bryan angles and on a rotation vector (Lie group updates), gravitation, a beam, a
    # cable: the kernels of the common path and those of the item types with kernels of their own (items/README.md)
    "nodes": [_BODY, {"nodeType": "Point", "referenceCoordinates": [0, -1, 0], "initialVelocities": [0.1, 0, 0]},
              {"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 2, 0.5, 1, 0, 0, 0]},
              {"nodeType": "RigidBodyRxyz", "referenceCoordinates": [0, -2, 0, 0.1, 0.2, 0.3],
               "initialVelocities": [0, 0, 0, 1, 2, 3]},
              {"nodeType": "RigidBodyRotVecLG", "referenceCoordinates": [0, -3, 0, 0.1, 0.2, 0.3],
               "initialVelocities": [0, 0, 0, 1, 2, 3]},
              {"nodeType": "RigidBody2D", "referenceCoordinates": [0, -5, 0]},
              {"nodeType": "RigidBody2D", "referenceCoordinates": [1, -5, 0], "initialVelocities": [0, 1, 0]},
              {"nodeType": "Point2DSlope1", "referenceCoordinates": [0, -7, 1, 0]},
              {"nodeType": "Point2DSlope1", "referenceCoordinates": [1, -7, 1, 0], "initialVelocities": [0, 1, 0, 1]}],
    "objects": [{"objectType": "Ground"},
                {"objectType": "RigidBody", "nodeNumber": 0, "mass": 1.0, "inertia": [1e-3, 1e-3, 1e-3, 0, 0, 0]},
                {"objectType": "JointPrismaticX", "markerNumbers": [0, 1], "name": "slider"},
                {"objectType": "ConnectorSpringDamper", "markerNumbers": [2, 3], "stiffness": 100.0, "damping": 1.0},
                {"objectType": "ConnectorTorsionalSpringDamper", "markerNumbers": [0, 1], "stiffness": 10.0,
                 "damping": 0.1},
                {"objectType": "MassPoint", "nodeNumber": 1, "mass": 1.0},
                {"objectType": "ConnectorDistance", "markerNumbers": [2, 4], "distance": 1.0},
                {"objectType": "ConnectorRigidBodySpringDamper", "markerNumbers": [0, 1],
                 "stiffness": [[10.0 * (i == j) for j in range(6)] for i in range(6)],
                 "damping": [[0.1 * (i == j) for j in range(6)] for i in range(6)]},
                {"objectType": "RigidBody", "nodeNumber": 2, "mass": 1.0, "inertia": [0.1, 0.05, 0.05, 0, 0, 0]},
                {"objectType": "JointRollingDisc", "markerNumbers": [0, 5], "discRadius": 0.5},
                {"objectType": "RigidBody", "nodeNumber": 3, "mass": 1.0, "inertia": [0.1, 0.05, 0.05, 0, 0, 0],
                 "centerOfMass": [0.1, 0, 0]},
                {"objectType": "RigidBody", "nodeNumber": 4, "mass": 1.0, "inertia": [0.1, 0.05, 0.05, 0, 0, 0]},
                {"objectType": "ConnectorGravity", "markerNumbers": [2, 4], "gravitationalConstant": 1.0, "mass0": 1.0,
                 "mass1": 1.0},
                {"objectType": "BeamGeometricallyExact2D", "nodeNumbers": [5, 6], "length": 1.0, "massPerLength": 1.0,
                 "crossSectionInertia": 1e-3, "bendingStiffness": 10.0, "axialStiffness": 100.0,
                 "shearStiffness": 100.0, "axialDamping": 0.1},
                {"objectType": "ANCFCable2D", "nodeNumbers": [7, 8], "length": 1.0, "massPerLength": 1.0,
                 "bendingStiffness": 1.0, "axialStiffness": 100.0, "bendingDamping": 0.01, "axialDamping": 0.1}],
    "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1},
                {"markerType": "BodyPosition", "bodyNumber": 0}, {"markerType": "BodyPosition", "bodyNumber": 1},
                {"markerType": "NodePosition", "nodeNumber": 1}, {"markerType": "BodyRigid", "bodyNumber": 8}],
    "loads": [{"loadType": "ForceVector", "markerNumber": 1, "loadVector": [1.0, 0, 0]}],
    "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position"},
                {"sensorType": "Object", "objectNumber": 4, "outputVariableType": "TorqueLocal"},
                {"sensorType": "Object", "objectNumber": 7, "outputVariableType": "ForceLocal"},
                {"sensorType": "Object", "objectNumber": 12, "outputVariableType": "Force"},
                {"sensorType": "Body", "bodyNumber": 13, "outputVariableType": "ForceLocal"},
                {"sensorType": "Body", "bodyNumber": 14, "outputVariableType": "TorqueLocal",
                 "localPosition": [0.5, 0, 0]}],
    "simulationSettings": {"timeIntegration": {"endTime": 0.01, "numberOfSteps": 2}},
}


WARM_UP_MOTION = {  # the same with a velocity-level motion on the slider: the per-stage path, motion sensors
    **WARM_UP_MODEL,
    "motions": [{"motionType": "Custom", "joint": "slider", "level": "Velocity", "velocity": "0.1*cos(t)"}],
    "sensors": [{"sensorType": "Motion", "motionNumber": 0, "outputVariableType": "Coordinate"},
                {"sensorType": "Motion", "motionNumber": 0, "outputVariableType": "Coordinate_tt"},
                {"sensorType": "Object", "objectNumber": 2, "outputVariableType": "ForceLocal"}],
}

WARM_UP_PENALTY = {  # a disc on a plane by a penalty contact with friction: the discontinuous iteration
    "nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0.49, 1, 0, 0, 0],
               "initialVelocities": [0, 1, 0, 0, -1, 0, 0]},
              {"nodeType": "GenericData", "numberOfDataCoordinates": 3}],
    "objects": [{"objectType": "Ground"},
                {"objectType": "RigidBody", "nodeNumber": 0, "mass": 1.0, "inertia": [0.125, 0.0625, 0.0625, 0, 0, 0]},
                {"objectType": "ConnectorRollingDiscPenalty", "markerNumbers": [0, 1], "nodeNumber": 1,
                 "discRadius": 0.5, "contactStiffness": 1e4, "contactDamping": 10.0, "dryFriction": [0.5, 0.5],
                 "dryFrictionProportionalZone": 0.01, "rollingViscousFriction": 0.01}],
    "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1}],
    "loads": [{"loadType": "ForceVector", "markerNumber": 1, "loadVector": [0, 0, -9.81]}],
    "sensors": [{"sensorType": "Object", "objectNumber": 2, "outputVariableType": "ForceLocal"}],
    "simulationSettings": {"timeIntegration": {"endTime": 0.01, "numberOfSteps": 2}},
}

WARM_UP_CONTACT = {  # a ball thrown against a ground sphere with friction and restitution: the sphere contact
    "nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0.199, 1, 0, 0, 0],
               "initialVelocities": [0.1, 0, -1, 1, 0, 0, 0]},
              {"nodeType": "GenericData", "numberOfDataCoordinates": 4, "initialCoordinates": [0.1, 0, 0, 0]}],
    "objects": [{"objectType": "Ground"},
                {"objectType": "RigidBody", "nodeNumber": 0, "mass": 1.0, "inertia": [4e-3, 4e-3, 4e-3, 0, 0, 0]},
                {"objectType": "ContactSphereSphere", "markerNumbers": [0, 1], "nodeNumber": 1,
                 "spheresRadii": [0.1, 0.1], "contactStiffness": 1e4, "contactDamping": 1.0, "dynamicFriction": 0.2,
                 "impactModel": 2, "restitutionCoefficient": 0.7}],
    "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1}],
    "sensors": [{"sensorType": "Object", "objectNumber": 2, "outputVariableType": "Force"}],
    "simulationSettings": {"timeIntegration": {"endTime": 0.01, "numberOfSteps": 2}},
}

WARM_UP_TRIANGLE = {  # a spinning ball thrown with friction at a triangle on a free body: the sphere-triangle contact
    "nodes": [{"nodeType": "RigidBodyEP", "referenceCoordinates": [0.2, 0.2, 0.099, 1, 0, 0, 0],
               "initialVelocities": [0.1, 0, -1, 1, 0, 0, 0]},
              {"nodeType": "GenericData", "numberOfDataCoordinates": 4, "initialCoordinates": [-0.001, 0, 0, 0]},
              {"nodeType": "RigidBodyEP", "referenceCoordinates": [0, 0, 0, 1, 0, 0, 0]}],
    "objects": [{"objectType": "RigidBody", "nodeNumber": 2, "mass": 1.0, "inertia": [0.1, 0.1, 0.1, 0, 0, 0]},
                {"objectType": "RigidBody", "nodeNumber": 0, "mass": 1.0, "inertia": [4e-3, 4e-3, 4e-3, 0, 0, 0]},
                {"objectType": "ContactSphereTriangle", "markerNumbers": [1, 0], "nodeNumber": 1, "sphereRadius": 0.1,
                 "trianglePoints": [[0, 0, 0], [1, 0, 0], [0, 1, 0]], "contactStiffness": 1e4, "contactDamping": 1.0,
                 "dynamicFriction": 0.2, "impactModel": 1, "restitutionCoefficient": 0.7}],
    "markers": [{"markerType": "BodyRigid", "bodyNumber": 0}, {"markerType": "BodyRigid", "bodyNumber": 1}],
    "sensors": [{"sensorType": "Object", "objectNumber": 2, "outputVariableType": "Torque"}],
    "simulationSettings": {"timeIntegration": {"endTime": 0.01, "numberOfSteps": 2}},
}

WARM_UP_EXPLICIT = {  # a mass point on a Cartesian spring: the explicit solvers' compiled loop
    "nodes": [{"nodeType": "Point", "initialCoordinates": [0.1, 0, 0]}],
    "objects": [{"objectType": "Ground"}, {"objectType": "MassPoint", "nodeNumber": 0, "mass": 0.5},
                {"objectType": "ConnectorCartesianSpringDamper", "markerNumbers": [1, 0], "stiffness": [40.0, 60.0, 80.0],
                 "damping": [0.4, 0.6, 0.8]}],
    "markers": [{"markerType": "NodePosition", "nodeNumber": 0}, {"markerType": "BodyPosition", "bodyNumber": 0}],
    "sensors": [{"sensorType": "Node", "nodeNumber": 0, "outputVariableType": "Position"}],
    "simulationSettings": {"timeIntegration": {"endTime": 0.01, "numberOfSteps": 2}},
}


def _spring_chain(n: int) -> dict:
    """n bodies in a row on prismatic joints, each held by a spring to the one before, the last one pulled:
    a static Newton matrix past the dense LU (the static solver's kernels and the sparse LU's solve)."""
    return {"nodes": [{**_BODY, "referenceCoordinates": [i + 1, 0, 0, 1, 0, 0, 0]} for i in range(n)],
            "objects": [{"objectType": "Ground"}]
            + [{"objectType": "RigidBody", "nodeNumber": i, "mass": 1.0, "inertia": [1e-3, 1e-3, 1e-3, 0, 0, 0]}
               for i in range(n)]
            + [{"objectType": "JointPrismaticX", "markerNumbers": [i, i + 1]} for i in range(n)]
            + [{"objectType": "ConnectorSpringDamper", "markerNumbers": [i, i + 1], "stiffness": 100.0,
                "referenceLength": 1.0} for i in range(n)],
            "markers": [{"markerType": "BodyRigid", "bodyNumber": b} for b in range(n + 1)],
            "loads": [{"loadType": "ForceVector", "markerNumber": n, "loadVector": [1.0, 0, 0]}],
            "solve": {"type": "Static"}}


def _data_coordinate_kernels(doc: dict) -> None:
    """The kernels of the types with data coordinates run from Python, as the static solve of the warm-up model
    runs the other types' (the static solver refuses these): forces, Newton matrix and post-Newton step."""
    from .system import System
    system = System(load_model(doc))
    kin = system.kinematics(0.0, system.q_init, system.v_init)
    for group in {id(g): g for g, _ in system.object_group.values()}.values():
        kernels = getattr(group, "KERNELS", None)
        if kernels is not None and kernels.post_newton is not None:
            group.generalized(kin)
            group.jacobian_values(kin)
            kernels.post_newton(group.data, kin.arrays())


def warm_up() -> None:
    """Load (or compile) the core's compiled kernels now, so a process's first job does not pay it."""
    simulate(WARM_UP_MODEL)  # the compiled step loop
    # the static solver's per-group path: it calls the item kernels from Python, then finds the free bodies singular
    simulate({**WARM_UP_MODEL, "solve": {"type": "Static"}})
    simulate(_spring_chain(1 + DENSE_LU_MAX_UNKNOWNS // 13))  # and its sparse LU
    simulate(WARM_UP_MOTION)
    simulate(WARM_UP_PENALTY)
    _data_coordinate_kernels(WARM_UP_PENALTY)
    simulate(WARM_UP_CONTACT)
    _data_coordinate_kernels(WARM_UP_CONTACT)
    simulate(WARM_UP_TRIANGLE)
    _data_coordinate_kernels(WARM_UP_TRIANGLE)
    for solver in ("RK44", "DOPRI5", "VelocityVerlet"):  # fixed and adaptive steps, and velocity Verlet
        simulate({**WARM_UP_EXPLICIT, "solve": {"type": "Dynamic", "solverType": solver}})
    warm_up_programs()  # expressions: the program evaluator


@functools.cache
def kernels() -> tuple[Dispatcher, ...]:
    """Every numba kernel of the package, in module order."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "numba" not in text and "@jit" not in text:
            continue
        name = ".".join(("multibody",) + path.relative_to(PACKAGE).with_suffix("").parts)
        module = importlib.import_module(name.removesuffix(".__init__"))
        # an inline="always" kernel has no machine code of its own (it is compiled into its callers,
        # which are cached), so no cache file would ever make it fresh
        found += [v for v in vars(module).values()
                  if isinstance(v, Dispatcher) and v.py_func.__module__ == module.__name__
                  and v.targetoptions.get("inline") != "always"]
    return tuple(found)


def print_progress(done: int, total: int, stream=None) -> None:
    """The compile's progress line, on stderr unless `stream` (rewritten in place on a terminal)."""
    stream = stream or sys.stderr
    line = f"compiling numerical kernels, first start only: {done}/{total}"
    if stream.isatty():
        stream.write("\r" + line + ("\n" if done == total else ""))
    else:
        stream.write(line + "\n")
    stream.flush()


def _fresh(kernel: Dispatcher) -> bool:
    return bool(kernel._cache._cache_file._load_index())  # {} when missing, stale or another numba


def stale(found: tuple[Dispatcher, ...] | None = None) -> list[Dispatcher]:
    """The kernels whose on-disk cache is missing or out of date."""
    return [k for k in (kernels() if found is None else found) if not _fresh(k)]


def _lock_path(found: tuple[Dispatcher, ...]) -> Path:
    return Path(found[0]._cache._cache_path) / LOCK_NAME


@contextlib.contextmanager
def _locked(path: Path, blocking: bool = True):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def compiling() -> bool:
    """Whether a process (of this installation) is compiling the kernels now."""
    with _locked(_lock_path(kernels()), blocking=False) as got:
        return not got


def ensure_compiled(report: Callable[[int, int], None] | None = None, force: bool = False) -> float | None:
    """Compile the kernels if any cache is missing or stale (or `force`), under a file lock next to
    the cache, calling report(done, total) as kernels get ready. The seconds it took if this call
    compiled, else None."""
    found = kernels()
    if not force and not stale(found):
        return None
    with _locked(_lock_path(found)):
        if not force and not stale(found):
            return None  # another process compiled them while we waited
        for k in found:  # numba cannot tell that a kernel's callees changed: compile all of them
            with contextlib.suppress(FileNotFoundError):
                os.remove(k._cache._cache_file._index_path)
        done = threading.Event()

        def watch() -> None:
            last = -1
            while True:
                ready = sum(1 for k in found if k.signatures)
                if ready != last and report is not None:
                    report(ready, len(found))
                    last = ready
                if done.wait(0.5):
                    break
            if report is not None and last != len(found):
                report(sum(1 for k in found if k.signatures), len(found))

        watcher = threading.Thread(target=watch, name="compile-progress", daemon=True)
        watcher.start()
        started = time.perf_counter()
        try:
            warm_up()
        finally:
            done.set()
            watcher.join()
        return time.perf_counter() - started
