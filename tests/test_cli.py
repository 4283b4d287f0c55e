import copy
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from mbserve.cli import app
from tests.conftest import EXAMPLES, ROOT, example
from tests.support import same_document

runner = CliRunner()
MINI = EXAMPLES / "mini" / "model.json"


@pytest.fixture
def broken(tmp_path, mini):
    doc = copy.deepcopy(mini)
    del doc["objects"][1]["objectType"]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc))
    return path


def test_run_writes_the_results_document(tmp_path, mini):
    import multibody
    out = tmp_path / "results.json"
    result = runner.invoke(app, ["run", str(MINI), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert same_document(out.read_text(), multibody.simulate(mini).to_document())


def test_run_to_stdout(mini):
    result = runner.invoke(app, ["run", str(MINI)])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["status"] == "succeeded"


def test_run_invalid_model_exits_2_with_problems_on_stderr(broken):
    result = runner.invoke(app, ["run", str(broken)])
    assert result.exit_code == 2
    assert "objects[1]" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("position, at", [("t*1e100*1e100*1e100*1e100", "beyond the float range"),
                                           ("sqrt(t - 0.5)", "at t = 0 "), ("log(t)", "at t = 0 ")])
def test_run_of_a_law_that_cannot_be_evaluated_is_a_model_error_not_a_traceback(tmp_path, position, at):
    """Issue 18, finding 8: such laws passed validation, then ended as a traceback from `mbserve
    run` (a job: internal_error, 'SVD did not converge'). Now a problem naming the motion's path."""
    doc = example("motion_sine")
    doc["motions"][0]["position"] = position
    path = tmp_path / "model.json"
    path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["run", str(path)])
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert "motions[0].position (drive)" in result.stderr and at in result.stderr, result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_run_not_json_exits_2(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{nope")
    assert runner.invoke(app, ["run", str(path)]).exit_code == 2


def test_run_failed_simulation_exits_1(monkeypatch, tmp_path):
    """The core reports a failed solve as a results document with status 'failed' (stand-in here)."""
    import multibody
    failed = multibody.Results("failed", [], {"type": "Dynamic"}, {},
                               {"code": "newton", "message": "Newton not converged at t = 0.4132", "detail": []})
    monkeypatch.setattr(multibody, "simulate", lambda doc, **kw: failed)
    out = tmp_path / "r.json"
    result = runner.invoke(app, ["run", str(MINI), "-o", str(out)])
    assert result.exit_code == 1
    assert "t = 0.4132" in result.stderr
    assert json.loads(out.read_text())["error"]["code"] == "newton"


def test_validate(broken):
    ok = runner.invoke(app, ["validate", str(MINI)])
    assert ok.exit_code == 0 and ok.stdout.startswith("valid")
    expanded = runner.invoke(app, ["validate", str(MINI), "--expanded"])
    assert expanded.exit_code == 0 and json.loads(expanded.stdout)["objects"]
    bad = runner.invoke(app, ["validate", str(broken)])
    assert bad.exit_code == 2 and "objects[1]" in bad.stderr


def test_run_imports_neither_fastapi_nor_celery(tmp_path):
    code = ("import sys; from mbserve.cli import app; "
            f"app(['run', {str(MINI)!r}, '-o', {str(tmp_path / 'r.json')!r}], standalone_mode=False); "
            "print(sorted(m for m in ('fastapi', 'celery', 'sqlalchemy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_submit_wait_writes_the_job_results(embedded, tmp_path):
    import multibody
    out = tmp_path / "results.json"
    result = runner.invoke(app, ["submit", str(MINI), "--url", embedded, "--wait", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{embedded}/jobs/" in result.output  # the job's page in the web interface
    assert same_document(out.read_text(), multibody.simulate(example("mini")).to_document())


def test_submit_invalid_model_exits_2(embedded, broken):
    result = runner.invoke(app, ["submit", str(broken), "--url", embedded])
    assert result.exit_code == 2 and "objects[1]" in result.stderr


def test_submit_client_errors_are_one_line_and_an_exit_code(tmp_path):
    from tests.support import free_port
    cases = {"no service": ([f"http://127.0.0.1:{free_port()}"], 3, "no mbserve service answers"),
             "no scheme": (["127.0.0.1:8000"], 3, "must start with http://")}
    for args, code, text in cases.values():
        result = runner.invoke(app, ["submit", str(MINI), "--url", *args])
        assert result.exit_code == code and text in result.stderr, result.output
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_submit_with_a_wrong_api_key_exits_1(embedded):
    result = runner.invoke(app, ["submit", str(MINI), "--url", embedded, "--api-key", "mb_nope_nope"])
    assert result.exit_code == 1 and "unknown or revoked API key" in result.stderr, result.output


def test_a_missing_postgres_database_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("MBSERVE_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/mbserve_absent_db")
    result = runner.invoke(app, ["migrate", "--data-dir", str(tmp_path)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.startswith("error: the database") and len(result.stderr.strip().splitlines()) == 1


def test_keys_create_list_revoke(tmp_path):
    data = ["--data-dir", str(tmp_path / "d")]
    key = runner.invoke(app, ["keys", "create", "alice", *data]).stdout.strip()
    key_id = key.split("_")[1]
    assert key_id in runner.invoke(app, ["keys", "list", *data]).stdout
    assert runner.invoke(app, ["keys", "revoke", key_id, *data]).exit_code == 0
    assert "revoked" in runner.invoke(app, ["keys", "list", *data]).stdout
    assert runner.invoke(app, ["keys", "revoke", key_id, *data]).exit_code == 1


def test_sweep_waits_and_writes_the_table_as_csv(embedded, tmp_path):
    import csv
    from tests.test_client import small_sweep
    body = small_sweep()
    (tmp_path / "model.json").write_text(json.dumps(body.pop("model")))
    (tmp_path / "sweep.json").write_text(json.dumps({"model": "model.json", **body}))  # a path next to the sweep
    out = tmp_path / "table.csv"
    result = runner.invoke(app, ["sweep", str(tmp_path / "sweep.json"), "--url", embedded, "--wait", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["index", "objects[spring].stiffness", "objects[spring].damping", "xEnd", "fMax", "jobId",
                       "status"]
    assert [r[1:3] for r in rows[1:]] == [["50.0", "0.5"], ["100.0", "1.0"], ["200.0", "2.0"]]
    assert all(r[-1] == "succeeded" and float(r[3]) for r in rows[1:])
    body["parameters"][1]["values"] = [1.0, "soft", 2.0]
    (tmp_path / "sweep.json").write_text(json.dumps({"model": "model.json", **body}))
    result = runner.invoke(app, ["sweep", str(tmp_path / "sweep.json"), "--url", embedded])
    assert result.exit_code == 2 and "variations[1].objects[3].damping" in result.output, result.output
