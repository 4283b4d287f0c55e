"""Time of loading a large model: load_model (validation, references, motions) and the compiled
System, and the redundant-constraint pre-check, on chains of N blocks made from chain_10's pattern.

    python bench/bench_load.py [--n 1000] [--repeat 5]

Prints the median CPU time of each over the runs (after one warm-up run that loads the compiled
kernels) and the peak of what the pre-check allocates.
"""
from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from multibody.model import load_model  # noqa: E402
from multibody.solvers.redundancy import find_redundant  # noqa: E402

CHAIN_10 = Path(__file__).resolve().parents[2] / "shared" / "examples" / "chain_10" / "model.json"


def chain(n: int) -> dict:
    """chain_10's blocks repeated: block b is a copy of block 2 (b even) or 3 (b odd), moved by
    (0.5, -0.5) per block, its references shifted by the items per block (1 node, 3 objects,
    5 markers, 1 load)."""
    base = json.loads(CHAIN_10.read_text())
    doc = {k: v for k, v in base.items() if k not in ("nodes", "objects", "markers", "loads", "sensors")}
    doc.update(nodes=[], objects=[base["objects"][0]], markers=[], loads=[])
    for b in range(1, n + 1):
        t = b if b <= 2 else (2 if b % 2 == 0 else 3)
        d = b - t
        node = copy.deepcopy(base["nodes"][t - 1])
        node["referenceCoordinates"][0] += 0.5 * d
        node["referenceCoordinates"][1] -= 0.5 * d
        node["name"] = f"block{b}_node"
        doc["nodes"].append(node)
        for obj in base["objects"][3 * t - 2:3 * t + 1]:
            obj = copy.deepcopy(obj)
            if "nodeNumber" in obj:
                obj["nodeNumber"] += d
            if "markerNumbers" in obj:
                obj["markerNumbers"] = [m + 5 * d for m in obj["markerNumbers"]]
            obj["name"] = obj["name"].rstrip("0123456789") + str(b)
            doc["objects"].append(obj)
        for i, mk in enumerate(base["markers"][5 * t - 5:5 * t]):
            mk = copy.deepcopy(mk)
            if mk["bodyNumber"]:
                mk["bodyNumber"] += 3 * d
            mk["name"] = f"marker{5 * (b - 1) + i}"
            doc["markers"].append(mk)
        load = copy.deepcopy(base["loads"][t - 1])
        load["markerNumber"] += 5 * d
        load["name"] = f"gravity{b}"
        doc["loads"].append(load)
    sensor = copy.deepcopy(base["sensors"][0])
    sensor["nodeNumber"] = n - 1
    doc["sensors"] = [sensor]
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    doc = chain(args.n)
    times = {"load_model": [], "System": [], "find_redundant": []}  # CPU seconds (the machine is shared)
    for run in range(args.repeat + 1):
        t0 = time.process_time()
        loaded = load_model(doc)
        t1 = time.process_time()
        system = loaded.system
        t2 = time.process_time()
        assert find_redundant(system, 0.0) is None
        t3 = time.process_time()
        if run:
            for key, dt in zip(times, (t1 - t0, t2 - t1, t3 - t2)):
                times[key].append(dt)
    tracemalloc.start()
    find_redundant(system, 0.0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"chain_{args.n} ({len(doc['objects'])} objects, {len(doc['markers'])} markers), CPU s, median of "
          f"{args.repeat}: " + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in times.items())
          + f"; find_redundant allocates {peak / 1e6:.0f} MB at its peak")

if __name__ == "__main__":
    main()
