"""Issue 18, the red team's findings at the API: each request that gave a 500, a poisoned model,
an unbounded job or an unreadable answer, and what the service answers now."""
import copy
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

import multibody
from service.app import create_app
from tests.multibody.test_limits import STATIC_SPRING, nested
from tests.worker.conftest import make_job  # noqa: F401  (a fixture)


def error(answer, status: int, code: str) -> dict:
    assert answer.status_code == status, answer.text
    body = answer.json()["error"]
    assert body["code"] == code, body
    return body


@pytest.mark.parametrize("depth", [10, 254, 800, 5000])
@pytest.mark.parametrize("where", ["Vcolor", "simulationSettings"])
def test_deep_nesting_anywhere_in_a_job_is_a_422_naming_the_limit(client, mini, depth, where):
    """Finding 3: 254+ levels gave a 500 from model_dump_json, then a reset keep-alive connection."""
    body = {"model": copy.deepcopy(mini)}
    if where == "Vcolor":
        body["model"]["objects"][1]["Vcolor"] = "DEEP"
    else:
        body["simulationSettings"] = {"solution": {"x": "DEEP"}}
    text = json.dumps(body).replace('"DEEP"', "[" * depth + "1" + "]" * depth)  # json.dumps stops at ~1000
    answer = client.post("/v1/jobs", content=text, headers={"content-type": "application/json"})
    if depth == 10:  # under the limit: accepted (Vcolor) or an unknown setting
        assert answer.status_code == (202 if where == "Vcolor" else 422), answer.text
        return
    found = error(answer, 422, "limit_exceeded")
    assert "MBSERVE_MAX_NESTING_DEPTH" in found["message"]
    where = "model.objects[1].Vcolor" if where == "Vcolor" else "simulationSettings.solution.x"
    assert found["detail"][0]["path"].startswith(where if depth < 1000 else "$")  # deeper: json.loads stops
    assert client.get("/healthz").status_code == 200  # the connection goes on


def test_a_deeply_nested_model_is_not_stored(client, mini):
    """Finding 4: a Vcolor nested 500-800 levels was stored (201) and poisoned every job on it."""
    doc = copy.deepcopy(mini)
    doc["objects"][1]["Vcolor"] = nested(600)
    error(client.post("/v1/models", json=doc), 422, "limit_exceeded")
    assert client.get("/v1/jobs").json()["items"] == []


def test_the_nesting_limit_is_configurable(settings, queued, mini):
    doc = copy.deepcopy(mini)
    doc["objects"][1]["Vcolor"] = nested(5)
    with TestClient(create_app(settings.model_copy(update={"max_nesting_depth": 6}))) as c:
        found = error(c.post("/v1/models", json=doc), 422, "limit_exceeded")
    assert "6 levels" in found["message"]


def test_a_poisoned_stored_model_fails_its_job_with_a_clear_code(settings, make_job, run_queued, monkeypatch):
    """Finding 4 in the worker: RecursionError in merge_settings' deepcopy was outside the try; the
    job was retried three times and ended worker_lost. A model stored before the limit existed."""
    from store.models import Job, Model
    from store.db import get_sessionmaker
    from worker import runner
    from worker.runner import execute
    # the worker must read the stored document: an earlier test's job of the same content (the
    # model id is the owner and content hash) may have left it loaded in this process
    monkeypatch.setattr(runner, "LOADED", runner._LoadedModels())
    job_id = make_job(overrides={"timeIntegration": {"numberOfSteps": 10}})
    with get_sessionmaker(settings.database)() as session:
        model = session.get(Model, session.get(Job, job_id).model_id)
        doc = json.loads(model.document)
        doc["objects"][1]["Vcolor"] = "DEEP"
        model.document = json.dumps(doc).replace('"DEEP"', "[" * 3000 + "]" * 3000)
        session.commit()
    assert execute(settings, job_id) == "failed"
    with get_sessionmaker(settings.database)() as session:
        row = session.get(Job, job_id)
        assert row.error["code"] == "recursion_limit" and row.attempts == 1


