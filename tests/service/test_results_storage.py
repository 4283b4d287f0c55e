"""Stored results come back exactly, from every storage: float64 bit for bit, the same JSON text
as `mbserve run` (orjson), in chunks; results stored as .npz before revision 0003 stay readable."""
import io
import json

import numpy as np
import orjson
import pytest

from multibody import Results, SensorSeries
from store.db import get_sessionmaker
from store.models import Result
from store.formats import chunk_rows, document_bytes, document_json, sensor_csv, streamed
from store.results import open_source, prepare, remove_other_attempts


def results_with(rows: int) -> Results:
    rng = np.random.default_rng(5)
    values = rng.standard_normal((rows, 16)) * 10.0 ** rng.integers(-300, 300, (rows, 16))  # all magnitudes
    data = np.column_stack([np.arange(rows) * 1e-3, values])
    return Results("succeeded", [{"code": "DeprecationWarning", "item": "object2", "message": "m"}],
                   {"type": "Dynamic", "solveSeconds": 0.1},
                   {"ht": SensorSeries("Object", "object2", "HomogeneousTransformation",
                                       ["time"] + [f"H{i}{j}" for i in range(4) for j in range(4)], data),
                    "empty": SensorSeries("Node", "node0", "Position", ["time", "PositionX"], np.zeros((0, 2)))})


def stored(settings, job_id: str, results: Results) -> Result:
    """Stored as the worker stores it (prepare, then add in the finish transaction), read back."""
    from store import jobs
    from store.models import Job, Model
    Session = get_sessionmaker(settings.database)
    prepared = prepare(settings, job_id, "token", results)
    with Session() as session:
        session.add(Model(id="m" + job_id, owner="o", content_hash=job_id, document="{}", summary={}, warnings=[]))
        session.flush()
        session.add(Job(id=job_id, owner="o", model_id="m" + job_id, status="running", lease_token="token"))
        session.commit()
    assert jobs.finish(settings, job_id, "token", "succeeded", results=prepared)
    with Session() as session:
        return session.get(Result, job_id)


def served(settings, result: Result) -> bytes:
    source = open_source(settings, get_sessionmaker(settings.database), result)
    return b"".join(streamed(source, document_json(source, result.head, result.sensors)))


@pytest.mark.parametrize("where", ["db", "file", "url"])
def test_document_streams_in_chunks_and_equals_mbserve_run(settings, tmp_path, where):
    settings = settings.model_copy(update={
        "inline_result_bytes": 10_000_000 if where == "db" else 0,
        "results_url": (tmp_path / "bucket").as_uri() if where == "url" else None})
    rows = 2 * chunk_rows(17) + 7
    results = results_with(rows)
    result = stored(settings, f"job{where}", results)
    assert result.storage == where
    source = open_source(settings, get_sessionmaker(settings.database), result)
    with source:
        assert [len(c) for c in source.rows(result.sensors[0])] == [chunk_rows(17), chunk_rows(17), 7]
    text = served(settings, result)
    assert text == document_bytes(results) == orjson.dumps(results.to_document())
    assert np.array_equal(np.array(json.loads(text)["sensors"]["ht"]["data"]), results.sensors["ht"].data)


@pytest.mark.parametrize("rows", [7, 20 * chunk_rows(17)])
def test_finish_on_postgresql_stores_the_results_once_bit_for_bit(tmp_path, rows):
    """store.jobs.finish on PostgreSQL: results of up to ONE_STATEMENT_CHUNKS chunks are stored
    with the job's status in one statement, bigger ones in a transaction; either way they come
    back bit for bit, and a finish by a token that no longer holds the job stores nothing."""
    from store import jobs
    from store.config import Settings
    from store.db import migrate
    from store.models import Job
    from tests.worker.conftest import fresh_database
    with fresh_database() as url:
        settings = Settings(data_dir=tmp_path, database_url=url)
        migrate(url)
        results = results_with(rows)
        assert prepare(settings, "job", "token", results).fits_one_statement == (rows == 7)
        result = stored(settings, "job", results)
        assert result.storage == "db"
        assert served(settings, result) == document_bytes(results)
        prepared = prepare(settings, "job", "token", results)
        assert not jobs.finish(settings, "job", "token", "failed", results=prepared)  # finished already
        with get_sessionmaker(url)() as session:
            assert session.get(Job, "job").status == "succeeded"


