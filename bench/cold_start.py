"""Cold start: `mbserve run MODEL` in a fresh process (after the one-time compile) against a fresh
Python process that imports Exudyn and solves the same model (the floor a user compares with).

    python bench/cold_start.py [--model ../shared/examples/mini/model.json] [--runs 7]

Runs the two commands in turn (A B A B ..., after one warm-up run each) and prints the median wall
and CPU seconds of each and the median of the pairwise wall ratios. `--exudyn-only` is the other
command alone: `python bench/cold_start.py --exudyn-only MODEL` solves MODEL once in Exudyn.

`--phases` prints where a cold run's CPU time goes instead (medians of --runs fresh processes, each
doing what `mbserve run` does, in steps: the libraries, our import, loading the kernels, the solve).

Both commands may write Python's bytecode caches (PYTHONDONTWRITEBYTECODE is dropped for them): an
installed package has them, as Exudyn's has; without them each run compiled mbserve's ~60 modules
from source again (~0.1 s CPU).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
MINI = ROOT.parent / "shared" / "examples" / "mini" / "model.json"


def exudyn_solve(path: str) -> None:
    sys.path.insert(0, str(BENCH))
    from exudyn_runner import sensor_data, solve
    doc = json.loads(Path(path).read_text())
    _, mbs = solve(doc)
    json.dump({str(i): sensor_data(mbs, i).tolist() for i in range(len(doc.get("sensors", [])))}, sys.stdout)


def child_env() -> dict[str, str]:
    """The measured processes' environment: ours, this checkout on PYTHONPATH, bytecode caches allowed."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(ROOT)}


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, user + sys CPU seconds) of one run of cmd, output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=child_env())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def phases(path: str) -> None:
    """One cold run's steps in this (fresh) process; prints {step: CPU seconds} as JSON."""
    out, last = {}, time.process_time()

    def step(name: str) -> None:
        nonlocal last
        now = time.process_time()
        out[name] = now - last
        last = now
    import typer  # noqa: F401
    step("typer")
    import numpy  # noqa: F401
    step("numpy")
    import numba.extending  # noqa: F401
    step("numba")
    import pydantic  # noqa: F401
    step("pydantic")
    import mbserve.cli  # noqa: F401
    import multibody
    from multibody.model import load_model
    from multibody.solvers import run
    from store.formats import document_bytes
    step("import multibody (schema, kernel definitions)")
    multibody.ensure_compiled()
    step("kernel cache check")
    loaded = load_model(json.loads(Path(path).read_text()))
    step("load_model")
    from numba.core import caching
    load, loads = caching.Cache.load_overload, []

    def timed_load(cache, sig, target_context):
        started = time.process_time()
        try:
            return load(cache, sig, target_context)
        finally:
            loads.append(time.process_time() - started)
    caching.Cache.load_overload = timed_load
    document_bytes(run(loaded))
    step("solve")
    out["solve"] -= sum(loads)
    out["loading the kernels (numba's runtime, then each)"] = sum(loads)
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(MINI))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--exudyn-only", metavar="MODEL")
    ap.add_argument("--phases", action="store_true")
    ap.add_argument("--phases-only", metavar="MODEL", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.exudyn_only:
        exudyn_solve(args.exudyn_only)
        return
    if args.phases_only:
        phases(args.phases_only)
        return
    if args.phases:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--phases-only", args.model]
        runs = [json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, env=child_env()).stdout)
                for _ in range(args.runs + 1)][1:]  # the first writes the bytecode caches
        for name in runs[0]:
            print(f"{name:50s} {statistics.median(r[name] for r in runs):.3f} s CPU")
        print(f"{'total':50s} {statistics.median(sum(r.values()) for r in runs):.3f} s CPU")
        return
    mbserve = [sys.executable, "-m", "mbserve.cli", "run", args.model, "-o", os.devnull]
    exudyn = [sys.executable, str(Path(__file__).resolve()), "--exudyn-only", args.model]
    timed(mbserve), timed(exudyn)  # warm-up: the one-time compile, the file cache
    a, b = [], []
    for _ in range(args.runs):
        a.append(timed(mbserve))
        b.append(timed(exudyn))
    med = lambda rows, i: statistics.median(r[i] for r in rows)  # noqa: E731
    ratio = statistics.median(x[0] / y[0] for x, y in zip(a, b))
    print(f"cold run of {Path(args.model).parent.name}, median of {args.runs}: mbserve run {med(a, 0):.2f} s wall "
          f"({med(a, 1):.2f} s CPU), Exudyn script {med(b, 0):.2f} s wall ({med(b, 1):.2f} s CPU); "
          f"wall ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
