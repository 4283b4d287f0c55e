"""Every model in examples/ runs with `mbserve run` and gives the figure that examples/README.md states."""
import json

import pytest
from typer.testing import CliRunner

from mbserve.cli import app
from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"
FIGURES = json.loads((EXAMPLES / "figures.json").read_text())


def test_every_example_has_a_figure_and_a_readme_row():
    models = {p.stem for p in EXAMPLES.glob("*.json")} - {"figures"}
    assert models == set(FIGURES)
    readme = (EXAMPLES / "README.md").read_text()
    for name, figure in FIGURES.items():
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}.json`"))
        assert f"`mbserve run examples/{name}.json -o results.json`" in row
        assert f"`{figure['sensor']}` `{figure['column']}`" in row
        shown = float(row.split("**")[1].replace("−", "-"))  # the README rounds: to its own digits
        assert shown == pytest.approx(figure["value"], abs=0.6 * 10 ** -len(row.split("**")[1].split(".")[1]))


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_example_gives_its_figure(name, tmp_path):
    figure = FIGURES[name]
    out = tmp_path / "results.json"
    result = CliRunner().invoke(app, ["run", str(EXAMPLES / f"{name}.json"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    sensor = json.loads(out.read_text())["sensors"][figure["sensor"]]
    row = min(sensor["data"], key=lambda r: abs(r[0] - figure["time"]))
    assert row[0] == pytest.approx(figure["time"], abs=1e-9)
    # tolerance per example (figures.json): the closed form against the time integration's error
    assert row[sensor["columns"].index(figure["column"])] == pytest.approx(figure["value"], abs=figure["tolerance"])
