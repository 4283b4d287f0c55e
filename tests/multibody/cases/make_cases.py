"""Cross-check cases computed by Exudyn 1.13.6 itself.

For every case: build the model in Exudyn, solve it, write
    <case>/model.json    model document (shared/examples/exudyn_export.export_model)
    <case>/exudyn.json   Exudyn's results document (results_document; all sensors storeInternal)
    <case>/meta.json     description, what it checks, analytical values, settings, Exudyn solve time
Dynamic implicit cases come twice: <case> (Exudyn's default Newton settings) and <case>_tight
(Newton relative/absolute tolerance as tight as converges, full Newton), for ~1e-10 comparisons.

    python tests/multibody/cases/make_cases.py [case ...]      (run with the venv that has exudyn 1.13.6)
"""
import json
import math
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED_EXAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "examples"
sys.path.insert(0, str(SHARED_EXAMPLES))

import exudyn as exu  # noqa: E402
from exudyn.itemInterface import *  # noqa: E402,F401,F403
from exudyn.rigidBodyUtilities import (  # noqa: E402
    AngularVelocity2EulerParameters_t, RotationMatrix2EulerParameters, RotXYZ2RotationMatrix,
    RotationMatrixX, RotationMatrixY, RotationMatrixZ, InertiaCuboid, eulerParameters0)
import exudyn_export as ee  # noqa: E402

OVT = exu.OutputVariableType
MAX_FILE_BYTES = 300_000

# extend the exported settings (in this process only) by those the cases change
for _p in ["timeIntegration.adaptiveStep", "timeIntegration.automaticStepSize",
           "timeIntegration.absoluteTolerance", "timeIntegration.relativeTolerance",
           "timeIntegration.initialStepSize", "timeIntegration.minimumStepSize",
           "timeIntegration.explicitIntegration.computeEndOfStepAccelerations",
           "timeIntegration.explicitIntegration.eliminateConstraints",
           "timeIntegration.generalizedAlpha.storeInitialAlgebraicCoordinates",
           "staticSolver.newton.useModifiedNewton", "staticSolver.newton.maxIterations",
           "staticSolver.loadStepStart", "staticSolver.adaptiveStep", "staticSolver.useLoadFactor"]:
    try:
        ee._get(exu.SimulationSettings().GetDictionary(), _p)
    except KeyError:
        continue
    if _p not in ee.SETTINGS_KEPT:
        ee.SETTINGS_KEPT.append(_p)


def HT(R=None, p=(0, 0, 0)):
    H = np.eye(4)
    if R is not None:
        H[:3, :3] = np.asarray(R)
    H[:3, 3] = p
    return H


def skew(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def inertia6D_about_ref(m, Jcom, b):
    """Exudyn inertia6D [Jxx,Jyy,Jzz,Jyz,Jxz,Jxy] about the reference point of a body whose COM is at b."""
    b = np.asarray(b, float)
    J = np.asarray(Jcom, float) + m * (b @ b * np.eye(3) - np.outer(b, b))
    return [J[0, 0], J[1, 1], J[2, 2], J[1, 2], J[0, 2], J[0, 1]]


def ep_node(mbs, p, R=np.eye(3), v=(0, 0, 0), omega=(0, 0, 0), name=None):
    """NodeRigidBodyEP at p with rotation R, velocity v and global angular velocity omega
    (EP rates = 1/4 G^T omega, Exudyn's AngularVelocity2EulerParameters_t)."""
    ep = RotationMatrix2EulerParameters(np.asarray(R))
    ep_t = AngularVelocity2EulerParameters_t(np.asarray(omega, float), ep)
    kw = {"name": name} if name else {}
    return mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=list(p) + list(ep),
                                       initialVelocities=list(v) + list(ep_t), **kw))


class Case:
    def __init__(self):
        self.refused = []       # output variables Exudyn refused
        self.analytical = {}
        self.warnings = []
        self.notes = []
        self.pending = []        # sensors checked, to be added


# ------------------------------------------------------------------ sensors with availability check
NODE_VARS = ["Position", "Displacement", "Velocity", "Acceleration", "Coordinates", "Coordinates_t",
             "Coordinates_tt", "RotationMatrix", "Rotation", "AngularVelocity", "AngularVelocityLocal",
             "AngularAcceleration"]
BODY_VARS = ["Position", "Displacement", "Velocity", "Acceleration", "RotationMatrix", "Rotation",
             "AngularVelocity", "AngularVelocityLocal", "AngularAcceleration"]
MARKER_VARS = ["Position", "Velocity", "Rotation", "RotationMatrix", "AngularVelocity", "AngularVelocityLocal",
               "Coordinates", "Coordinates_t"]
JOINT_VARS = ["Position", "Velocity", "DisplacementLocal", "VelocityLocal", "Rotation", "AngularVelocityLocal",
              "ForceLocal", "TorqueLocal", "HomogeneousTransformation", "HomogeneousTransformationLocal"]
CONNECTOR_VARS = ["Distance", "Displacement", "DisplacementLocal", "Velocity", "VelocityLocal", "Force",
                  "ForceLocal", "Torque", "TorqueLocal", "Rotation", "Position"]


def add_sensors(case, mbs, kind, number, variables, prefix, localPosition=None):
    """Add one storeInternal sensor per available output variable; record refused ones.
    mbs must be assembled (the check calls Exudyn's Get...Output)."""
    added = []
    for v in variables:
        ovt = getattr(OVT, v, None)
        try:
            if ovt is None:
                raise RuntimeError("no OutputVariableType.%s in this Exudyn" % v)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if kind == "Node":
                    mbs.GetNodeOutput(number, ovt)
                elif kind == "Object":
                    mbs.GetObjectOutput(number, ovt)
                elif kind == "Body":
                    mbs.GetObjectOutputBody(number, ovt, localPosition=localPosition)
                elif kind == "Marker":
                    mbs.GetMarkerOutput(number, ovt)
        except Exception as e:  # Exudyn refuses the variable for this item
            case.refused.append({"sensor": kind, "item": int(number), "outputVariableType": v,
                                 "error": str(e).strip().split(" [Python file")[0][:300] if str(e).strip() else repr(e)})
            continue
        case.pending.append((kind, number, ovt, "%s_%s" % (prefix, v), localPosition))
    return added


def add_load_sensor(case, mbs, load, name):
    case.pending.append(("Load", load, None, name, None))


def flush_sensors(case):
    """Add the checked sensors (adding one makes the system inconsistent, so checks come first)."""
    mbs = case.mbs
    for kind, number, ovt, name, localPosition in case.pending:
        common = dict(name=name, storeInternal=True, writeToFile=False)
        if kind == "Load":
            mbs.AddSensor(SensorLoad(loadNumber=number, **common))
            continue
        common["outputVariableType"] = ovt
        if kind == "Node":
            mbs.AddSensor(SensorNode(nodeNumber=number, **common))
        elif kind == "Object":
            mbs.AddSensor(SensorObject(objectNumber=number, **common))
        elif kind == "Body":
            mbs.AddSensor(SensorBody(bodyNumber=number, localPosition=list(localPosition), **common))
        elif kind == "Marker":
            mbs.AddSensor(SensorMarker(markerNumber=number, **common))
    case.pending = []
    mbs.Assemble()


def results_doc(mbs, solver, warnings_=None):
    """ee.results_document, plus Load sensors (Exudyn's SensorLoad has no outputVariableType:
    written as outputVariableType null, columns named after the load type)."""
    out = {}
    for i in range(mbs.systemData.NumberOfSensors()):
        sd = mbs.GetSensor(i)
        data = np.array(mbs.GetSensorStoredData(i))
        if "outputVariableType" in sd:
            ovt = ee.to_json(sd["outputVariableType"])
            cols = ee.sensor_columns(ovt, data.shape[1] - 1)
        else:
            ovt = None
            lt = mbs.GetLoad(int(sd["loadNumber"]))["loadType"]
            base = {"ForceVector": "Force", "TorqueVector": "Torque", "MassProportional": "LoadVector",
                    "Coordinate": "Load"}.get(lt, "Load")
            cols = ee.sensor_columns(base, data.shape[1] - 1) if data.shape[1] - 1 != 1 else ["time", base]
            if base == "LoadVector":
                cols = ["time"] + ["LoadVector%s" % c for c in "XYZ"]
        out[sd["name"]] = {"sensorType": sd["sensorType"], "item": ee._item_name(mbs, sd),
                           "outputVariableType": ovt, "columns": cols, "data": data.tolist()}
    return {"status": "succeeded", "warnings": warnings_ or [], "solver": solver, "sensors": out}


def sensor(mbs, name):
    for i in range(mbs.systemData.NumberOfSensors()):
        if mbs.GetSensor(i)["name"] == name:
            return np.array(mbs.GetSensorStoredData(i))
    raise KeyError(name)


def settings(endTime, steps, writePeriod):
    ss = exu.SimulationSettings()
    ss.timeIntegration.endTime = endTime
    ss.timeIntegration.numberOfSteps = steps
    ss.solution.sensors.writePeriod = writePeriod
    ss.solution.file.write = False
    ss.timeIntegration.verboseMode = 0
    ss.staticSolver.verboseMode = 0
    return ss