@pytest.mark.parametrize("settings_key,value,limit", [
    ({"timeIntegration": {"numberOfSteps": 1e12}}, "1e+12", "MBSERVE_MAX_STEPS"),
    ({"timeIntegration": {"numberOfSteps": 1e30}}, "1e+30", "MBSERVE_MAX_STEPS"),
    ({"staticSolver": {"numberOfLoadSteps": 1e9}}, "1e+09", "MBSERVE_MAX_LOAD_STEPS")])
def test_step_counts_over_the_service_limit_are_refused_as_model_and_as_override(client, mini, settings_key,
                                                                                 value, limit):
    """Findings 1 and 6: each such job held a worker slot for up to an hour (or took the worker)."""
    doc = multibody.merge_settings(mini, settings_key)
    doc["sensors"] = []
    for body in ({"model": doc}, {"model": {**mini, "sensors": []}, "simulationSettings": settings_key}):
        found = error(client.post("/v1/jobs", json=body), 422, "limit_exceeded")
        assert any(limit in d["message"] and value in d["message"] for d in found["detail"]), found
    assert client.get("/v1/jobs").json()["items"] == []


def test_step_limits_are_configurable(settings, queued, mini):
    with TestClient(create_app(settings.model_copy(update={"max_steps": 50, "max_load_steps": 2}))) as c:
        error(c.post("/v1/jobs", json={"model": mini}), 422, "limit_exceeded")  # mini has 100 steps
        static = multibody.merge_settings(STATIC_SPRING, {"staticSolver": {"numberOfLoadSteps": 3}})
        error(c.post("/v1/models", json=static), 422, "limit_exceeded")
        assert c.post("/v1/jobs", json={"model": mini, "simulationSettings": {
            "timeIntegration": {"numberOfSteps": 50}}}).status_code == 202


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_in_visualization_keys_are_refused(client, mini, text):
    """Finding 9: NaN in V* keys was stored and served back as bare NaN, which is not JSON."""
    raw = json.dumps(mini).replace('"objectType": "RigidBody"', f'"objectType": "RigidBody", "Vcolor": [{text}, 1]')
    answer = client.post("/v1/models", content=raw, headers={"content-type": "application/json"})
    found = error(answer, 422, "invalid_request")
    assert [d["path"] for d in found["detail"]] == ["objects[1].Vcolor[0]"]
    body = '{"model": ' + json.dumps(mini) + ', "simulationSettings": {"x": ' + text + "}}"
    answer = client.post("/v1/jobs", content=body, headers={"content-type": "application/json"})
    assert error(answer, 422, "invalid_request")["detail"][0]["path"] == "simulationSettings.x"


def test_a_sensor_name_with_a_slash_is_refused_and_allowed_names_can_be_fetched(client, run_queued, mini):
    """Finding 10: sensor names with '/' were accepted but could never be fetched."""
    doc = copy.deepcopy(mini)
    doc["sensors"][0]["name"] = "joint/HT"
    found = error(client.post("/v1/jobs", json={"model": doc}), 422, "model_invalid")
    assert found["detail"][0]["path"] == "model.sensors[0].name"
    doc["sensors"][0]["name"] = "joint:HT~1.x@a+b"
    job = client.post("/v1/jobs", json={"model": doc}).json()
    assert run_queued() == ["succeeded"]
    assert client.get(f"/v1/jobs/{job['id']}/sensors/joint:HT~1.x@a+b").status_code == 200


def test_the_expanded_model_is_computed_once(client, mini, monkeypatch):
    """Finding 11: ?expanded=true re-validated on every call (4.8 s for a 4999-body model)."""
    from service.api.routes import models
    model_id = client.post("/v1/models", json=mini).json()["id"]
    models._EXPANDED.clear()
    calls = []
    validate = multibody.validate_document
    monkeypatch.setattr(multibody, "validate_document", lambda doc, *a, **k: calls.append(1) or validate(doc, *a, **k))
    answers = [client.get(f"/v1/models/{model_id}?expanded=true") for _ in range(5)]
    assert all(a.status_code == 200 and a.json() == answers[0].json() for a in answers)
    assert len(calls) == 1


