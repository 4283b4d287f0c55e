"""What each solver can do with a model: the tables and checks that model validation reads,
below the model layer (they import no solver)."""
from __future__ import annotations

from .items import DATA_COORDINATES, EXPLICIT_RULES
from .items.bodies import off_center
from .solvers.tableaus import TABLEAUS
from .values import Problem

SUPPORTED_DYNAMIC = ("GeneralizedAlpha", "TrapezoidalIndex2", *TABLEAUS)


def lie_group_problems(doc, settings: dict, names: dict) -> list[Problem]:
    """Lie group nodes (RigidBodyRotVecLG) in a generalized-α solve take Exudyn's default kinematic relations only."""
    lie = [names["nodes"][i] for i, n in enumerate(doc.nodes) if n.nodeType == "RigidBodyRotVecLG"]
    if not lie or doc.solve.type != "Dynamic" or doc.solve.solverType in TABLEAUS:
        return []
    if settings["timeIntegration"]["generalizedAlpha"]["lieGroupSimplifiedKinematicRelations"]:
        return [Problem("simulationSettings.timeIntegration.generalizedAlpha.lieGroupSimplifiedKinematicRelations",
                        f"the Lie group nodes ({', '.join(lie)}) are integrated with Exudyn's default relations only "
                        "(lieGroupSimplifiedKinematicRelations = false)")]
    return []


def data_coordinate_problems(doc, settings: dict, names: dict) -> list[Problem]:
    """Connectors with data coordinates (a discontinuous iteration) run in the implicit dynamic solvers only: the
    static and explicit solvers refuse them (the compiled step loop of alpha_kernel runs the iteration)."""
    items = [names["objects"][i] for i, o in enumerate(doc.objects) if o.objectType in DATA_COORDINATES]
    if not items:
        return []
    if doc.solve.type != "Dynamic" or doc.solve.solverType in TABLEAUS:
        where = "solve.type" if doc.solve.type != "Dynamic" else "solve.solverType"
        solver = doc.solve.type if doc.solve.type != "Dynamic" else doc.solve.solverType
        return [Problem(where, f"{', '.join(items)}: their discontinuous iteration (contact and friction data "
                        f"coordinates) runs in the implicit dynamic solvers (GeneralizedAlpha, TrapezoidalIndex2) "
                        f"only, not in {solver}")]
    if settings["timeIntegration"]["discontinuous"]["maxIterations"] < 1:
        return [Problem("simulationSettings.timeIntegration.discontinuous.maxIterations",
                        f"must be at least 1 with {', '.join(items)} (0 would skip their steps' Newton solves)")]
    return []


def explicit_solver_problems(doc, settings: dict, names: dict, refs: dict) -> list[Problem]:
    """What Exudyn's explicit solvers refuse (see solvers/explicit.py), as problems at solve.solverType:
    Euler-parameter nodes, and with eliminateConstraints every constraint but a ConnectorCoordinate
    between a ground-node coordinate and a node coordinate (the item declarations' `explicit`); and
    what only ours refuse: off-center planar rigid bodies, RigidBodyRxyz nodes and rigid bodies on RigidBodyRotVecLG
    nodes with an off-center mass or inertia products (their mass matrix is not constant, or not diagonal);
    `refs` are the resolved references ((list, index, field) -> index)."""
    if doc.solve.type != "Dynamic" or doc.solve.solverType not in TABLEAUS:
        return []
    solver = doc.solve.solverType
    problems = []
    ep = [names["nodes"][i] for i, n in enumerate(doc.nodes) if n.nodeType == "RigidBodyEP"]
    if ep:
        problems.append(Problem("solve.solverType", f"{solver} cannot integrate Euler-parameter nodes "
                                f"({', '.join(ep)}): they carry an algebraic normalization constraint and their "
                                "mass matrix is singular without it (Exudyn aborts too); use GeneralizedAlpha"))
    rxyz = [names["nodes"][i] for i, n in enumerate(doc.nodes) if n.nodeType == "RigidBodyRxyz"]
    if rxyz:
        problems.append(Problem("solve.solverType", f"{solver} cannot integrate the Tait-Bryan nodes "
                                f"({', '.join(rxyz)}): their bodies' mass matrix is not constant, and mbserve's "
                                "explicit solvers take constant ones only; use GeneralizedAlpha"))
    rotvec = [names["objects"][i] for i, o in enumerate(doc.objects) if o.objectType == "RigidBody"
              and refs.get(("objects", i, "nodeNumber")) is not None
              and doc.nodes[refs[("objects", i, "nodeNumber")]].nodeType == "RigidBodyRotVecLG"
              and (any(o.centerOfMass) or any(o.inertia[3:]))]
    if rotvec:
        problems.append(Problem("solve.solverType", f"{solver} cannot integrate {', '.join(rotvec)}: a rigid body on "
                                "a RigidBodyRotVecLG node with its centerOfMass away from the node or with inertia "
                                "products has a mass matrix that is not diagonal, and mbserve's explicit solvers take "
                                "diagonal ones only; use GeneralizedAlpha"))
    off = [names["objects"][i] for i, o in enumerate(doc.objects) if off_center(o)]
    if off:
        problems.append(Problem("solve.solverType", f"{solver} cannot integrate {', '.join(off)}: a RigidBody2D whose "
                                "centerOfMass is away from its node has a mass matrix that is not constant, and "
                                "mbserve's explicit solvers take constant ones only; use GeneralizedAlpha"))
    if not settings["timeIntegration"]["explicit"]["eliminateConstraints"]:
        return problems
    bad = []
    for i, o in enumerate(doc.objects):
        rule = EXPLICIT_RULES.get(o.objectType)
        if rule == "eliminate":
            nodes = [refs.get(("markers", m, "nodeNumber")) for m in refs.get(("objects", i, "markerNumbers")) or []]
            if sum(n is not None and doc.nodes[n].nodeType == "PointGround" for n in nodes) != 1:
                bad.append(names["objects"][i])
        elif rule == "refuse":
            bad.append(names["objects"][i])
    if bad:
        problems.append(Problem("solve.solverType", f"{solver} cannot solve the constraints of {', '.join(bad)}: "
                                "explicit solvers only eliminate a ConnectorCoordinate between a ground-node "
                                "coordinate and a node coordinate (as Exudyn); use GeneralizedAlpha"))
    return problems
