"""An Exudyn model solved by mbserve (exported) and by Exudyn 1.13.6, compared: the compiled item types with a
discontinuous iteration (penalty disc, sphere contact) follow Exudyn's Newton rules and sensors."""
from __future__ import annotations

import numpy as np

import multibody


def assert_solves_as_exudyn(mbs, settings, rtol: float, floor: float, newton_slack: int = 3) -> None:
    """Exudyn's number of steps (adaptive steps: its step sequence), Newton iterations within `newton_slack` of
    Exudyn's (its Newton matrix differs a little: numerical derivatives in node coordinates, ours in the markers'
    motion), the same Jacobian count, every sensor within rtol·max(floor, its largest value)."""
    import exudyn as exu
    from mbserve.exudyn import export
    ours = multibody.simulate(export(mbs, settings, solve={"type": "Dynamic", "solverType": "GeneralizedAlpha"}))
    assert ours.status == "succeeded", ours.error
    solver = exu.MainSolverImplicitSecondOrder()
    solver.SolveSystem(mbs, settings)
    assert ours.solver["steps"] == solver.it.currentStepIndex - 1  # one past the last step
    assert abs(ours.solver["newtonIterations"] - solver.it.newtonStepsCount) <= newton_slack
    assert ours.solver["jacobians"] == solver.it.newtonJacobiCount
    for i, series in enumerate(ours.sensors.values()):
        theirs = np.asarray(mbs.GetSensorStoredData(i))
        assert series.data.shape == theirs.shape
        assert np.abs(series.data - theirs).max() <= rtol * max(floor, np.abs(theirs).max()), i


def exudyn_settings(end: float, steps: int, write_period: float | None = None):
    """Exudyn's simulation settings for a silent solve of `steps` steps to `end`, no solution file."""
    import exudyn as exu
    settings = exu.SimulationSettings()
    settings.timeIntegration.endTime = end
    settings.timeIntegration.numberOfSteps = steps
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    if write_period is not None:
        settings.solution.sensors.writePeriod = write_period
    return settings


def contact_sensors_and_settings(mbs, contacts, outputs, bodies, end: float, steps: int, write_period: float,
                                 adaptive: bool = False):
    """Sensors of every output of the contacts, then the bodies' Position, Velocity and AngularVelocity; the system
    assembled; settings of `steps` fixed steps to `end` (`adaptive`: Exudyn's default adaptive steps with the items'
    recommended steps)."""
    import exudyn as exu
    from exudyn.itemInterface import SensorBody, SensorObject
    for c in contacts:
        for var in outputs:
            mbs.AddSensor(SensorObject(objectNumber=c, storeInternal=True,
                                       outputVariableType=getattr(exu.OutputVariableType, var)))
    for body in bodies:
        for var in ("Position", "Velocity", "AngularVelocity"):
            mbs.AddSensor(SensorBody(bodyNumber=body, storeInternal=True,
                                     outputVariableType=getattr(exu.OutputVariableType, var)))
    mbs.Assemble()
    settings = exudyn_settings(end, steps, write_period)
    settings.timeIntegration.adaptiveStep = adaptive
    settings.timeIntegration.discontinuous.useRecommendedStepSize = adaptive
    return mbs, settings