def test_expanding_uncached_models_is_rate_limited(settings, queued, mini):
    with TestClient(create_app(settings.model_copy(update={"rate_limit_per_minute": 3}))) as c:
        from service.api.routes import models
        ids = [c.post("/v1/models", json={**mini, "name": f"m{i}"}).json()["id"] for i in range(2)]
        models._EXPANDED.clear()
        assert c.get(f"/v1/models/{ids[0]}?expanded=true").status_code == 200
        assert c.get(f"/v1/models/{ids[0]}?expanded=true").status_code == 200  # cached: free
        error(c.get(f"/v1/models/{ids[1]}?expanded=true"), 429, "rate_limited")


HOSTILE_IDS = ["%00", "a%00b", "x" * 300, "%C3%A9", "'; DROP TABLE jobs; --", "0" * 65]


def nul_requests(client, mini, model_id: str, job_id: str):
    """Every route that takes an id, with the ids the red team used (the NUL byte first)."""
    for bad in HOSTILE_IDS:
        yield client.get(f"/v1/jobs/{bad}"), 404
        yield client.delete(f"/v1/jobs/{bad}"), 404
        yield client.get(f"/v1/jobs/{bad}/results"), 404
        yield client.get(f"/v1/jobs/{bad}/sensors/joint_HT"), 404
        yield client.get(f"/v1/jobs/{job_id}/sensors/{bad}"), 409  # the job is still queued
        yield client.get(f"/v1/models/{bad}"), 404
        yield client.get(f"/v1/models/{bad}?expanded=true"), 404
        yield client.get(f"/v1/jobs?cursor={bad}"), 422
        yield client.post("/v1/jobs", json={"modelId": bad.replace("%00", "\0")}), 404
    yield client.post("/v1/jobs", json={"modelId": model_id, "simulationSettings": {"\0": "\0"}}), 422
    yield client.get("/v1/jobs", headers={"X-API-Key": "mbs_%00_x"}), 401  # a key is checked when given


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_hostile_ids_never_reach_the_database(settings, queued, mini, backend):
    """Finding 5: a NUL byte in any id reached psycopg (DataError: a 500 on all 7 routes tried)."""
    import contextlib

    from store.db import migrate
    from tests.worker.conftest import fresh_database
    with fresh_database() if backend == "postgresql" else contextlib.nullcontext(settings.database) as url:
        s = settings.model_copy(update={"database_url": url})
        migrate(s.database)
        with TestClient(create_app(s)) as c:
            model_id = c.post("/v1/models", json=mini).json()["id"]
            job_id = c.post("/v1/jobs", json={"modelId": model_id}).json()["id"]
            for answer, status in nul_requests(c, mini, model_id, job_id):
                assert answer.status_code == status, (answer.request.url, answer.text)
                assert answer.status_code == 200 or set(answer.json()["error"]) == {"code", "message", "detail"}


@pytest.mark.parametrize("where", ["name", "key", "extra"])
def test_lone_surrogates_are_a_422_whose_body_is_json(client, mini, where):
    """Found by bench/fuzz.py: '\\ud800' in a name or key reached a UTF-8 encoder (a 500)."""
    doc = copy.deepcopy(mini)
    if where == "name":
        doc["objects"][1]["name"] = "a\ud800"
    elif where == "key":
        doc["simulationSettings"]["\udfff"] = 1
    body = {"model": doc} if where != "extra" else {"model": mini, "\ud800": 1}
    answer = client.post("/v1/jobs", content=json.dumps(body), headers={"content-type": "application/json"})
    assert answer.status_code == 422 and answer.json()["error"]["detail"], answer.text


def test_a_stored_solution_over_the_result_limit_is_refused_before_the_run(settings, queued, mini):
    """The solution (rows x coordinates) counts against MBSERVE_MAX_RESULT_BYTES before any work:
    mini stores 102 rows of 1 + 3 x 7 values (about 18 kB)."""
    with TestClient(create_app(settings.model_copy(update={"max_result_bytes": 10_000}))) as c:
        found = error(c.post("/v1/jobs", json={"model": mini, "store": {"solution": True}}), 422, "limit_exceeded")
        assert "MBSERVE_MAX_RESULT_BYTES" in found["detail"][0]["message"]
        assert c.post("/v1/jobs", json={"model": mini}).status_code == 202


