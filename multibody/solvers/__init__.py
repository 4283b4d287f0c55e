"""Solvers: run a loaded model and produce Results."""
from __future__ import annotations

SUPPORTED_DYNAMIC = ("GeneralizedAlpha", "TrapezoidalIndex2")


def run(loaded, progress=None, cancel=None):
    from .generalized_alpha import solve_dynamic
    from .static import solve_static
    if loaded.document.solve.type == "Static":
        return solve_static(loaded, progress=progress, cancel=cancel)
    return solve_dynamic(loaded, progress=progress, cancel=cancel)
