"""Write an Exudyn `MainSystem` as an mbserve model document (SPEC section 6).

    import exudyn as exu
    from mbserve.exudyn import export
    doc = export(mbs, simulationSettings)          # then Client(url).submit(doc) or `mbserve run`

Items are Exudyn's own dictionaries (`mbs.GetNode(i)`, ...): arrays as lists, enums by name,
indices as numbers; `simulationSettings` contributes the entries that differ from Exudyn's
defaults. A Python user function cannot travel in a document: every one that is set is reported
(item, parameter, its arguments) with the expression form to write instead, in one ExportError,
as are MainSystem user functions and GeneralContacts, which no item holds.
`export(..., user_functions="translate")` instead writes each Python user function that has an
expression form as that expression (exudyn_translate.py: read from its source, then checked
against the function at sample arguments); the ones that do not stay errors, with the reason.
Nothing here imports Exudyn: `export` reads the system it is given. Exudyn's symbolic user functions
(`CreateSymbolicUserFunction`) keep no reference to the Python function they were made from, and print
their constants to 6 digits: `keep_symbolic_sources()`, called before they are made, lets export
translate that function instead.
"""
from __future__ import annotations

import importlib
import inspect
import math
import weakref
from typing import Any

import numpy as np

from multibody.settings import defaults as exudyn_default_settings
from multibody.user_functions import expression_form, signature

from .exudyn_translate import Untranslatable, translate

LISTS = (("nodes", "NumberOfNodes", "GetNode"), ("objects", "NumberOfObjects", "GetObject"),
         ("markers", "NumberOfMarkers", "GetMarker"), ("loads", "NumberOfLoads", "GetLoad"),
         ("sensors", "NumberOfSensors", "GetSensor"))
NOT_EXPORTED = {"VgraphicsData",  # drawing data: Exudyn returns a placeholder, not the data
                # ObjectGenericODE2's state Exudyn derives at Assemble (its nodes' coordinate offsets, scratch)
                "coordinateIndexPerNode", "tempCoordinates", "tempCoordinates_t", "tempCoordinates_tt"}
TYPE_KEYS = {"nodes": "nodeType", "objects": "objectType", "markers": "markerType", "loads": "loadType",
             "sensors": "sensorType"}
# MainSystem-level Python functions: the solver calls them, no item holds them
SYSTEM_FUNCTIONS = ("PreStepUserFunction", "PostStepUserFunction", "PostNewtonUserFunction",
                    "PreNewtonResidualUserFunction", "SystemJacobianUserFunction")


class ExportError(ValueError):
    """The system cannot be written as a document; `problems` lists (path, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{path}: {message}" for path, message in problems))


def _json(value: Any, enum_prefix: bool) -> Any:
    if hasattr(type(value), "__members__") and hasattr(value, "name"):  # a pybind11 enum
        return str(value) if enum_prefix else value.name
    if hasattr(value, "GetIndex"):  # NodeIndex, ObjectIndex, MarkerIndex, ...
        return int(value.GetIndex())
    if isinstance(value, np.ndarray):
        return _json(value.tolist(), enum_prefix)
    if hasattr(value, "GetPythonObject"):  # a MatrixContainer: a dense matrix, or its size and sparse triplets
        return _json(value.GetPythonObject(), enum_prefix)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number")
        return float(value)
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_json(v, enum_prefix) for v in value]
    if isinstance(value, dict):
        return {str(k): _json(v, enum_prefix) for k, v in value.items()}
    raise ValueError(f"a {type(value).__name__} has no JSON form")


# an Exudyn symbolic UserFunction -> the Python function it was made from (keep_symbolic_sources)
_SYMBOLIC_SOURCES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def keep_symbolic_sources() -> None:
    """From now on, remember the Python function of each symbolic user function that Exudyn's
    CreateSymbolicUserFunction makes, so that export(..., user_functions="translate") translates it
    (the symbolic object itself keeps only a 6-digit print of its expression). Imports Exudyn."""
    for name in ("exudyn.advancedUtilities", "exudyn.utilities"):
        module = importlib.import_module(name)
        create = getattr(module, "CreateSymbolicUserFunction", None)
        if create is None or getattr(create, "keeps_source", False):
            continue

        def remembering(mbs, function, *args, _create=create, **kwargs):
            symbolic = _create(mbs, function, *args, **kwargs)
            _SYMBOLIC_SOURCES[symbolic] = function
            return symbolic
        remembering.keeps_source = True
        setattr(module, "CreateSymbolicUserFunction", remembering)


def _function_of(value: Any):
    """The function an item's user-function entry holds (Exudyn 1.13 gives symbolic ones as a dict)."""
    return value.get("function") if isinstance(value, dict) else value