# ====================================================================== case builders
def prismatic_model(case, solverType="GeneralizedAlpha", endTime=1.0, steps=200):
    """Case 1 model: EP body with COM offset + full inertia on a skew JointPrismaticX to ground."""
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    oG = mbs.AddObject(ObjectGround(name="ground"))
    m = 2.0
    b = [0.05, -0.03, 0.02]
    Jcom = [[0.02, 0.003, -0.002], [0.003, 0.03, 0.001], [-0.002, 0.001, 0.025]]
    A = RotXYZ2RotationMatrix([0.2, -0.3, 0.4])            # body orientation
    Rg = RotXYZ2RotationMatrix([0.3, 0.5, -0.7])           # joint frame J0 (ground marker localHT rotation)
    tg = np.array([0.1, -0.2, 0.3])                        # ground marker localHT translation
    tb = np.array([0.04, 0.05, -0.06])                     # body marker localHT translation
    Rb = A.T @ Rg                                          # so that J1 = J0 at t=0
    s0, v0 = 0.2, 0.5
    xa = Rg[:, 0]
    p = tg + s0 * xa - A @ tb
    n = ep_node(mbs, p, A, v=v0 * xa, name="bodyNode")
    oB = mbs.AddObject(ObjectRigidBody(nodeNumber=n, mass=m, inertia=inertia6D_about_ref(m, Jcom, b),
                                       centerOfMass=b, name="body"))
    mG = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oG, localHT=HT(Rg, tg), name="mGroundJoint"))
    mB = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oB, localHT=HT(Rb, tb), name="mBodyJoint"))
    oJ = mbs.AddObject(ObjectJointPrismaticX(markerNumbers=[mG, mB], name="slider"))
    mGs = mbs.AddMarker(MarkerBodyPosition(bodyNumber=oG, localPosition=list(tg - 0.5 * xa), name="mGroundSpring"))
    k, d, L0 = 200.0, 2.0, 0.5
    oS = mbs.AddObject(ObjectConnectorSpringDamper(markerNumbers=[mGs, mB], stiffness=k, damping=d,
                                                   referenceLength=L0, name="spring"))
    mM = mbs.AddMarker(MarkerBodyMass(bodyNumber=oB, name="mBodyMass"))
    lG = mbs.AddLoad(LoadMassProportional(markerNumber=mM, loadVector=[0, 0, -9.81], name="gravity"))
    lF = mbs.AddLoad(LoadForceVector(markerNumber=mB, loadVector=[0.5, -1.0, 2.0], bodyFixed=True, name="forceBodyFixed"))
    lT = mbs.AddLoad(LoadTorqueVector(markerNumber=mB, loadVector=[0.1, 0.2, -0.3], name="torqueGlobal"))
    lT2 = mbs.AddLoad(LoadTorqueVector(markerNumber=mB, loadVector=[-0.05, 0.1, 0.02], bodyFixed=True,
                                       name="torqueBodyFixed"))
    mbs.Assemble()
    add_sensors(case, mbs, "Object", oJ, JOINT_VARS, "joint")
    add_sensors(case, mbs, "Node", n, NODE_VARS, "node")
    add_sensors(case, mbs, "Body", oB, BODY_VARS, "body", localPosition=[0.1, 0.0, 0.05])
    add_sensors(case, mbs, "Marker", mB, MARKER_VARS, "markerBody")
    add_sensors(case, mbs, "Marker", mGs, ["Position", "Velocity"], "markerGroundSpring")
    add_sensors(case, mbs, "Marker", mM, ["Position", "Velocity"], "markerMass")
    add_sensors(case, mbs, "Object", oS, CONNECTOR_VARS, "spring")
    for l, nm in [(lG, "load_gravity"), (lF, "load_forceBodyFixed"), (lT, "load_torqueGlobal"),
                  (lT2, "load_torqueBodyFixed")]:
        add_load_sensor(case, mbs, l, nm)
    mbs.Assemble()
    case.mbs, case.SC = mbs, SC
    case.ss = settings(endTime, steps, 0.02)
    case.solve = {"type": "Dynamic", "solverType": solverType}
    case.description = ("One RigidBody (EP node, m=2, COM offset b=%s, full inertia with off-diagonals, rotated "
                        "RotXYZ[0.2,-0.3,0.4]) on a JointPrismaticX to ground; joint frame from marker localHT "
                        "rotations (RotXYZ[0.3,0.5,-0.7] on ground, A^T*that on the body) and translations on both "
                        "sides; ConnectorSpringDamper (k=200, d=2, L0=0.5) along the axis from a ground point 0.5 "
                        "behind marker 0; gravity via LoadMassProportional on MarkerBodyMass; body-fixed "
                        "ForceVector and TorqueVector and a global TorqueVector on the joint marker; initial "
                        "velocity 0.5 along the axis; endTime %g, %d steps." % (b, endTime, steps))
    case.checks = ("all ten JointPrismaticX outputs, node/body/marker/load/spring-damper outputs; COM offset and "
                   "off-diagonal inertia in the mass matrix; body-fixed loads rotated by the marker orientation "
                   "including localHT; joint frame from localHT with skew axis")
    # analytical: motion along the axis is 1D: m s'' = -k(s+0.5-L0) - d s' + F_axis (F constant along the axis)
    Fbody = A @ Rb @ np.array([0.5, -1.0, 2.0])     # body-fixed force in global coordinates (constant: no rotation)
    Fax = float(xa @ (Fbody + m * np.array([0, 0, -9.81])))
    case.analytical = {
        "formula": "the body does not rotate; the sliding coordinate s (DisplacementLocal x) obeys the damped "
                   "oscillator m s'' + d s' + k (s + 0.5 - L0) = F_axis, s(0)=0.2, s'(0)=0.5",
        "jointAxisGlobal": xa.tolist(), "m": m, "k": k, "d": d, "L0": L0, "F_axis": Fax,
        "sEquilibrium": Fax / k + L0 - 0.5,
    }
    case.post = lambda c: _post_oscillator(c, "joint_DisplacementLocal", 1, m, k, d, Fax / k + L0 - 0.5, s0, v0)
    return case


def _damped(t, m, k, d, xeq, x0, v0):
    w0 = math.sqrt(k / m)
    zeta = d / (2 * math.sqrt(k * m))
    wd = w0 * math.sqrt(1 - zeta ** 2)
    a = x0 - xeq
    bb = (v0 + zeta * w0 * a) / wd
    return xeq + np.exp(-zeta * w0 * t) * (a * np.cos(wd * t) + bb * np.sin(wd * t))


def _post_oscillator(case, sname, col, m, k, d, xeq, x0, v0):
    D = sensor(case.mbs, sname)
    ex = _damped(D[:, 0], m, k, d, xeq, x0, v0)
    case.analytical["maxAbsErrorExudyn"] = float(np.max(np.abs(D[:, col] - ex)))
    case.analytical["analyticalAtEnd"] = float(ex[-1])
    case.analytical["exudynAtEnd"] = float(D[-1, col])


def build_prismatic_outputs(case):
    return prismatic_model(case)


def build_index2_trapezoidal(case):
    prismatic_model(case, solverType="TrapezoidalIndex2")
    case.description = "Case prismatic_outputs solved with solverType TrapezoidalIndex2. " + case.description
    case.checks = "index-2 (velocity-level) constraints of JointPrismaticX and the EP normalization; Newmark " \
                  "beta=1/4, gamma=1/2; drift of position constraints; " + case.checks
    return case


def build_newmark_index3(case):
    prismatic_model(case)
    case.ss.timeIntegration.generalizedAlpha.useNewmark = True
    case.description = "Case prismatic_outputs with generalizedAlpha.useNewmark=True (index 3, beta=1/4, " \
                       "gamma=1/2, alpha_m=alpha_f=1/2 as Exudyn maps it). " + case.description
    case.checks = "Newmark (trapezoidal) integrator with index-3 constraints; " + case.checks
    return case


