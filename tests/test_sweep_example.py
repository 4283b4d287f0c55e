"""examples/README.md's sweep runs as written against a live `mbserve serve`, through `mbserve sweep`
and through the client, and every row gives its closed form and the README's table."""
import csv
import itertools
import json
import math
import re
import shlex

import pytest
from typer.testing import CliRunner

from mbserve.cli import app
from tests.conftest import ROOT

SWEEPS = ROOT / "examples" / "sweeps"
SWEEP = json.loads((SWEEPS / "oscillator_sweep.json").read_text())
MODEL = json.loads((SWEEPS / SWEEP["model"]).read_text())
SECTION = (ROOT / "examples" / "README.md").read_text().split("## A parameter sweep")[1]
HEADER = ["index", "objects[spring].stiffness", "objects[mass].mass", "xAt1", "xMax", "jobId", "status"]


def on_this_service(text: str, url: str) -> str:
    return text.replace("http://127.0.0.1:8000", url).replace("examples/", f"{ROOT}/examples/")


def readme_rows() -> list[list[str]]:
    """The README's figures: index, k, m, ω, xAt1, xMax (the outputs in bold)."""
    return [[cell.strip().strip("*") for cell in line.strip("|").split("|")]
            for line in SECTION.splitlines() if re.match(r"\| \d", line)]


def decimals(shown: str) -> float:
    """Half a unit of the last digit shown, with a margin: what rounding to it may change."""
    return 0.6 * 10 ** -len(shown.split(".")[1])


def check_against_closed_form(k: float, m: float, x_at_1: float, x_max: float) -> None:
    force = MODEL["loads"][0]["loadVector"][0]
    ti = MODEL["simulationSettings"]["timeIntegration"]
    h = ti["endTime"] / ti["numberOfSteps"]
    period = MODEL["simulationSettings"]["solution"]["sensors"]["writePeriod"]
    omega = math.sqrt(k / m)
    assert math.pi / omega <= ti["endTime"]  # the peak is within the run, so xMax has its closed form
    # the trapezoidal rule's own closed form: the amplitude kept, the frequency ω̃, tan(ω̃h/2) = ωh/2
    discrete = 2 / h * math.atan(omega * h / 2)
    assert x_at_1 == pytest.approx(force / k * (1 - math.cos(discrete)), abs=1e-12)
    # hence the exact one to within its phase lag: ω − ω̃ ≤ ω(ωh)²/12, at t = 1
    assert x_at_1 == pytest.approx(force / k * (1 - math.cos(omega)), abs=force / k * omega * (omega * h) ** 2 / 12)
    # the largest stored row is at most half a write period from the peak, and never above it
    assert 0 <= 2 * force / k - x_max <= force / k * (omega * period) ** 2 / 8 + 1e-12


def test_the_readme_sweep_command_gives_the_closed_forms_and_the_readme_table(embedded, tmp_path):
    command = next(line.strip() for line in SECTION.splitlines() if line.strip().startswith("mbserve sweep "))
    args = shlex.split(on_this_service(command, embedded))[1:]
    assert args[-2:] == ["-o", "table.csv"]
    out = tmp_path / "table.csv"
    result = CliRunner().invoke(app, args[:-1] + [str(out)])
    assert result.exit_code == 0, result.output

    rows = list(csv.reader(out.open()))
    assert rows[0] == HEADER
    table = [dict(zip(HEADER, row)) for row in rows[1:]]
    grid = list(itertools.product(*(p["values"] for p in SWEEP["parameters"])))  # the first parameter slowest
    assert [(float(r[HEADER[1]]), float(r[HEADER[2]])) for r in table] == grid
    assert [r["index"] for r in table] == [str(i) for i in range(len(grid))]
    assert all(r["status"] == "succeeded" and r["jobId"] for r in table)
    for r in table:
        check_against_closed_form(float(r[HEADER[1]]), float(r[HEADER[2]]), float(r["xAt1"]), float(r["xMax"]))

    stated = readme_rows()
    assert len(stated) == len(table)
    force = MODEL["loads"][0]["loadVector"][0]
    for (index, k, m, omega, x_at_1, x_max), r in zip(stated, table):
        k_, m_ = float(r[HEADER[1]]), float(r[HEADER[2]])
        assert (int(index), float(k), float(m)) == (int(r["index"]), k_, m_)
        assert float(omega) == pytest.approx(math.sqrt(k_ / m_), abs=decimals(omega))
        # the README shows the closed form, rounded; the table is within the integration's error of it
        assert float(x_at_1) == pytest.approx(force / k_ * (1 - math.cos(math.sqrt(k_ / m_))), abs=decimals(x_at_1))
        assert float(x_max) == pytest.approx(2 * force / k_, abs=decimals(x_max))
        assert float(r["xAt1"]) == pytest.approx(float(x_at_1), abs=decimals(x_at_1) + 3e-5)
        assert float(r["xMax"]) == pytest.approx(float(x_max), abs=decimals(x_max) + 5e-5)


def test_the_readme_client_code_gives_the_same_table(embedded):
    code = re.search(r"```python\n(.*?)```", SECTION, re.S).group(1)
    scope: dict = {}
    exec(on_this_service(code, embedded), scope)
    table = scope["table"]
    assert list(table.columns) == HEADER[1:] and list(table.index) == list(range(len(readme_rows())))
    assert list(table["status"]) == ["succeeded"] * len(table)
    for _, row in table.iterrows():
        check_against_closed_form(*row[HEADER[1:5]])
