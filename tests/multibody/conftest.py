import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
EXAMPLES = SHARED / "examples"
CASES = Path(__file__).resolve().parent / "cases"


def load_json(path: Path):
    return json.loads(Path(path).read_text())


@pytest.fixture
def mini_model():
    return load_json(EXAMPLES / "mini" / "model.json")