def build_prismatic_on_rotating_body(case):
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    oG = mbs.AddObject(ObjectGround(name="ground"))
    w0 = 2.0
    omega = np.array([0, 0, w0])
    # body A: plate rotating about global z through origin, COM at origin
    mA = 3.0
    nA = ep_node(mbs, [0, 0, 0], np.eye(3), omega=omega, name="nodeA")
    oA = mbs.AddObject(ObjectRigidBody(nodeNumber=nA, mass=mA, inertia=[0.3, 0.3, 0.25, 0, 0, 0], name="bodyA"))
    mGr = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oG, localPosition=[0, 0, 0], name="mGroundRev"))
    mAr = mbs.AddMarker(MarkerNodeRigid(nodeNumber=nA, name="mARevNode"))   # MarkerNodeRigid (node = COM)
    oR = mbs.AddObject(ObjectJointRevoluteZ(markerNumbers=[mGr, mAr], name="revolute"))
    # body B slides along a direction in A's xy-plane, tilted by 30 deg, axis offset 0.05 in A's y and 0.1 in z
    Rj = RotationMatrixZ(math.radians(30))
    tA = np.array([0.0, 0.05, 0.1])
    s0 = 0.2
    mBm = 0.5
    pB = tA + s0 * Rj[:, 0]
    vB = np.cross(omega, pB) + 0.1 * Rj[:, 0]
    nB = ep_node(mbs, pB, np.eye(3), v=vB, omega=omega, name="nodeB")
    oB = mbs.AddObject(ObjectRigidBody(nodeNumber=nB, mass=mBm, inertia=[0.002, 0.003, 0.004, 0, 0, 0], name="bodyB"))
    mAj = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oA, localHT=HT(Rj, tA), name="mAJoint"))
    mBj = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oB, localHT=HT(Rj, [0, 0, 0]), name="mBJoint"))
    oP = mbs.AddObject(ObjectJointPrismaticX(markerNumbers=[mAj, mBj], name="slider"))
    mbs.Assemble()
    add_sensors(case, mbs, "Object", oP, JOINT_VARS, "slider")
    add_sensors(case, mbs, "Node", nB, ["Position", "Velocity"], "nodeB")
    add_sensors(case, mbs, "Node", nA, ["AngularVelocity", "Rotation"], "nodeA")
    add_sensors(case, mbs, "Object", oR, ["Rotation", "AngularVelocityLocal", "ForceLocal", "TorqueLocal"], "revolute")
    add_sensors(case, mbs, "Marker", mAr, MARKER_VARS, "markerNodeRigidA")
    mbs.Assemble()
    case.mbs, case.SC = mbs, SC
    case.ss = settings(1.0, 500, 0.01)
    case.solve = {"type": "Dynamic", "solverType": "GeneralizedAlpha"}
    case.description = ("Body A (EP, m=3, Jzz=0.25) spins on a JointRevoluteZ to ground with omega_z=2 (EP rates "
                        "1/4 G^T omega); body B (m=0.5) slides on a JointPrismaticX whose marker 0 is on A "
                        "(localHT: rotation Rz(30deg), translation [0,0.05,0.1]); B starts at s=0.2 co-rotating "
                        "with A plus 0.1 m/s along the axis; no gravity; the revolute joint's marker 1 is a MarkerNodeRigid on A's "
                        "node; endTime 1, 500 steps.")
    case.checks = "joint frame that moves and rotates (marker 0 on a rotating body); all ten prismatic outputs " \
                  "with a moving J0; ForceLocal from Coriolis/centrifugal effects; angular momentum conservation"
    case.analytical = {"formula": "no external forces: angular momentum about z, (JzA + JzB + mB*|pB_xy|^2) "
                                  "omega_z + mB*(pB x vB)_z terms, is conserved; kinetic energy is conserved "
                                  "(ideal joints)",
                       "omega0": w0}

    def post(c):
        P = sensor(c.mbs, "nodeB_Position")
        V = sensor(c.mbs, "nodeB_Velocity")
        W = sensor(c.mbs, "nodeA_AngularVelocity")
        Lz = (0.25 + 0.004) * W[:, 3] + mBm * (P[:, 1] * V[:, 2] - P[:, 2] * V[:, 1])
        E = 0.5 * (0.25 + 0.004) * W[:, 3] ** 2 + 0.5 * mBm * np.sum(V[:, 1:] ** 2, axis=1)
        c.analytical["Lz_start_end"] = [float(Lz[0]), float(Lz[-1])]
        c.analytical["Lz_maxRelDrift"] = float(np.max(np.abs(Lz - Lz[0])) / abs(Lz[0]))
        c.analytical["Ekin_start_end"] = [float(E[0]), float(E[-1])]
        c.analytical["note"] = "Lz uses B's inertia 0.004 about z and B's angular velocity = A's (prismatic joint)"
    case.post = post
    return case


def build_inactive_joint_free_fall(case):
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    oG = mbs.AddObject(ObjectGround(name="ground"))
    m = 1.5
    n = ep_node(mbs, [0, 0, 1.0], RotXYZ2RotationMatrix([0.1, 0.2, 0.3]), v=[0.3, 0, 0], name="node")
    oB = mbs.AddObject(ObjectRigidBody(nodeNumber=n, mass=m, inertia=[0.01, 0.02, 0.03, 0, 0, 0], name="body"))
    R = RotXYZ2RotationMatrix([0.1, 0.2, 0.3])
    mG = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oG, localHT=HT(RotationMatrixY(0.4), [0, 0, 1.0]), name="mGround"))
    mB = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oB, localHT=HT(R.T @ RotationMatrixY(0.4), [0, 0, 0]), name="mBody"))
    oJ = mbs.AddObject(ObjectJointPrismaticX(markerNumbers=[mG, mB], activeConnector=False, name="slider"))
    mM = mbs.AddMarker(MarkerBodyMass(bodyNumber=oB, name="mMass"))
    mbs.AddLoad(LoadMassProportional(markerNumber=mM, loadVector=[0, 0, -9.81], name="gravity"))
    mbs.Assemble()
    add_sensors(case, mbs, "Node", n, ["Position", "Velocity", "Acceleration", "Rotation"], "node")
    add_sensors(case, mbs, "Object", oJ, JOINT_VARS, "joint")
    mbs.Assemble()
    case.mbs, case.SC = mbs, SC
    case.ss = settings(0.5, 100, 0.01)
    case.solve = {"type": "Dynamic", "solverType": "GeneralizedAlpha"}
    case.description = "Rigid body (EP) with gravity on a JointPrismaticX (axis tilted) with activeConnector=False, " \
                       "initial velocity [0.3,0,0]: free fall; endTime 0.5, 100 steps."
    case.checks = "activeConnector=False: multipliers zero (ForceLocal/TorqueLocal = 0), body free; joint " \
                  "outputs still computed from the marker states"
    case.analytical = {"formula": "x = 0.3 t, z = 1 - 9.81/2 t^2, rotation constant, ForceLocal = TorqueLocal = 0"}

    def post(c):
        P = sensor(c.mbs, "node_Position")
        t = P[:, 0]
        c.analytical["maxAbsErrorExudyn_position"] = float(max(np.max(np.abs(P[:, 1] - 0.3 * t)),
                                                              np.max(np.abs(P[:, 3] - (1 - 4.905 * t ** 2)))))
        c.analytical["z(0.5)"] = 1 - 4.905 * 0.25
        F = sensor(c.mbs, "joint_ForceLocal")
        c.analytical["maxAbsForceLocal"] = float(np.max(np.abs(F[:, 1:])))
    case.post = post
    return case


def build_slanted_axis_constant_force(case):
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    oG = mbs.AddObject(ObjectGround(name="ground"))
    a = np.ones(3) / math.sqrt(3)
    # orthonormal basis with x = a
    y = np.cross([0, 0, 1.0], a); y /= np.linalg.norm(y)
    z = np.cross(a, y)
    Rj = np.column_stack([a, y, z])
    m = 0.8
    F = np.array([1.0, 2.0, 3.0])
    n = ep_node(mbs, [0.5, -0.5, 0.2], np.eye(3), name="node")
    oB = mbs.AddObject(ObjectRigidBody(nodeNumber=n, mass=m, inertia=[0.01, 0.01, 0.01, 0, 0, 0], name="body"))
    mG = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oG, localHT=HT(Rj, [0.5, -0.5, 0.2]), name="mGround"))
    mB = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oB, localHT=HT(Rj, [0, 0, 0]), name="mBody"))
    oJ = mbs.AddObject(ObjectJointPrismaticX(markerNumbers=[mG, mB], name="slider"))
    mbs.AddLoad(LoadForceVector(markerNumber=mB, loadVector=F.tolist(), name="force"))
    mbs.Assemble()
    add_sensors(case, mbs, "Node", n, ["Position", "Displacement", "Velocity", "Acceleration"], "node")
    add_sensors(case, mbs, "Object", oJ, ["DisplacementLocal", "VelocityLocal", "ForceLocal", "TorqueLocal",
                                          "HomogeneousTransformationLocal"], "joint")
    mbs.Assemble()
    case.mbs, case.SC = mbs, SC
    case.ss = settings(1.0, 100, 0.01)
    case.solve = {"type": "Dynamic", "solverType": "GeneralizedAlpha"}
    Fa = float(F @ a)
    case.description = "Rigid body (m=0.8) on a JointPrismaticX along [1,1,1]/sqrt(3) (joint frame via localHT on " \
                       "both markers), constant global ForceVector [1,2,3] at the joint marker (COM); endTime 1, 100 steps."
    case.checks = "slanted joint axis; ForceLocal = [0, y0.F, z0.F] (dynamic sign: minus the constraint force on " \
                  "marker 1's body); TorqueLocal = 0; displacement = F.a/(2m) t^2 a"
    case.analytical = {"axis": a.tolist(), "J0y": y.tolist(), "J0z": z.tolist(),
                       "formula": "s(t) = (F.a)/(2m) t^2; Displacement = s a; ForceLocal = [0, F.y0, F.z0]",
                       "s(1)": Fa / (2 * m), "ForceLocal": [0.0, float(F @ y), float(F @ z)], "TorqueLocal": [0, 0, 0]}

    def post(c):
        D = sensor(c.mbs, "joint_DisplacementLocal")
        c.analytical["maxAbsErrorExudyn_s"] = float(np.max(np.abs(D[:, 1] - Fa / (2 * m) * D[:, 0] ** 2)))
        FL = sensor(c.mbs, "joint_ForceLocal")
        c.analytical["maxAbsErrorExudyn_ForceLocal"] = float(np.max(np.abs(FL[:, 1:] - [0, F @ y, F @ z])))
    case.post = post
    return case


