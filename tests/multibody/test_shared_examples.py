"""The shared examples pass ../shared/examples/compare_results.py: per sensor, the error against
Exudyn's 20x-finer reference is at most twice Exudyn's own error at the same step count."""
import json
import subprocess
import sys

import pytest

import multibody

from .conftest import EXAMPLES, load_json

CASES = ["mini", "spring_slider", "motion_sine", "chain_1", "chain_10", "chain_50"]


@pytest.mark.parametrize("case", CASES)
def test_example_passes_compare_results(case, tmp_path):
    results = multibody.run_document(load_json(EXAMPLES / case / "model.json"))
    out = tmp_path / "results.json"
    out.write_text(json.dumps(results))
    proc = subprocess.run([sys.executable, str(EXAMPLES / "compare_results.py"), str(EXAMPLES / case), str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith(f"{case}: PASS")
