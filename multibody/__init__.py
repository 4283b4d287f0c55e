"""mbserve's numeric core: an Exudyn-compatible rigid multibody solver.

A model document (SPEC section 1) goes in, a results document (SPEC section 4) comes out.
Pure numpy/scipy/numba/pydantic (sympy for expressions): no web, queue or database imports.
Importing it makes numba load cached kernels without its compiler's set-up (kernel_loading).
"""
from . import kernel_loading
from .api import (
    ExpressionLimits,
    ModelInvalid,
    Problem,
    Results,
    SensorSeries,
    SimulationCanceled,
    Validation,
    merge_settings,
    run_document,
    simulate,
    validate_document,
)
from .kernel_cache import ensure_compiled, warm_up

kernel_loading.install()

__all__ = [
    "ExpressionLimits", "ModelInvalid", "Problem", "Results", "SensorSeries", "SimulationCanceled", "Validation",
    "merge_settings", "run_document", "simulate", "validate_document", "warm_up", "ensure_compiled",
]