def mass_point_model(case, solverType="GeneralizedAlpha"):
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    oG = mbs.AddObject(ObjectGround(name="ground"))
    m = 0.5
    n = mbs.AddNode(NodePoint(referenceCoordinates=[0, 0, 0], initialCoordinates=[0.1, 0, 0],
                              initialVelocities=[0.2, 0, 0], name="point"))
    oM = mbs.AddObject(ObjectMassPoint(nodeNumber=n, mass=m, name="massPoint"))
    mN = mbs.AddMarker(MarkerNodePosition(nodeNumber=n, name="mNode"))
    mG0 = mbs.AddMarker(MarkerBodyPosition(bodyNumber=oG, localPosition=[0, 0, 0], name="mGround0"))
    mG1 = mbs.AddMarker(MarkerBodyPosition(bodyNumber=oG, localPosition=[-1.0, 0, 0], name="mGround1"))
    mB = mbs.AddMarker(MarkerBodyPosition(bodyNumber=oM, localPosition=[0, 0, 0], name="mBodyPos"))
    kc, dc = [40.0, 60.0, 80.0], [0.4, 0.6, 0.8]
    oC = mbs.AddObject(ObjectConnectorCartesianSpringDamper(markerNumbers=[mG0, mN], stiffness=kc, damping=dc,
                                                            offset=[0, 0, 0], name="cartesian"))
    k2, d2 = 10.0, 0.1
    oS = mbs.AddObject(ObjectConnectorSpringDamper(markerNumbers=[mG1, mB], stiffness=k2, damping=d2,
                                                   referenceLength=1.0, name="spring"))
    lF = mbs.AddLoad(LoadForceVector(markerNumber=mN, loadVector=[0.5, 0, 0], name="forceX"))
    mbs.Assemble()
    add_load_sensor(case, mbs, lF, "load_forceX")
    add_sensors(case, mbs, "Marker", mN, MARKER_VARS, "markerNode")
    add_sensors(case, mbs, "Node", n, ["Position", "Displacement", "Velocity", "Acceleration", "Coordinates",
                                       "Coordinates_t", "Coordinates_tt"], "node")
    add_sensors(case, mbs, "Body", oM, ["Position", "Displacement", "Velocity", "Acceleration"], "body",
                localPosition=[0, 0, 0])
    add_sensors(case, mbs, "Object", oC, CONNECTOR_VARS, "cartesian")
    add_sensors(case, mbs, "Object", oS, CONNECTOR_VARS, "spring")
    mbs.Assemble()
    case.mbs, case.SC = mbs, SC
    case.ss = settings(2.0, 400, 0.01)
    case.solve = {"type": "Dynamic", "solverType": solverType}
    K, Dd = kc[0] + k2, dc[0] + d2
    case.description = ("NodePoint + ObjectMassPoint (m=0.5) between a ConnectorCartesianSpringDamper (k=[40,60,80], "
                        "d=[0.4,0.6,0.8]) to a ground point at the origin (MarkerBodyPosition on ground -> "
                        "MarkerNodePosition) and a ConnectorSpringDamper (k=10, d=0.1, L0=1) to a ground point at "
                        "[-1,0,0] (-> MarkerBodyPosition on the mass point); ForceVector [0.5,0,0] on the "
                        "MarkerNodePosition; x0=0.1, v0=0.2 along x; endTime 2, 400 steps.")
    case.checks = "NodePoint/MassPoint, MarkerNodePosition, MarkerBodyPosition on ground and on a mass point, " \
                  "CartesianSpringDamper and SpringDamper forces and outputs; damped oscillator"
    case.analytical = {"formula": "motion only along x: m x'' + (d_x + d2) x' + (k_x + k2) x = 0.5, x(0)=0.1, "
                                  "x'(0)=0.2 (spring-damper length 1+x, L0=1)", "m": m, "k": K, "d": Dd}
    case.post = lambda c: _post_oscillator(c, "node_Position", 1, m, K, Dd, 0.5 / K, 0.1, 0.2)
    return case


def build_mass_point_spring(case):
    return mass_point_model(case)


def build_rk44(case):
    mass_point_model(case, "RK44")
    case.ss.timeIntegration.automaticStepSize = False
    case.description = "Case mass_point_spring solved with the explicit solverType RK44 (fixed step, " \
                       "automaticStepSize=False). " + case.description
    case.checks = "explicit Runge-Kutta 4 (classical) on an unconstrained system; " + case.checks
    return case


def build_dopri5(case):
    mass_point_model(case, "DOPRI5")
    case.ss.timeIntegration.automaticStepSize = False
    case.description = "Case mass_point_spring solved with the explicit solverType DOPRI5 with " \
                       "automaticStepSize=False (fixed step h=endTime/numberOfSteps). " + case.description
    case.checks = "explicit Dormand-Prince 5(4) with fixed step; " + case.checks
    return case


def build_dopri5_adaptive(case):
    mass_point_model(case, "DOPRI5")
    case.ss.timeIntegration.automaticStepSize = True
    case.ss.timeIntegration.numberOfSteps = 20
    case.ss.timeIntegration.absoluteTolerance = 1e-6
    case.ss.timeIntegration.relativeTolerance = 1e-6
    case.description = ("Case mass_point_spring solved with DOPRI5 and automatic step size control (Exudyn's "
                        "default automaticStepSize=True), timeIntegration.absoluteTolerance = relativeTolerance = "
                        "1e-6, numberOfSteps=20 (maximum step 0.1). Row times follow the accepted steps. "
                        + case.description)
    case.checks = "explicit DOPRI5 with Exudyn's step size controller; " + case.checks
    return case


def build_pendulum_revolute(case):
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    oG = mbs.AddObject(ObjectGround(name="ground"))
    L, m = 0.8, 1.2
    phi0 = 0.1
    R0 = RotationMatrixZ(phi0)
    # rod along its local -y from the pivot at its local [0, L/2, 0]; COM at node
    pivot = np.array([0, 1.0, 0])
    p = pivot + R0 @ np.array([0, -L / 2, 0])
    n = ep_node(mbs, p, R0, name="node")
    Jc = m * L ** 2 / 12
    oB = mbs.AddObject(ObjectRigidBody(nodeNumber=n, mass=m, inertia=[Jc, 0.001, Jc, 0, 0, 0], name="rod"))
    mG = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oG, localPosition=pivot.tolist(), name="mGround"))
    mB = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oB, localHT=HT(R0.T, [0, L / 2, 0]), name="mRod"))
    oJ = mbs.AddObject(ObjectJointRevoluteZ(markerNumbers=[mG, mB], name="revolute"))
    mM = mbs.AddMarker(MarkerBodyMass(bodyNumber=oB, name="mMass"))
    mbs.AddLoad(LoadMassProportional(markerNumber=mM, loadVector=[0, -9.81, 0], name="gravity"))
    mbs.Assemble()
    add_sensors(case, mbs, "Object", oJ, JOINT_VARS, "revolute")
    add_sensors(case, mbs, "Node", n, ["Position", "Rotation", "AngularVelocity"], "node")
    mbs.Assemble()
    case.mbs, case.SC = mbs, SC
    case.ss = settings(2.0, 1000, 0.01)
    case.solve = {"type": "Dynamic", "solverType": "GeneralizedAlpha"}
    Ip = m * L ** 2 / 3
    T = 2 * math.pi * math.sqrt(Ip / (m * 9.81 * L / 2))
    case.description = ("Rod (m=1.2, L=0.8, EP node at the COM) hanging from a JointRevoluteZ at [0,1,0] (marker 1 "
                        "with a localHT whose rotation undoes the initial angle), gravity -y, start angle 0.1 rad "
                        "at rest; endTime 2, 1000 steps.")
    case.checks = ("JointRevoluteZ constraints and all its outputs (Rotation = [0,0,angle] relative to the joint frame "
                  "of marker 0, ForceLocal in global components, TorqueLocal); small-angle pendulum period")
    case.analytical = {"formula": "T = 2 pi sqrt(I_pivot/(m g L/2)), I_pivot = m L^2/3 (small angle; at 0.1 rad "
                                  "the true period is ~0.06% longer)", "T_smallAngle": T,
                       "T_exactFor0.1rad": T * (1 + phi0 ** 2 / 16 + 11 * phi0 ** 4 / 3072)}

    def post(c):
        D = sensor(c.mbs, "node_Rotation")
        t, ph = D[:, 0], D[:, 3]
        # upward zero crossings of the angle, linear interpolation
        zc = [t[i] - ph[i] * (t[i + 1] - t[i]) / (ph[i + 1] - ph[i]) for i in range(len(t) - 1)
              if ph[i] * ph[i + 1] < 0 or (ph[i] != 0 and ph[i + 1] == 0)]
        if len(zc) >= 2:
            c.analytical["T_exudyn_fromZeroCrossings"] = float(2 * (zc[1] - zc[0]))
            c.analytical["zeroCrossings"] = [float(x) for x in zc]
    case.post = post
    return case


