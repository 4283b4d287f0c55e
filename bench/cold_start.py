"""Cold start: `mbserve run MODEL` in a fresh process (after the one-time compile) against a fresh
Python process that imports Exudyn and solves the same model (the floor a user compares with).

    python bench/cold_start.py [--model ../shared/examples/mini/model.json] [--runs 7]

Runs the two commands in turn (A B A B ..., after one warm-up run each) and prints the median wall
and CPU seconds of each and the median of the pairwise wall ratios. `--exudyn-only` is the other
command alone: `python bench/cold_start.py --exudyn-only MODEL` solves MODEL once in Exudyn.

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


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, user + sys CPU seconds) of one run of cmd, output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env={**env, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(MINI))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--exudyn-only", metavar="MODEL")
    args = ap.parse_args()
    if args.exudyn_only:
        exudyn_solve(args.exudyn_only)
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