def _function(value: Any):
    """The Python function of a user-function entry: a symbolic one's source where kept (keep_symbolic_sources)."""
    function = _function_of(value)
    try:
        return _SYMBOLIC_SOURCES.get(function, function)
    except TypeError:  # not weakly referable: not one of Exudyn's symbolic functions
        return function


def _user_function_problem(kind: str, item: dict, key: str, value: Any, why: str = "") -> str:
    function = _function(value)
    try:
        own = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        own = ["mbs", "t", "..."]
    who = f"{getattr(function, '__name__', 'a function')}({', '.join(own)})"
    sig = signature(kind, item.get(TYPE_KEYS[kind], ""), key)
    if sig is None:
        return f"{key} is the Python function {who}: a document cannot carry Python code, and {key} takes no " \
               "expression in mbserve"
    return f"{key} is the Python function {who}: a document cannot carry Python code; write it as an " \
           f"expression: {expression_form(sig)}" + (f" (it could not be translated: {why})" if why else "")


def _system_problems(mbs) -> list[tuple[str, str]]:
    """What the MainSystem holds outside its item lists, which a document cannot carry."""
    problems = []
    for name in SYSTEM_FUNCTIONS:
        value = getattr(mbs, f"Get{name}", lambda: 0)()
        if not (isinstance(value, (int, float)) and value == 0):
            function = value.get("function") if isinstance(value, dict) else value
            problems.append((f"mbs.Set{name}", f"the Python function {getattr(function, '__name__', '?')} is set "
                             f"with mbs.Set{name}: a document cannot carry Python code, and mbserve has no "
                             "system-level user functions (item user functions take expressions)"))
    contacts = getattr(mbs, "NumberOfGeneralContacts", lambda: 0)()
    if contacts:
        problems.append(("mbs.AddGeneralContact", f"{contacts} GeneralContact(s) (mbs.AddGeneralContact): "
                         "mbserve has no general contact"))
    return problems


class _Translator:
    """export's user_functions="translate": the document's parameters so far and what the
    translations are checked over (the solve's time span, the system for their mbs argument)."""

    def __init__(self, mbs, span: tuple[float, float]):
        self.mbs, self.span, self.parameters = mbs, span, {}

    def __call__(self, kind: str, index: int, item: dict, key: str, value: Any) -> Any:
        """The expression, or Untranslatable."""
        sig = signature(kind, item.get(TYPE_KEYS[kind], ""), key)
        if sig is None:
            raise Untranslatable(f"{key} takes no expression in mbserve")
        exported = {k: _json(item[k], enum_prefix=False) for k in sig.from_item.values() if k != "itemNumber"}
        function = _function(value)
        symbolic = function is not _function_of(value)  # vector arguments are Exudyn symbolic vectors: arrays
        if type(function).__name__ == "UserFunction":
            raise Untranslatable("it is an Exudyn symbolic UserFunction made before "
                                 "mbserve.exudyn.keep_symbolic_sources() was called: the Python function it was "
                                 "made from is not known")
        done = translate(function, sig, exported, index, self.span, self.parameters, self.mbs, symbolic)
        self.parameters.update(done.parameters)
        return done.value