def build_revolute_prismatic_testmodel(case):
    """Exudyn's TestModels/revoluteJointPrismaticJointTest.py, rebuilt item by item (AddRigidBody of the
    test model = NodeRigidBodyEP + ObjectRigidBody + MarkerBodyMass + LoadMassProportional)."""
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    L, d = 0.4, 0.1
    oGround = mbs.AddObject(ObjectGround(referencePosition=[0, 0, 0]))
    mPosLast = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oGround, localPosition=[0, 0, 0]))
    A0 = RotationMatrixX(0)
    Alist = [A0, RotationMatrixY(0.5 * math.pi), RotationMatrixZ(0.5 * math.pi), RotationMatrixX(-0.5 * math.pi),
             RotationMatrixZ(0.5 * math.pi)]
    p0 = np.array([0., 0., 0])
    vLoc = np.array([L, 0, 0])
    g = [0, -9.81, 0]
    joints = []
    caught = []
    for i in range(5):
        inertia = InertiaCuboid(density=1000, sideLengths=[L, d, d])
        p0 += 0.5 * vLoc
        nRB = mbs.AddNode(NodeRigidBodyEP(referenceCoordinates=list(p0) + list(eulerParameters0),
                                          initialVelocities=[0] * 7))
        oRB = mbs.AddObject(ObjectRigidBody(nodeNumber=nRB, mass=inertia.Mass(), inertia=inertia.GetInertia6D(),
                                            centerOfMass=list(inertia.COM())))
        mMass = mbs.AddMarker(MarkerBodyMass(bodyNumber=oRB))
        mbs.AddLoad(LoadMassProportional(markerNumber=mMass, loadVector=g))
        mPos0 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oRB, localPosition=[-0.5 * L, 0, 0]))
        mPos1 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oRB, localPosition=[0.5 * L, 0, 0]))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            if i != 2:
                j = mbs.AddObject(ObjectJointRevoluteZ(markerNumbers=[mPosLast, mPos0], rotationMarker0=Alist[i],
                                                       rotationMarker1=Alist[i],
                                                       visualization=VObjectJointRevoluteZ(axisRadius=0.5 * d,
                                                                                           axisLength=1.2 * d)))
            else:
                j = mbs.AddObject(ObjectJointPrismaticX(markerNumbers=[mPosLast, mPos0], rotationMarker0=Alist[i],
                                                        rotationMarker1=Alist[i],
                                                        visualization=VObjectJointPrismaticX(axisRadius=0.5 * d,
                                                                                             axisLength=1.2 * d)))
                k = 500
                mbs.AddObject(ObjectConnectorCartesianSpringDamper(markerNumbers=[mPosLast, mPos0], stiffness=[k] * 3,
                                                                   damping=[k * 0.02] * 3,
                                                                   visualization=VCartesianSpringDamper(show=False,
                                                                                                        drawSize=0.5 * d)))
        for x in w:
            caught.append({"code": x.category.__name__, "item": "object%d" % int(j), "message": str(x.message)})
        joints.append(j)
        mPosLast = mPos1
        p0 += 0.5 * vLoc
    lastNode = nRB
    mbs.AddLoad(LoadForceVector(markerNumber=mPosLast, loadVector=[0, 0, 20]))
    mbs.Assemble()
    add_sensors(case, mbs, "Node", lastNode, ["Displacement", "Rotation", "Position", "Velocity"], "lastNode")
    add_sensors(case, mbs, "Object", joints[2], JOINT_VARS, "prismatic")
    add_sensors(case, mbs, "Object", joints[3], ["Rotation", "ForceLocal", "TorqueLocal", "AngularVelocityLocal"],
                "revolute3")
    mbs.Assemble()
    case.warnings = caught
    case.notes.append("Exudyn 1.13.6 emits each DeprecationWarning once per process and item type/parameter, so "
                      "exudyn.json lists it only for the first offending items (object4 JointRevoluteZ, object6 "
                      "JointPrismaticX); objects 4, 6, 9 and 11 all have rotationMarker0/1 other than the identity "
                      "(object2 has the identity).")
    case.mbs, case.SC = mbs, SC
    ss = settings(0.25, 250, 0.01)
    ss.timeIntegration.generalizedAlpha.spectralRadius = 0.8
    ss.timeIntegration.generalizedAlpha.computeInitialAccelerations = True
    ss.timeIntegration.newton.useModifiedNewton = True
    case.ss = ss
    case.solve = {"type": "Dynamic", "solverType": "GeneralizedAlpha"}
    case.description = ("Exudyn's TestModels/revoluteJointPrismaticJointTest.py rebuilt: five 0.4x0.1x0.1 steel-"
                        "density cuboids (EP nodes, gravity -y via MarkerBodyMass + LoadMassProportional as "
                        "AddRigidBody does), four JointRevoluteZ and one JointPrismaticX (third joint) with joint "
                        "frames given through the deprecated rotationMarker0/1, a CartesianSpringDamper "
                        "(k=500, d=10) parallel to the prismatic joint, a ForceVector [0,0,20] at the chain end; "
                        "spectralRadius 0.8, endTime 0.25, 250 steps, sensors every 0.01.")
    case.checks = "deprecated rotationMarker0/1 (DeprecationWarning) on JointRevoluteZ and JointPrismaticX; " \
                  "chain with mixed joints; Exudyn's testResult"
    case.analytical = {"testResultExpected": 1.2538806799246283,
                       "testResultFormula": "sum(|Displacement| + |Rotation|) of the last node at t = 0.25"}

    def post(c):
        u = np.array(c.mbs.GetNodeOutput(lastNode, OVT.Displacement))
        r = np.array(c.mbs.GetNodeOutput(lastNode, OVT.Rotation))
        res = float((abs(u) + abs(r)).sum())
        c.analytical["testResultExudyn"] = res
        c.analytical["testResultError"] = res - 1.2538806799246283
        U = sensor(c.mbs, "lastNode_Displacement")
        R = sensor(c.mbs, "lastNode_Rotation")
        c.analytical["testResultFromLastSensorRows"] = float(np.abs(U[-1, 1:]).sum() + np.abs(R[-1, 1:]).sum())
    case.post = post
    return case


def static_model(case, loadSteps):
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    oG = mbs.AddObject(ObjectGround(name="ground"))
    Rj = RotationMatrixZ(math.radians(20))
    n = ep_node(mbs, [0.3, 0.1, 0], np.eye(3), name="node")
    oB = mbs.AddObject(ObjectRigidBody(nodeNumber=n, mass=1.0, inertia=[0.01, 0.01, 0.01, 0, 0, 0], name="body"))
    mG = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oG, localHT=HT(Rj, [0.3, 0.1, 0]), name="mGround"))
    mB = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oB, localHT=HT(Rj, [0, 0, 0]), name="mBody"))
    oJ = mbs.AddObject(ObjectJointPrismaticX(markerNumbers=[mG, mB], name="slider"))
    anchor = np.array([0.3, 0.1, 0]) - 0.5 * Rj[:, 0]
    mGs = mbs.AddMarker(MarkerBodyPosition(bodyNumber=oG, localPosition=anchor.tolist(), name="mAnchor"))
    k = 100.0
    oS = mbs.AddObject(ObjectConnectorSpringDamper(markerNumbers=[mGs, mB], stiffness=k, damping=1.0,
                                                   referenceLength=0.5, name="spring"))
    F = 5.0 * Rj[:, 0] + np.array([0, 0, 2.0]) + 1.5 * Rj[:, 1]
    mbs.AddLoad(LoadForceVector(markerNumber=mB, loadVector=F.tolist(), name="force"))
    mbs.Assemble()
    add_sensors(case, mbs, "Object", oJ, ["ForceLocal", "TorqueLocal", "DisplacementLocal"], "joint")
    add_sensors(case, mbs, "Node", n, ["Position", "Displacement"], "node")
    add_sensors(case, mbs, "Object", oS, ["Force", "Distance"], "spring")
    mbs.Assemble()
    case.mbs, case.SC = mbs, SC
    ss = settings(1.0, 1, 0.01)
    ss.staticSolver.numberOfLoadSteps = loadSteps
    case.ss = ss
    case.solve = {"type": "Static"}
    case.description = ("SolveStatic: rigid body on a JointPrismaticX with axis Rz(20deg)*x, spring (k=100, d=1, L0=0.5) "
                        "along the axis, force 5 along the axis + 1.5 along joint y + 2 along z; numberOfLoadSteps=%d."
                        % loadSteps)
    case.checks = "static solver, load factor per load step (rows at t = load factor), static multiplier sign " \
                  "(opposite to dynamic), deflection F/k"
    case.analytical = {"formula": "deflection s = F_axis/k * loadFactor; static ForceLocal = -[0, F.y0, F.z0] * "
                                  "loadFactor (the static solver's multipliers have the opposite sign to dynamics)",
                       "deflectionFinal": 5.0 / k, "ForceLocalFinal_dynamicSignConvention": [0, 1.5, 2.0],
                       "loadFactors": [i / loadSteps for i in range(loadSteps + 1)]}

    def post(c):
        D = sensor(c.mbs, "joint_DisplacementLocal")
        c.analytical["exudyn_rows_t_s"] = [[float(r[0]), float(r[1])] for r in D]
        FL = sensor(c.mbs, "joint_ForceLocal")
        c.analytical["exudyn_ForceLocal_final"] = FL[-1, 1:].tolist()
    case.post = post
    return case


