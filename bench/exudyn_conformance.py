"""Exudyn's own test models, run in mbserve: how many of them mbserve accepts, and whether they
give Exudyn's testResult (issue 13).

    python bench/exudyn_conformance.py EXUDYN_CHECKOUT [--timeout S] [--jobs N] [FILE ...]

Each script of EXUDYN_CHECKOUT/main/pythonDev/TestModels runs twice, in a subprocess of its own
(at most --jobs at once, each stopped after --timeout seconds), as Exudyn's test suite runs it
(modelUnitTests.exudynTestGlobals.useGraphics = False, renderer calls harmless):
- Exudyn: as written; its testResult and the last row of each stored sensor are kept.
- mbserve: every SolveDynamic/SolveStatic exports the system (mbserve.exudyn.export, with
  user_functions="translate": an item's Python user function becomes the expression it computes
  where it has one that agrees with it at sample arguments, else the solve is refused with the
  reason) and runs the document in mbserve instead; mbserve's final state (q, q_t, q_tt, λ) is
  written back into the Exudyn system and GetSensorStoredData returns mbserve's series, so the
  script's own code after the solve computes testResult from mbserve's solution.
The table gives per script its item types, whether mbserve ran it (or the first problem that
refused it), the relative testResult difference |ours - Exudyn| / max(|ours|, |Exudyn|) and the
largest relative last-row sensor difference max|Δ| / max|Exudyn|. A script with several solves
runs each from the document's initial state (Exudyn may continue from the previous solve).
The scripts are read from the checkout, never copied; they may be older than the installed Exudyn
(names it dropped from exudyn.utilities come from the checkout's main/pythonDev/exudyn).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
TEST_MODELS = Path("main/pythonDev/TestModels")
NOT_MODELS = {"modelUnitTests.py"}  # the test suite's own module; run*.py run the whole suite
MATCH = 1e-8


class Refused(BaseException):
    """mbserve did not run a solve of the script: the rest of it cannot be compared (a
    BaseException: scripts wrap solves in `except Exception`)."""


def _index(i) -> int:
    return int(i.GetIndex()) if hasattr(i, "GetIndex") else int(i)


def _item_types(mbs) -> list[str]:
    out = []
    for count, get, key in (("NumberOfNodes", "GetNode", "nodeType"), ("NumberOfObjects", "GetObject", "objectType"),
                            ("NumberOfMarkers", "GetMarker", "markerType"), ("NumberOfLoads", "GetLoad", "loadType"),
                            ("NumberOfSensors", "GetSensor", "sensorType")):
        for i in range(getattr(mbs.systemData, count)()):
            out.append(f"{get[3:]}{getattr(mbs, get)(i)[key]}")
    return out


def _last_rows(mbs, get_stored) -> dict[int, list[float]]:
    rows = {}
    for i in range(mbs.systemData.NumberOfSensors()):
        if mbs.GetSensor(i).get("storeInternal"):
            try:
                data = get_stored(mbs, i)
            except Exception:  # noqa: BLE001 - a sensor Exudyn kept nothing for
                continue
            if len(data):
                rows[i] = [float(x) for x in data[-1][1:]]
    return rows


def run_one(script: Path, engine: str) -> dict:
    """Run `script` with Exudyn's solvers (engine "exudyn") or mbserve's; what the bench keeps."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import exudyn as exu
    import exudyn.solver
    sys.path.insert(0, str(script.parent))
    import modelUnitTests
    modelUnitTests.exudynTestGlobals.useGraphics = False
    modelUnitTests.exudynTestGlobals.testResult = None
    for name in ("StartRenderer", "StopRenderer", "DoRendering"):
        setattr(exu, name, lambda *a, **k: True)
    exu.SystemContainer.WaitForRenderEngineStopFlag = lambda *a, **k: True
    exu.MainSystem.PlotSensor = exu.MainSystem.SolutionViewer = lambda *a, **k: None  # matplotlib, graphics
    try:
        import matplotlib.pyplot as plt
        plt.show = lambda *a, **k: None
    except ImportError:
        pass

    out: dict = {"solves": [], "types": [], "sensors": {}}
    real = {"Dynamic": exudyn.solver.SolveDynamic, "Static": exudyn.solver.SolveStatic}
    real_stored = exu.MainSystem.GetSensorStoredData
    if engine == "mbserve":
        from mbserve.exudyn import keep_symbolic_sources
        keep_symbolic_sources()  # before the script makes any: export translates their Python functions
    ours: dict = {}  # (id(mbs), sensor) -> mbserve's series
    system_functions: dict = {}  # id(mbs) -> the MainSystem-level user functions set (export cannot see them)
    for setter in ("SetPreStepUserFunction", "SetPostStepUserFunction", "SetPostNewtonUserFunction"):
        def recorded(mbs, *a, _setter=setter, _real=getattr(exu.MainSystem, setter), **k):
            system_functions.setdefault(id(mbs), set()).add(_setter)
            return _real(mbs, *a, **k)
        setattr(exu.MainSystem, setter, recorded)

    def solve(kind: str, mbs, simulationSettings=None, solverType=None, updateInitialValues=False, **kwargs):
        settings = simulationSettings if simulationSettings is not None else exu.SimulationSettings()
        settings.timeIntegration.verboseMode = settings.staticSolver.verboseMode = 0
        settings.solution.file.write = False
        solver = getattr(solverType, "name", "GeneralizedAlpha") if kind == "Dynamic" else None
        out["solves"].append({"kind": kind, "solverType": solver, "updateInitialValues": bool(updateInitialValues)})
        out["types"] = sorted(set(out["types"]) | set(_item_types(mbs)))
        if engine == "exudyn":
            args = {"solverType": solverType} if kind == "Dynamic" and solverType is not None else {}
            ok = real[kind](mbs, settings, updateInitialValues=updateInitialValues, **args, **kwargs)
            out["sensors"] = _last_rows(mbs, real_stored)
            return ok
        try:
            mbserve_solve(mbs, settings, {"type": kind, **({"solverType": solver} if solver else {})})
        except Refused as exc:  # kept here too: a bare `except:` in the script would lose it
            out.setdefault("refused", str(exc))
            raise
        out["sensors"] = _last_rows(mbs, exu.MainSystem.GetSensorStoredData)
        return True

    def mbserve_solve(mbs, settings, solve_entry: dict) -> None:
        import multibody
        from mbserve.exudyn import ExportError, export
        from multibody.values import ModelInvalid
        if system_functions.get(id(mbs)):
            raise Refused(f"export: mbs.{sorted(system_functions[id(mbs)])[0]} is set: a Python function, "
                          "which export does not see")
        if mbs.NumberOfGeneralContacts():
            raise Refused("export: a GeneralContact (mbs.AddGeneralContact), which export does not see")
        try:
            doc = export(mbs, settings, solve=solve_entry, user_functions="translate")
        except ExportError as exc:
            raise Refused("export: " + _problem(*exc.problems[0])) from None
        except Exception as exc:  # noqa: BLE001 - the exporter's own defect, reported as such
            raise Refused(f"export crashed: {type(exc).__name__}: {exc}") from None
        out["translated"] = out.get("translated", 0) + sum(
            isinstance(v, (str, list)) for kind in ("loads", "objects") for item in doc[kind]
            for k, v in item.items() if "UserFunction" in k and not k.endswith("Parameters"))
        file = doc["simulationSettings"].setdefault("solution", {}).setdefault("file", {})
        file.setdefault("export", {}).update(velocities=True, accelerations=True, algebraicCoordinates=True)
        try:
            res = multibody.simulate(doc, store_solution=True)
        except ModelInvalid as exc:
            p = exc.problems[0]
            raise Refused("invalid: " + _problem(p.path, p.message)) from None
        if res.status != "succeeded":
            raise Refused(f"failed: {res.error['code']}: {res.error['message']}")
        write_back(mbs, res)

    def write_back(mbs, res) -> None:
        """mbserve's last row as the system's current state; its sensor series as stored data."""
        n2, nv, na, _, _, nae, _ = res.solution.columnsExported
        row = res.solution.data[-1]
        if not mbs.systemIsConsistent:
            mbs.Assemble()
        cur = exu.ConfigurationType.Current
        sd = mbs.systemData
        k = 1
        for setter, n in ((sd.SetODE2Coordinates, n2), (sd.SetODE2Coordinates_t, nv),
                          (sd.SetODE2Coordinates_tt, na), (sd.SetAECoordinates, nae)):
            if n:
                setter(row[k:k + n].tolist(), configuration=cur)
            k += n
        sd.SetTime(float(row[0]), cur)
        # what scripts read of Exudyn's solver object (SolveDynamic(storeSolver=True), the default): its counters
        # (currentStepIndex is one past the last step)
        it = SimpleNamespace(currentStepIndex=res.solver["steps"] + 1,
                             newtonStepsCount=res.solver["newtonIterations"], newtonJacobiCount=res.solver["jacobians"])
        mbs.sys["dynamicSolver" if res.solver["type"] == "Dynamic" else "staticSolver"] = SimpleNamespace(it=it)
        for i, series in enumerate(res.sensors.values()):
            ours[(id(mbs), i)] = series.data

    exudyn.solver.SolveDynamic = exu.SolveDynamic = lambda mbs, *a, **k: solve("Dynamic", mbs, *a, **k)
    exudyn.solver.SolveStatic = exu.SolveStatic = lambda mbs, *a, **k: solve("Static", mbs, *a, **k)
    exu.MainSystem.SolveDynamic = lambda mbs, *a, **k: solve("Dynamic", mbs, *a, **k)
    exu.MainSystem.SolveStatic = lambda mbs, *a, **k: solve("Static", mbs, *a, **k)
    if engine == "mbserve":
        exu.MainSystem.GetSensorStoredData = lambda mbs, i, *a: ours.get((id(mbs), _index(i)), None) \
            if (id(mbs), _index(i)) in ours else real_stored(mbs, i, *a)

    import runpy
    cwd = os.getcwd()
    os.chdir(script.parent)
    try:
        runpy.run_path(str(script), init_globals=_older_utilities(script), run_name="__main__")
    except Refused:
        pass
    except BaseException as exc:  # noqa: BLE001 - the script's own failure (SystemExit included)
        out["error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
    finally:
        os.chdir(cwd)
    result = modelUnitTests.exudynTestGlobals.testResult
    try:
        out["testResult"] = None if result is None else float(result)
    except (TypeError, ValueError):
        out["testResult"] = None
    return out


def _older_utilities(script: Path) -> dict:
    """The names `from exudyn.utilities import *` gave the checkout's scripts (it had no __all__)
    and the installed Exudyn no longer does (VAdd, sqrt, GraphicsDataRectangle, ...): the installed
    modules' names and the checkout's own basicUtilities, as globals the script's imports keep;
    the checkout's basicUtilities names are also put back into exudyn.basicUtilities."""
    import importlib
    import importlib.util
    import exudyn.basicUtilities
    import exudyn.utilities
    import math
    import numpy
    names: dict = {"sqrt": math.sqrt, "exudyn": exudyn, "np": numpy}  # the 1.11 utilities' own imports
    for module in ("beams", "graphicsDataUtilities", "itemInterface", "rigidBodyUtilities", "advancedUtilities",
                   "basicUtilities"):
        names.update({k: v for k, v in vars(importlib.import_module("exudyn." + module)).items()
                      if not k.startswith("_")})
    path = script.parents[1] / "exudyn" / "basicUtilities.py"
    if path.exists():
        spec = importlib.util.spec_from_file_location("checkout_basicUtilities", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for k, v in vars(module).items():
            if not k.startswith("_") and not hasattr(exudyn.basicUtilities, k):
                setattr(exudyn.basicUtilities, k, v)
                names[k] = v
    return {k: v for k, v in names.items() if not hasattr(exudyn.utilities, k)}


def _problem(path: str, message: str) -> str:
    return f"{path}: {message}"


def reason(refusal: str) -> str:
    """A refusal without its item indices and names, to count alike ones together."""
    text = re.sub(r"\[\d+\]", "[]", refusal)
    text = re.sub(r" \([^)]*\)", "", text, count=1)
    text = re.sub(r"t = [0-9.e+-]+", "t = …", text)
    untranslated = re.search(r"\(it could not be translated: (.*)\)$", text)
    text = re.sub(r" is the Python function .*", " is a Python function", text)
    if untranslated:  # why, without line numbers and the function's own details
        why = re.sub(r"line \d+: |\(.*| [a-z_A-Z0-9.]+\)", "", untranslated.group(1))
        text += " not translated: " + why[:60].strip()
    text = re.sub(r"; did you mean .*", "", text)
    return text[:150]


def unsupported_types(types: list[str]) -> list[str]:
    """The script's item types (Exudyn's names, NodeRigidBodyEP, ...) that mbserve has no type for."""
    from multibody.schema import ITEM_TYPES
    known = {prefix + t for prefix, kind in (("Node", "nodes"), ("Object", "objects"), ("Marker", "markers"),
                                             ("Load", "loads"), ("Sensor", "sensors"))
             for t in ITEM_TYPES[kind]}
    return [t for t in types if t not in known]


def relative(a: float, b: float) -> float:
    scale = max(abs(a), abs(b))
    return 0.0 if scale == 0 else abs(a - b) / scale


def compare(exudyn: dict, ours: dict) -> tuple[float | None, float | None]:
    tr = None
    if exudyn.get("testResult") is not None and ours.get("testResult") is not None:
        tr = relative(ours["testResult"], exudyn["testResult"])
    diffs = []
    for i, theirs in exudyn["sensors"].items():
        mine = ours["sensors"].get(i)
        if mine is None or len(mine) != len(theirs):
            diffs.append(float("inf"))
            continue
        scale = max(abs(x) for x in theirs) or 1.0
        diffs.append(max(abs(x - y) for x, y in zip(mine, theirs)) / scale)
    return tr, (max(diffs) if diffs else None)


def child(script: Path, result_file: Path, engine: str) -> None:
    sys.path.insert(0, str(ROOT))
    t0 = time.perf_counter()
    out = run_one(script, engine)
    out["seconds"] = time.perf_counter() - t0
    result_file.write_text(json.dumps(out, default=str))


def run_script(script: Path, timeout: float) -> dict:
    row = {"file": script.name}
    for engine in ("exudyn", "mbserve"):
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            result_file = Path(f.name)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
        proc = subprocess.Popen([sys.executable, __file__, "--child", engine, str(script), str(result_file)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the script's own subprocesses too
            proc.communicate()
            row[engine] = {"error": f"timeout after {timeout:.0f} s"}
        else:
            text = result_file.read_text() if result_file.stat().st_size else ""
            row[engine] = json.loads(text) if text else \
                {"error": f"crashed (exit {proc.returncode}): {(err.strip().splitlines() or [''])[-1][:120]}"}
        result_file.unlink(missing_ok=True)
        if engine == "exudyn" and not row[engine].get("solves"):
            break  # no model solved: nothing to compare
    return row


def status(row: dict) -> tuple[str, str]:
    """(column text, kind): kind is 'no model', 'exudyn error', 'refused', 'ran'."""
    ex, ours = row["exudyn"], row.get("mbserve", {})
    if not ex.get("solves"):
        return ("no SolveDynamic/SolveStatic" + (f" ({ex['error']})" if ex.get("error") else ""), "no model")
    if ex.get("error"):
        return (f"Exudyn: {ex['error']}", "exudyn error")
    if ours.get("refused"):
        return (ours["refused"], "refused")
    if ours.get("error"):
        return (f"script after mbserve: {ours['error']}", "refused")
    return ("ran", "ran")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("files", nargs="*")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per script and engine")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    folder = args.checkout / TEST_MODELS
    scripts = [folder / f for f in args.files] if args.files else \
        [p for p in sorted(folder.glob("*.py")) if p.name not in NOT_MODELS and not p.name.startswith("run")]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda s: run_script(s, args.timeout), scripts))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))

    kinds: Counter = Counter()
    reasons: Counter = Counter()
    matched = 0
    print(f"{'file':40} {'solves':>6} {'testResult Δ':>12} {'sensor Δ':>9}  status | item types")
    for row in rows:
        text, kind = status(row)
        kinds[kind] += 1
        tr = sd = None
        if kind == "ran":
            tr, sd = compare(row["exudyn"], row["mbserve"])
            compared = tr is not None or sd is not None
            ok = compared and (tr is None or tr <= MATCH) and (sd is None or sd <= MATCH)
            matched += ok
            text = "ran, matches" if ok else "ran, differs" if compared else "ran, nothing to compare"
        elif kind == "refused":
            reasons[reason(text)] += 1
        types = ", ".join(t for t in row["exudyn"].get("types", []))
        solves = len(row["exudyn"].get("solves", []))
        print(f"{row['file']:40} {solves:6d} {'-' if tr is None else f'{tr:.1e}':>12} "
              f"{'-' if sd is None else f'{sd:.1e}':>9}  {text} | {types}")
    models = kinds["ran"] + kinds["refused"]
    print(f"\n{len(rows)} scripts: {models} build and solve a model in Exudyn ({kinds['no model']} solve nothing, "
          f"{kinds['exudyn error']} fail in Exudyn here); mbserve runs {kinds['ran']} of the {models}, "
          f"{matched} of them match Exudyn to {MATCH:g} (testResult and sensors' last rows)")
    translated = [row for row in rows if row.get("mbserve", {}).get("translated")]
    print(f"Python user functions written as expressions (export(..., user_functions=\"translate\")): "
          f"{sum(r['mbserve']['translated'] for r in translated)} in {len(translated)} scripts, "
          f"{sum(status(r)[1] == 'ran' for r in translated)} of which ran")
    print("\nrefusals (the first problem), most frequent first:")
    for text, n in reasons.most_common():
        print(f"{n:4d}  {text}")
    missing = Counter(t for row in rows if status(row)[1] == "refused"
                      for t in unsupported_types(row["exudyn"].get("types", [])))
    print("\nitem types mbserve lacks, by the number of refused scripts that use them:")
    print(", ".join(f"{t} {n}" for t, n in missing.most_common()))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(Path(sys.argv[3]), Path(sys.argv[4]), sys.argv[2])
    else:
        sys.exit(main(sys.argv[1:]))