def test_csv_rows_read_back_bit_for_bit(settings):
    results = results_with(100)
    result = stored(settings, "job", results)
    source = open_source(settings, get_sessionmaker(settings.database), result)
    text = b"".join(streamed(source, sensor_csv(source, result.sensors[0], "job"))).decode()
    assert np.array_equal(np.loadtxt(text.splitlines(), comments="#", delimiter=","), results.sensors["ht"].data)
    assert "#number of sensor values = 16" in text.splitlines()


def test_other_attempts_files_are_removed(settings):
    settings = settings.model_copy(update={"inline_result_bytes": 0})
    stale = settings.results / "job" / "earlier.f64"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"")
    result = stored(settings, "job", results_with(10))
    remove_other_attempts(settings, "job", result.path)
    assert [f.name for f in (settings.results / "job").iterdir()] == ["token.f64"]


OLD = "0000000000000000000000000000000a"  # a job id as the service makes them


def test_results_stored_before_revision_0003_are_migrated_and_served(tmp_path):
    """A database at revision 0001 with a result in the old layout (a compressed .npz per job,
    written as the code of 0001 wrote it) is upgraded, and the API serves that result."""
    from alembic import command
    from fastapi.testclient import TestClient
    from sqlalchemy import text

    from service.app import create_app
    from store.config import Settings
    from store.db import alembic_config, get_engine
    settings = Settings(data_dir=tmp_path / "data", reconcile_seconds=0)
    settings.ensure_dirs()
    command.upgrade(alembic_config(settings.database), "0001")
    results = results_with(3 * 4096 + 5)
    head = {"status": "succeeded", "warnings": results.warnings, "solver": results.solver}
    sensors, arrays = [], {}
    for i, (name, s) in enumerate(results.sensors.items()):
        arrays[f"s{i}"] = s.data
        sensors.append({"name": name, "key": f"s{i}", "sensorType": s.sensorType, "item": s.item,
                        "outputVariableType": s.outputVariableType, "columns": s.columns, "rows": len(s.data)})
    (settings.results / OLD).mkdir()
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    (settings.results / OLD / "t.npz").write_bytes(buf.getvalue())
    with get_engine(settings.database).begin() as conn:
        conn.execute(text("INSERT INTO models VALUES ('m', 'anonymous', 'h', '{}', '{}', '[]', '2026-01-01')"))
        conn.execute(text("INSERT INTO jobs (id, owner, model_id, status, progress, created_at, attempts) "
                          "VALUES ('0000000000000000000000000000000a', 'anonymous', 'm', 'succeeded', 1.0, '2026-01-01', 1)"))
        conn.execute(text("INSERT INTO results (job_id, head, sensors, path, created_at) VALUES "
                          "('0000000000000000000000000000000a', :head, :sensors, '0000000000000000000000000000000a/t.npz', '2026-01-01')"),
                     {"head": json.dumps(head), "sensors": json.dumps(sensors)})
    command.upgrade(alembic_config(settings.database), "head")
    with get_sessionmaker(settings.database)() as session:
        assert session.get(Result, OLD).storage == "npz"
    with TestClient(create_app(settings)) as client:
        answer = client.get(f"/v1/jobs/{OLD}/results")
        assert answer.status_code == 200
        assert answer.content == document_bytes(results)
        csv = client.get(f"/v1/jobs/{OLD}/sensors/ht?format=csv").text
        assert np.array_equal(np.loadtxt(csv.splitlines(), comments="#", delimiter=","), results.sensors["ht"].data)