def build_static_spring(case):
    return static_model(case, 1)


def build_static_spring_5steps(case):
    return static_model(case, 5)


def build_coordinate_items(case):
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    mbs.AddObject(ObjectGround(name="ground"))
    nGr = mbs.AddNode(NodePointGround(referenceCoordinates=[0, 0, 0], name="groundNode"))
    nP = mbs.AddNode(NodePoint(referenceCoordinates=[0, 0, 0], initialCoordinates=[0.05, -0.02, 0], name="point"))
    mbs.AddObject(ObjectMassPoint(nodeNumber=nP, mass=0.7, name="massPoint"))
    nE = ep_node(mbs, [1.0, 0, 0], RotXYZ2RotationMatrix([0.1, 0, 0.2]), omega=[0.5, 0.2, -0.3], name="epNode")
    mbs.AddObject(ObjectRigidBody(nodeNumber=nE, mass=1.3, inertia=[0.02, 0.03, 0.04, 0.001, 0, 0.002],
                                       name="body"))
    mGx = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nGr, coordinate=0, name="mGround0"))
    mPx = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nP, coordinate=0, name="mPointX"))
    mPy = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nP, coordinate=1, name="mPointY"))
    mPz = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nP, coordinate=2, name="mPointZ"))
    mEy = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nE, coordinate=1, name="mEpY"))
    mEx = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nE, coordinate=0, name="mEpX"))
    mGz = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=nGr, coordinate=2, name="mGround2"))
    oCSD = mbs.AddObject(ObjectConnectorCoordinateSpringDamper(markerNumbers=[mGx, mPx], stiffness=30.0, damping=0.3,
                                                               offset=0.01, name="coordSpring"))
    mbs.AddObject(ObjectConnectorCoordinateSpringDamper(markerNumbers=[mGz, mPz], stiffness=20.0, damping=0.0,
                                                                offset=0.0, name="coordSpringZ"))
    oCC = mbs.AddObject(ObjectConnectorCoordinate(markerNumbers=[mPy, mEy], factor1=2.0, offset=0.02,
                                                  name="coordConstraint"))
    lE = mbs.AddLoad(LoadCoordinate(markerNumber=mEx, load=0.8, name="loadEpX"))
    lP = mbs.AddLoad(LoadCoordinate(markerNumber=mPz, load=-0.5, name="loadPointZ"))
    lPy = mbs.AddLoad(LoadCoordinate(markerNumber=mPy, load=0.3, name="loadPointY"))
    mbs.Assemble()
    add_sensors(case, mbs, "Node", nP, ["Position", "Coordinates", "Coordinates_t", "Coordinates_tt"], "point")
    add_sensors(case, mbs, "Node", nE, ["Position", "Coordinates", "Velocity", "Rotation", "AngularVelocity"], "ep")
    add_sensors(case, mbs, "Object", oCSD, CONNECTOR_VARS, "coordSpring")
    add_sensors(case, mbs, "Object", oCC, CONNECTOR_VARS, "coordConstraint")
    add_sensors(case, mbs, "Marker", mPy, ["Coordinates", "Coordinates_t", "Position"], "markerPointY")
    for l, nm in [(lE, "load_EpX"), (lP, "load_PointZ"), (lPy, "load_PointY")]:
        add_load_sensor(case, mbs, l, nm)
    mbs.Assemble()
    case.mbs, case.SC = mbs, SC
    case.ss = settings(1.0, 200, 0.01)
    case.solve = {"type": "Dynamic", "solverType": "GeneralizedAlpha"}
    case.description = ("NodePoint + MassPoint (m=0.7) and a free EP rigid body (m=1.3, inertia with off-diagonals, "
                        "initial angular velocity [0.5,0.2,-0.3]); ConnectorCoordinateSpringDamper (k=30, d=0.3, "
                        "offset=0.01) between a NodePointGround x-coordinate and the point's x; another one "
                        "(k=20) on z; ConnectorCoordinate with markers [point y, ep y], factor1=2, offset=0.02, i.e. "
                        "2*y_ep - y_point - 0.02 = 0 (point starts at y=-0.02); LoadCoordinate 0.8 on the EP node's x, -0.5 on the point's z and 0.3 on the point's y; "
                        "endTime 1, 200 steps.")
    case.checks = "MarkerNodeCoordinate (on NodePointGround, NodePoint and an EP node), ConnectorCoordinateSpringDamper " \
                  "with offset, ConnectorCoordinate with factor1 (equation factor1*q_m1 - q_m0 - offset = 0 per Exudyn " \
                  "docs), LoadCoordinate, outputs of coordinate connectors"
    m_p, m_e = 0.7, 1.3
    # y: point y = 2*ep y, loads 0.3 on point y: (m_p*4 + m_e) * yE'' = 0.3*2  (q_p = 2 q_e)
    aEy = 0.3 * 2 / (4 * m_p + m_e)
    case.analytical = {
        "formula": "x_point: 0.7 x'' + 0.3 x' + 30 (x - 0.01)... sign per Exudyn: f = k(q_m1 - q_m0 - offset) + d(...)"
                   "; z_point: 0.7 z'' + 20 z = -0.5; EP x: x'' = 0.8/1.3; ConnectorCoordinate: y_point = 2 y_ep - 0.02, "
                   "y_ep'' = 0.3*2/(4*0.7+1.3)",
        "epX_acc": 0.8 / 1.3, "epY_acc": aEy, "pointY_acc": 2 * aEy}

    def post(c):
        C = sensor(c.mbs, "ep_Coordinates")
        t = C[:, 0]
        c.analytical["maxAbsErrorExudyn_epX"] = float(np.max(np.abs(C[:, 1] - 0.5 * 0.8 / 1.3 * t ** 2)))
        c.analytical["maxAbsErrorExudyn_epY"] = float(np.max(np.abs(C[:, 2] - 0.5 * aEy * t ** 2)))
        P = sensor(c.mbs, "point_Coordinates")
        c.analytical["maxAbsErrorExudyn_pointY"] = float(np.max(np.abs(P[:, 2] - (-0.02 + aEy * t ** 2))))
        c.analytical["maxAbsErrorExudyn_pointX_oscillator"] = float(np.max(np.abs(
            P[:, 1] - _damped(t, 0.7, 30.0, 0.3, 0.01, 0.05, 0.0))))
        c.analytical["maxAbsErrorExudyn_pointZ_oscillator"] = float(np.max(np.abs(
            P[:, 3] - _damped(t, 0.7, 20.0, 0.0, -0.5 / 20, 0.0, 0.0))))
    case.post = post
    return case


