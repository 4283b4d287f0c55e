"""The core's public interface: validate a model document, simulate it, get a results document.

    v = validate_document(doc)            # never raises for bad input
    res = simulate(doc, progress=cb, cancel=should_stop)   # Results; raises ModelInvalid
    res.to_document()                     # the SPEC section 4 JSON document
"""
from __future__ import annotations

from typing import Any, Callable

from . import settings as settings_mod
from .model import load_model
from .solvers import run
from .values import ExpressionLimits, ModelInvalid, Problem, Results, SensorSeries, SimulationCanceled, Validation

__all__ = ["ExpressionLimits", "ModelInvalid", "Problem", "Results", "SensorSeries", "SimulationCanceled", "Validation",
           "merge_settings", "run_document", "simulate", "validate_document"]


def merge_settings(doc: dict, overrides: dict | None) -> dict:
    """A copy of `doc` whose simulationSettings are deep-merged with `overrides` (a setting given
    there under any of its names replaces the document's, under any of its names)."""
    out = settings_mod.copy_tree(doc)
    if not overrides:
        return out

    def merge(dst: dict, src: dict) -> None:
        for k, v in src.items():
            if isinstance(v, dict) and isinstance(dst.get(k), dict):
                merge(dst[k], v)
            else:
                dst[k] = settings_mod.copy_tree(v)

    settings = out.get("simulationSettings")
    if not isinstance(settings, dict):
        settings = out["simulationSettings"] = {}
    settings_mod.drop_overridden(settings, overrides)
    merge(settings, overrides)
    return out


def validate_document(doc: Any, limits: ExpressionLimits | None = None,
                      cancel: Callable[[], bool] | None = None) -> Validation:
    """Check a model document; all problems at once, each with its JSON path. `limits`: what
    its expressions may cost (ExpressionLimits' defaults when None). Raises SimulationCanceled
    when `cancel()` turns true (polled between stages and motion laws)."""
    try:
        loaded = load_model(doc, limits, cancel)
    except ModelInvalid as exc:
        return Validation(ok=False, problems=exc.problems, warnings=[], summary={})
    return Validation(ok=True, problems=[], warnings=loaded.warnings, summary=loaded.summary(),
                      expanded=loaded.expanded_document)


def simulate(doc: Any, *, progress: Callable[[float], None] | None = None,
             cancel: Callable[[], bool] | None = None, store_solution: bool = False,
             limits: ExpressionLimits | None = None) -> Results:
    """Validate and run a model. Raises ModelInvalid for a bad document and SimulationCanceled
    when `cancel()` turns true; a simulation that fails numerically gives status "failed".

    progress(fraction) is called at most every ~0.2 s of wall time with simulated/end time.
    store_solution: keep the solution (multibody.solution) as if the document set solution.file.write.
    """
    if store_solution and isinstance(doc, dict):
        doc = merge_settings(doc, {"solution": {"file": {"write": True}}})
    loaded = load_model(doc, limits)
    return run(loaded, progress=progress, cancel=cancel)


def run_document(doc: Any, **kwargs) -> dict:
    """simulate(...).to_document()."""
    return simulate(doc, **kwargs).to_document()