def _item(kind: str, index: int, item: dict, problems: list[tuple[str, str]],
          translator: _Translator | None = None) -> dict:
    name = item.get("name") or f"{kind[:-1]}{index}"
    out = {}
    for key, value in item.items():
        path = f"{kind}[{index}] ({name}).{key}"
        if key in NOT_EXPORTED or value is None:
            continue
        if "UserFunction" in key and not key.endswith("Parameters"):
            if isinstance(value, (int, float)) and value == 0:  # not set
                out[key] = 0
            elif translator is not None:
                try:
                    out[key] = translator(kind, index, item, key, value)
                except Untranslatable as exc:
                    problems.append((path, _user_function_problem(kind, item, key, value, str(exc))))
            else:
                problems.append((path, _user_function_problem(kind, item, key, value)))
            continue
        try:
            out[key] = _json(value, enum_prefix=False)
        except ValueError as exc:
            problems.append((path, str(exc)))
    if out.get("objectType") == "ContactSphereSphere" and "trianglePoints" in out:
        out["objectType"] = "ContactSphereTriangle"  # Exudyn 1.13.6's GetObject names a sphere-triangle contact so
    return out


def _differences(settings: dict, default: dict) -> dict:
    """The entries of Exudyn's settings dictionary that differ from its defaults, nested."""
    out = {}
    for key, value in settings.items():
        if key not in default:
            continue
        if isinstance(value, dict):
            sub = _differences(value, default[key])
            if sub:
                out[key] = sub
        elif _json(value, enum_prefix=True) != default[key]:
            out[key] = _json(value, enum_prefix=True)
    return out


def _time_span(settings: dict, solve: dict) -> tuple[float, float]:
    """The times a solve calls user functions at: the dynamic solver's [startTime, endTime], the
    static solver's load steps [0, loadStepDuration]."""
    if solve.get("type") == "Static":
        return 0.0, float(settings["staticSolver"]["loadStepDuration"])
    integration = settings["timeIntegration"]
    return float(integration["startTime"]), float(integration["endTime"])


def export(mbs, simulationSettings=None, solve: dict | None = None, name: str = "",
           user_functions: str = "error") -> dict:
    """`mbs` as a model document; `simulationSettings` (exu.SimulationSettings or its dictionary)
    gives the document's simulationSettings, `solve` its solve (default: Dynamic, GeneralizedAlpha).
    Raises ExportError naming every item that cannot be written (a Python user function, ...), and
    what lies outside the items: MainSystem user functions (mbs.SetPreStepUserFunction, ...) and
    GeneralContacts. `user_functions="translate"`: an item's Python user function is written as
    the expression it computes where it has one and agrees with the function at sample arguments
    (t over the solve's time span); its numeric globals go to the document's `parameters`."""
    if user_functions not in ("error", "translate"):
        raise ValueError(f"user_functions must be 'error' or 'translate', not {user_functions!r}")
    solve = dict(solve or {"type": "Dynamic", "solverType": "GeneralizedAlpha"})
    settings = exudyn_default_settings() if simulationSettings is None else \
        simulationSettings if isinstance(simulationSettings, dict) else simulationSettings.GetDictionary()
    translator = _Translator(mbs, _time_span(settings, solve)) if user_functions == "translate" else None
    problems = _system_problems(mbs)
    doc: dict[str, Any] = {"name": name}
    for kind, count, getter in LISTS:
        doc[kind] = [_item(kind, i, getattr(mbs, getter)(i), problems, translator)
                     for i in range(getattr(mbs.systemData, count)())]
    if problems:
        raise ExportError(problems)
    if translator is not None and translator.parameters:
        doc["parameters"] = translator.parameters
    if simulationSettings is not None:
        doc["simulationSettings"] = _differences(settings, exudyn_default_settings())
    doc["solve"] = solve
    return doc