def build_spherical_and_generic(case):
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    oG = mbs.AddObject(ObjectGround(name="ground"))
    g = [0, 0, -9.81]
    # body A: hangs from a spherical joint at the origin, COM 0.3 below
    RA = RotXYZ2RotationMatrix([0.3, -0.2, 0.1])
    pA = RA @ np.array([0, 0, -0.3])
    wA = np.array([0.5, -1.0, 2.0])
    nA = ep_node(mbs, pA, RA, v=np.cross(wA, pA), omega=wA, name="nodeA")
    oA = mbs.AddObject(ObjectRigidBody(nodeNumber=nA, mass=1.0, inertia=[0.01, 0.012, 0.004, 0.0005, 0, 0.001],
                                       name="bodyA"))
    mG = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oG, localPosition=[0, 0, 0], name="mGround"))
    mA0 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oA, localPosition=[0, 0, 0.3], name="mATop"))
    oS = mbs.AddObject(ObjectJointSpherical(markerNumbers=[mG, mA0], name="spherical"))
    # body B: hangs from A's bottom by a JointGeneric with free rotations about J0 x and y (constrainedAxes [1,1,1,0,0,1])
    Rj = RotationMatrixZ(0.4)
    pJ = pA + RA @ np.array([0, 0, -0.3])
    RB = RA
    pB = pJ + RB @ np.array([0, 0, -0.2])
    wB = wA + RA @ Rj @ np.array([1.0, -0.5, 0])
    nB = ep_node(mbs, pB, RB, v=np.cross(wA, pJ) + np.cross(wB, pB - pJ), omega=wB, name="nodeB")
    oB = mbs.AddObject(ObjectRigidBody(nodeNumber=nB, mass=0.6, inertia=[0.005, 0.006, 0.002, 0, 0, 0],
                                       centerOfMass=[0.01, 0, 0], name="bodyB"))
    mA1 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oA, localHT=HT(Rj, [0, 0, -0.3]), name="mABottom"))
    mB0 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oB, localHT=HT(RB.T @ RA @ Rj, [0, 0, 0.2]), name="mBTop"))
    oJ = mbs.AddObject(ObjectJointGeneric(markerNumbers=[mA1, mB0], constrainedAxes=[1, 1, 1, 0, 0, 1],
                                          name="generic"))
    for o, nm in [(oA, "mMassA"), (oB, "mMassB")]:
        mm = mbs.AddMarker(MarkerBodyMass(bodyNumber=o, name=nm))
        mbs.AddLoad(LoadMassProportional(markerNumber=mm, loadVector=g, name="gravity" + nm[-1]))
    mbs.Assemble()
    add_sensors(case, mbs, "Object", oS, JOINT_VARS + ["Displacement", "Force", "Torque"], "spherical")
    add_sensors(case, mbs, "Object", oJ, JOINT_VARS + ["Displacement", "Force", "Torque"], "generic")
    add_sensors(case, mbs, "Node", nA, ["Position", "Rotation"], "nodeA")
    add_sensors(case, mbs, "Node", nB, ["Position", "Rotation", "AngularVelocity"], "nodeB")
    mbs.Assemble()
    case.mbs, case.SC = mbs, SC
    case.ss = settings(1.0, 500, 0.02)
    case.solve = {"type": "Dynamic", "solverType": "GeneralizedAlpha"}
    case.description = ("3D double pendulum: body A on a JointSpherical to ground at the origin (COM 0.3 below the "
                        "joint, initial angular velocity [0.5,-1,2]); body B on a JointGeneric to A with "
                        "constrainedAxes [1,1,1,0,0,1] (rotations about J0 x and y free; J0 = A's marker rotated "
                        "Rz(0.4)); gravity -z; endTime 1, 500 steps.")
    case.checks = "JointSpherical and JointGeneric constraint equations, multipliers and outputs (ForceLocal, " \
                  "TorqueLocal, Rotation, HTs, ...); consistent initial velocities with spherical/universal motion"
    case.analytical = {"formula": "energy conservation (ideal joints, conservative gravity)"}

    def post(c):
        # energy from node sensors would need velocities of A; record drift of B's COM height only as a sanity value
        P = sensor(c.mbs, "nodeB_Position")
        c.analytical["nodeB_z_start_end"] = [float(P[0, 3]), float(P[-1, 3])]
    case.post = post
    return case


def build_slider_crank(case):
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    oG = mbs.AddObject(ObjectGround(name="ground"))
    r, l = 0.2, 0.6
    phi0, w0 = 0.3, 4.0
    g = [0, -9.81, 0]
    # crank: rotates about z at origin, COM at r/2
    Rc = RotationMatrixZ(phi0)
    ec = Rc[:, 0]
    nC = ep_node(mbs, r / 2 * ec, Rc, v=np.cross([0, 0, w0], r / 2 * ec), omega=[0, 0, w0], name="crankNode")
    oC = mbs.AddObject(ObjectRigidBody(nodeNumber=nC, mass=1.0, inertia=[1e-4, 1.0 * r ** 2 / 12, 1.0 * r ** 2 / 12,
                                                                        0, 0, 0], name="crank"))
    # rod: from crank pin A to slider B
    pA = r * ec
    xB = r * math.cos(phi0) + math.sqrt(l ** 2 - (r * math.sin(phi0)) ** 2)
    pB = np.array([xB, 0, 0])
    beta = math.atan2(pB[1] - pA[1], pB[0] - pA[0])
    Rr = RotationMatrixZ(beta)
    # velocities: vA = w0 x pA; rod angular rate from slider constraint
    vA = np.cross([0, 0, w0], pA)
    # vB = vA + wr x (pB - pA), vB_y = 0
    dAB = pB - pA
    wr = -vA[1] / dAB[0]
    vB = vA + np.cross([0, 0, wr], dAB)
    pR = 0.5 * (pA + pB)
    nR = ep_node(mbs, pR, Rr, v=vA + np.cross([0, 0, wr], pR - pA), omega=[0, 0, wr], name="rodNode")
    oR = mbs.AddObject(ObjectRigidBody(nodeNumber=nR, mass=0.5, inertia=[1e-4, 0.5 * l ** 2 / 12, 0.5 * l ** 2 / 12,
                                                                        0, 0, 0], name="rod"))
    nS = ep_node(mbs, pB, np.eye(3), v=vB, name="sliderNode")
    oS = mbs.AddObject(ObjectRigidBody(nodeNumber=nS, mass=0.8, inertia=[1e-3, 1e-3, 1e-3, 0, 0, 0], name="slider"))
    mG0 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oG, localPosition=[0, 0, 0], name="mGroundCrank"))
    mC0 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oC, localHT=HT(Rc.T, [-r / 2, 0, 0]), name="mCrankBase"))
    oJ0 = mbs.AddObject(ObjectJointRevoluteZ(markerNumbers=[mG0, mC0], name="crankJoint"))
    mC1 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oC, localPosition=[r / 2, 0, 0], name="mCrankPin"))
    mR0 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oR, localHT=HT(Rr.T @ Rc, [-l / 2, 0, 0]), name="mRodA"))
    oJ1 = mbs.AddObject(ObjectJointRevoluteZ(markerNumbers=[mC1, mR0], name="crankRodJoint"))
    mS0 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oS, localPosition=[0, 0, 0], name="mSliderPin"))
    mR1 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oR, localHT=HT(Rr.T, [l / 2, 0, 0]), name="mRodB"))
    # rod-slider: only x,y of the pin constrained (planar loop in 3D: a full revolute would be redundant)
    oJ2 = mbs.AddObject(ObjectJointGeneric(markerNumbers=[mS0, mR1], constrainedAxes=[1, 1, 0, 0, 0, 0],
                                           name="rodSliderJoint"))
    mG1 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oG, localPosition=[0, 0, 0], name="mGroundSlider"))
    mS1 = mbs.AddMarker(MarkerBodyRigid(bodyNumber=oS, localPosition=[-xB, 0, 0], name="mSliderGuide"))
    oP = mbs.AddObject(ObjectJointPrismaticX(markerNumbers=[mG1, mS1], name="sliderJoint"))
    for o, nm in [(oC, "C"), (oR, "R"), (oS, "S")]:
        mm = mbs.AddMarker(MarkerBodyMass(bodyNumber=o, name="mMass" + nm))
        mbs.AddLoad(LoadMassProportional(markerNumber=mm, loadVector=g, name="gravity" + nm))
    mbs.Assemble()
    add_sensors(case, mbs, "Object", oJ0, ["Rotation", "AngularVelocityLocal", "ForceLocal", "TorqueLocal"], "crankJoint")
    add_sensors(case, mbs, "Object", oJ1, ["Rotation", "ForceLocal"], "crankRodJoint")
    add_sensors(case, mbs, "Object", oJ2, ["DisplacementLocal", "ForceLocal"], "rodSliderJoint")
    add_sensors(case, mbs, "Object", oP, JOINT_VARS, "sliderJoint")
    add_sensors(case, mbs, "Node", nS, ["Position", "Velocity"], "sliderNode")
    add_sensors(case, mbs, "Node", nC, ["Rotation", "AngularVelocity"], "crankNode")
    mbs.Assemble()
    case.mbs, case.SC = mbs, SC
    case.ss = settings(1.0, 1000, 0.01)
    case.solve = {"type": "Dynamic", "solverType": "GeneralizedAlpha"}
    case.description = ("Slider-crank in the xy-plane with gravity -y: crank (r=0.2, m=1) on a JointRevoluteZ at "
                        "the origin, start angle 0.3 rad, omega 4 rad/s; rod (l=0.6, m=0.5) on a JointRevoluteZ at "
                        "the crank pin; rod end to slider by a JointGeneric constraining only x,y of the pin "
                        "(a third revolute would make the planar loop redundant in 3D); slider (m=0.8) on a "
                        "JointPrismaticX along global x; consistent initial velocities; endTime 1, 1000 steps.")
    case.checks = "closed loop with revolute, generic and prismatic joints; slider position vs crank angle (closed " \
                  "form); joint forces in a machine"
    case.analytical = {"formula": "x_slider = r cos(phi) + sqrt(l^2 - (r sin(phi))^2), phi = crank angle "
                                  "(crankJoint Rotation z + 0.3, unwrapped)", "r": r, "l": l, "phi0": phi0}

    def post(c):
        Rj = sensor(c.mbs, "crankJoint_Rotation")
        P = sensor(c.mbs, "sliderNode_Position")
        phi = np.unwrap(Rj[:, 3]) + phi0
        xs = r * np.cos(phi) + np.sqrt(l ** 2 - (r * np.sin(phi)) ** 2)
        c.analytical["maxAbsErrorExudyn_sliderX_vs_crankAngle"] = float(np.max(np.abs(P[:, 1] - xs)))
        c.analytical["crankAngle_end"] = float(phi[-1])
    case.post = post
    return case


