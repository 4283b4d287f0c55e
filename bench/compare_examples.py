"""Run every case of ../shared/examples in mbserve and check it with the shared
compare_results.py (error vs Exudyn's 20x-finer reference <= 2x Exudyn's own error).

    python bench/compare_examples.py [CASE ...]

Prints each case's summary line (worst ratio = our error / Exudyn's; pass when <= 2).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EXAMPLES = ROOT.parent / "shared" / "examples"

import multibody  # noqa: E402


def main(cases: list[str]) -> int:
    cases = cases or sorted(p.name for p in EXAMPLES.iterdir() if (p / "model.json").exists())
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            out = Path(tmp) / f"{case}.json"
            res = multibody.run_document(json.loads((EXAMPLES / case / "model.json").read_text()))
            out.write_text(json.dumps(res))
            proc = subprocess.run([sys.executable, str(EXAMPLES / "compare_results.py"), str(EXAMPLES / case),
                                   str(out)], capture_output=True, text=True)
            failed += proc.returncode != 0
            print(f"{proc.stdout.strip().splitlines()[-1]}  (solveSeconds {res['solver']['solveSeconds']:.3f})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