def test_validation_stops_when_the_client_disconnects(settings, queued, mini, monkeypatch):
    """Issue 18: a request's validation went on after its client had gone (24 s of CPU for one
    body). The ASGI app gets the body, then the client's disconnect; the validation, here one
    that would take 30 s, sees it and stops."""
    import anyio
    polled = []

    def slow_validation(doc, limits=None, cancel=None):
        end = time.monotonic() + 30
        while time.monotonic() < end:
            polled.append(cancel())
            if polled[-1]:
                raise multibody.SimulationCanceled()
            time.sleep(0.01)
        return validate(doc, limits)
    validate = multibody.validate_document
    monkeypatch.setattr(multibody, "validate_document", slow_validation)
    body = json.dumps({**mini, "name": "validated while the client goes"}).encode()  # no verdict kept for it
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        if messages:
            return messages.pop()
        await anyio.sleep(0.3)  # the client goes away while the validation runs
        return {"type": "http.disconnect"}

    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/v1/models", "raw_path": b"/v1/models", "query_string": b"",
             "root_path": "", "headers": [(b"content-type", b"application/json"),
                                          (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 5000), "server": ("testserver", 80)}
    app = create_app(settings)
    started = time.monotonic()
    # in a thread of its own: the browser tests' session keeps an event loop running in this one
    with ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, app, scope, receive, send).result()
    assert time.monotonic() - started < 10
    assert polled and polled[-1] is True and polled[0] is False
    assert sent[0]["status"] == 422 and b"client_gone" in sent[1]["body"]


def varied_heavy_motions(n: int) -> dict:
    """n sliders, each driven by a law that costs about 0.3 s of sympy here; no two alike
    (sympy caches what it has seen, so copies of one law would cost it once)."""
    from tests.multibody.test_motion_laws import HEAVY, sliders
    doc = sliders(n, HEAVY)
    for k, motion in enumerate(doc["motions"]):
        motion["position"] = "*".join(f"sin({i}*t + cos({k + 2}*t))" for i in range(1, 13))
    return doc


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads)."""
    import os
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("route,body", [("/v1/jobs", lambda doc: {"model": doc}), ("/v1/validate", lambda doc: doc)])
def test_a_client_that_goes_away_stops_the_validation_over_a_real_connection(tmp_path, route, body):
    """Finding 7 as the red team saw it: `mbserve serve`, a body whose motions cost minutes of CPU
    to validate (the budget raised so that it is not what stops them), the client's socket
    closed once the server is at work. The server's CPU time stops growing at once; before, the
    validation went on to its end (here ~30 s of CPU) for nobody."""
    import socket

    import httpx

    from tests.support import free_port, start, stop, wait_http
    port, log = free_port(), tmp_path / "serve.log"
    proc = start(["mbserve.cli", "serve", "--no-worker", "--port", str(port), "--data-dir", str(tmp_path / "data")],
                 {"MBSERVE_MAX_EXPRESSION_COST": str(10**9), "MBSERVE_MAX_EXPRESSION_SECONDS": "600"}, log)
    try:
        wait_http(f"http://127.0.0.1:{port}/readyz", proc, log)
        text = json.dumps(body(varied_heavy_motions(100))).encode()
        idle = cpu_seconds(proc.pid)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(f"POST {route} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(text)}\r\n\r\n".encode() + text)
            deadline = time.monotonic() + 60
            while cpu_seconds(proc.pid) - idle < 1.0:  # at work on the motions
                assert time.monotonic() < deadline, "the server did not start validating"
                time.sleep(0.05)
        closed = cpu_seconds(proc.pid)
        previous, deadline = closed, time.monotonic() + 60
        while True:  # quiet: under 0.1 s of CPU in a second (not the ~30 s the validation would take)
            time.sleep(1.0)
            now = cpu_seconds(proc.pid)
            if now - previous < 0.1:
                break
            assert time.monotonic() < deadline, f"still busy: {now - closed:.1f} s of CPU since the client went"
            previous = now
        assert now - closed < 2.0, f"{now - closed:.1f} s of CPU after the client went"
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            assert client.get("/healthz").status_code == 200
    finally:
        stop(proc)