# ====================================================================== driver
IMPLICIT = {"GeneralizedAlpha", "TrapezoidalIndex2"}
CASES = {
    "prismatic_outputs": build_prismatic_outputs,
    "prismatic_on_rotating_body": build_prismatic_on_rotating_body,
    "inactive_joint_free_fall": build_inactive_joint_free_fall,
    "slanted_axis_constant_force": build_slanted_axis_constant_force,
    "mass_point_spring": build_mass_point_spring,
    "pendulum_revolute": build_pendulum_revolute,
    "revolute_prismatic_testmodel": build_revolute_prismatic_testmodel,
    "index2_trapezoidal": build_index2_trapezoidal,
    "newmark_index3": build_newmark_index3,
    "static_spring": build_static_spring,
    "static_spring_5steps": build_static_spring_5steps,
    "coordinate_items": build_coordinate_items,
    "spherical_and_generic": build_spherical_and_generic,
    "slider_crank": build_slider_crank,
    "rk44": build_rk44,
    "dopri5": build_dopri5,
    "dopri5_adaptive": build_dopri5_adaptive,
}
_WARNINGS = {}
TIGHT_TRIALS = [(1e-14, False), (1e-13, False), (1e-12, False), (1e-11, False)]


def build(builder):
    case = Case()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        builder(case)
    if not case.warnings:
        case.warnings = [{"code": x.category.__name__, "item": None, "message": str(x.message)} for x in w
                         if issubclass(x.category, DeprecationWarning)]
    # Exudyn emits each deprecation warning only once per process: keep the first capture per builder
    if case.warnings:
        _WARNINGS.setdefault(builder, case.warnings)
    case.warnings = _WARNINGS.get(builder, [])
    return case


def solve_once(builder, tight=None, writePeriod=None):
    """Build, solve; return (case, seconds, solverInfo). Raises on failure."""
    case = build(builder)
    flush_sensors(case)
    ss = case.ss
    if writePeriod is not None:
        ss.solution.sensors.writePeriod = writePeriod
    if tight is not None:
        tol, modified = tight
        ss.timeIntegration.newton.relativeTolerance = tol
        ss.timeIntegration.newton.absoluteTolerance = tol
        ss.timeIntegration.newton.useModifiedNewton = modified
    mbs = case.mbs
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            if case.solve["type"] == "Static":
                t0 = time.perf_counter()
                ok = mbs.SolveStatic(ss)
                sec = time.perf_counter() - t0
                solver = mbs.sys["staticSolver"]
            else:
                st = getattr(exu.DynamicSolverType, case.solve["solverType"])
                t0 = time.perf_counter()
                ok = mbs.SolveDynamic(ss, solverType=st)
                sec = time.perf_counter() - t0
                solver = mbs.sys["dynamicSolver"]
        finally:
            os.chdir(cwd)
    if not ok:
        raise RuntimeError("Exudyn solve returned False")
    it = solver.it
    info = {"type": case.solve["type"]}
    if case.solve["type"] == "Dynamic":
        info["solverType"] = case.solve["solverType"]
    info.update({"steps": int(it.currentStepIndex) - 1, "newtonIterations": int(it.newtonStepsCount),
                 "solveSeconds": sec})
    case.jacobians = int(it.newtonJacobiCount)
    return case, sec, info


def _jdefault(o):
    if hasattr(o, "GetIndex"):
        return int(o.GetIndex())
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def write_case(name, builder, tight=None):
    folder = HERE / name
    folder.mkdir(exist_ok=True)
    wp = None
    for _ in range(8):
        case, sec, info = solve_once(builder, tight, wp)
        wp = case.ss.solution.sensors.writePeriod
        res = results_doc(case.mbs, info, case.warnings)
        text = json.dumps(res)
        if len(text) <= MAX_FILE_BYTES:
            break
        wp = wp * 2
    # median solve time of 3 more runs
    times = [sec] + [solve_once(builder, tight, wp)[1] for _ in range(2)]
    med = statistics.median(times)
    res["solver"]["solveSeconds"] = med
    text = json.dumps(res)
    model = ee.export_model(case.mbs, case.ss, case.solve, name=name)
    (folder / "model.json").write_text(json.dumps(model))
    (folder / "exudyn.json").write_text(text)
    try:
        case.post(case)
    except Exception as e:  # keep going; note it
        case.analytical["postError"] = repr(e)
    steps_expected = None
    if case.solve["type"] == "Dynamic":
        steps_expected = case.ss.timeIntegration.numberOfSteps
    meta = {
        "case": name, "exudynVersion": exu.__version__,
        "description": case.description, "checks": case.checks, "analytical": case.analytical,
        "solve": case.solve, "simulationSettingsExported": model["simulationSettings"],
        "newtonTight": None if tight is None else {"relativeTolerance": tight[0], "absoluteTolerance": tight[0],
                                                   "useModifiedNewton": tight[1]},
        "exudynSolver": info, "exudynJacobianEvaluations": case.jacobians, "stepsExpected": steps_expected,
        "exudynSolveSeconds": med, "exudynSolveSecondsRuns": times,
        "timing": "time.perf_counter around mbs.SolveDynamic/SolveStatic only, median of 3 runs",
        "sensorWritePeriod": wp,
        "refusedByExudyn": case.refused, "warnings": case.warnings, "notes": case.notes,
        "rows": {k: len(v["data"]) for k, v in res["sensors"].items()},
        "bytes": {"model.json": (folder / "model.json").stat().st_size, "exudyn.json": len(text)},
    }
    if steps_expected is not None and info["steps"] != steps_expected:
        meta["notes"].append("Exudyn used %d steps instead of %d (adaptive step reduction)" % (info["steps"],
                                                                                               steps_expected))
    (folder / "meta.json").write_text(json.dumps(meta, indent=1, default=_jdefault))
    print("%-36s rows/sensor %-4s sensors %-3d %7.1f kB  %.4fs  steps %s it %s refused %d" % (
        name, max(meta["rows"].values()), len(res["sensors"]), len(text) / 1e3, med, info["steps"],
        info["newtonIterations"], len(case.refused)), flush=True)
    return case, info


def verify_roundtrip(folder):
    """Rebuild the model from <folder>/model.json alone (Exudyn item dictionaries), solve it in Exudyn and
    return the largest difference to <folder>/exudyn.json (0.0 expected: the document is complete)."""
    m = json.loads((folder / "model.json").read_text())
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, add in [("nodes", mbs.AddNode), ("objects", mbs.AddObject), ("markers", mbs.AddMarker),
                         ("loads", mbs.AddLoad)]:
            for item in m[key]:
                add(item)
        for sd in m["sensors"]:
            sd = dict(sd)
            if "outputVariableType" in sd:
                sd["outputVariableType"] = getattr(OVT, sd["outputVariableType"])
            mbs.AddSensor(sd)
    mbs.Assemble()
    ss = exu.SimulationSettings()
    ss.solution.file.write = False
    ss.staticSolver.verboseMode = 0

    def setp(obj, d):
        for k, v in d.items():
            if isinstance(v, dict):
                setp(getattr(obj, k), v)
            else:
                setattr(obj, k, v)
    setp(ss, m["simulationSettings"])
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            if m["solve"]["type"] == "Static":
                mbs.SolveStatic(ss)
            else:
                mbs.SolveDynamic(ss, solverType=getattr(exu.DynamicSolverType, m["solve"]["solverType"]))
        finally:
            os.chdir(cwd)
    ref = json.loads((folder / "exudyn.json").read_text())["sensors"]
    err = 0.0
    for i in range(mbs.systemData.NumberOfSensors()):
        d = np.array(mbs.GetSensorStoredData(i))
        r = np.array(ref[mbs.GetSensor(i)["name"]]["data"])
        err = max(err, float(np.max(np.abs(d - r))) if d.shape == r.shape else math.inf)
    return err


def main(argv):
    if argv and argv[0] == "--verify":
        folders = [HERE / a for a in argv[1:]] or sorted(p.parent for p in HERE.glob("*/model.json"))
        bad = 0
        for f in folders:
            e = verify_roundtrip(f)
            bad += e != 0.0
            print("%-36s max |model.json re-solved - exudyn.json| = %g" % (f.name, e), flush=True)
        sys.exit(1 if bad else 0)
    names = argv or list(CASES)
    for nm in names:
        base = nm[:-6] if nm.endswith("_tight") else nm
        builder = CASES[base]
        probe = build(builder)
        implicit = probe.solve["type"] == "Dynamic" and probe.solve["solverType"] in IMPLICIT
        if not nm.endswith("_tight"):
            write_case(base, builder)
        if implicit and (nm.endswith("_tight") or not argv or nm == base):
            last = None
            for trial in TIGHT_TRIALS:
                try:
                    case, info = write_case(base + "_tight", builder, trial)
                except Exception as e:
                    last = e
                    print("  tight %s failed: %s" % (trial, e))
                    continue
                if info["steps"] == probe.ss.timeIntegration.numberOfSteps:
                    break
                print("  tight %s needed step reduction; trying looser" % (trial,))
            else:
                print("  no tight variant converged for", base, last)


if __name__ == "__main__":
    main(sys.argv[1:])
