import copy
import json

import orjson

from tests.conftest import example
from tests.support import same_document


def submit(client, body, **headers):
    answer = client.post("/v1/jobs", json=body, headers=headers)
    assert answer.status_code == 202, answer.text
    assert answer.headers["location"] == f"/v1/jobs/{answer.json()['id']}"
    return answer.json()


def test_job_runs_and_results_equal_the_in_process_document(client, run_queued, mini):
    import multibody
    job = submit(client, {"model": mini})
    assert job["status"] == "queued" and job["progress"] == 0.0
    assert run_queued() == ["succeeded"]
    status = client.get(f"/v1/jobs/{job['id']}").json()
    assert status["status"] == "succeeded" and status["progress"] == 1.0
    assert status["startedAt"] and status["finishedAt"] and status["error"] is None
    served = client.get(f"/v1/jobs/{job['id']}/results")
    assert served.status_code == 200
    expected = multibody.simulate(mini).to_document()
    expected["solver"]["solveSeconds"] = served.json()["solver"]["solveSeconds"]  # wall time differs per run
    assert served.content == orjson.dumps(expected)  # byte for byte: same floats, same key order


def test_job_from_a_stored_model_with_settings_overrides(client, run_queued, mini):
    model_id = client.post("/v1/models", json=mini).json()["id"]
    job = submit(client, {"modelId": model_id, "simulationSettings": {"timeIntegration": {"numberOfSteps": 10}}})
    run_queued()
    doc = client.get(f"/v1/jobs/{job['id']}/results").json()
    first = next(iter(doc["sensors"].values()))
    assert len(first["data"]) == 11  # one row per step (write period 0.1 = step) plus the start


def test_sensor_as_json_and_as_exudyn_csv(client, run_queued, mini):
    import numpy as np
    job = submit(client, {"model": mini})
    run_queued()
    results = client.get(f"/v1/jobs/{job['id']}/results").json()
    name, sensor = next(iter(results["sensors"].items()))
    assert client.get(f"/v1/jobs/{job['id']}/sensors/{name}").json() == sensor
    csv = client.get(f"/v1/jobs/{job['id']}/sensors/{name}", params={"format": "csv"})
    assert csv.headers["content-type"].startswith("text/csv")
    lines = csv.text.splitlines()
    assert lines[0].startswith("#Exudyn sensor output file")
    assert f"#OutputVariableType = {sensor['outputVariableType']}" in lines
    # what exudyn.plot.PlotSensor does with a sensor file
    data = np.loadtxt(lines, comments="#", delimiter=",", ndmin=2)
    assert np.array_equal(data, np.array(sensor["data"]))  # repr floats: lossless


def test_unknown_job_and_sensor_are_404(client, run_queued, mini):
    for path in ("/v1/jobs/nope", "/v1/jobs/nope/results", "/v1/jobs/nope/sensors/x"):
        assert client.get(path).status_code == 404
    assert client.delete("/v1/jobs/nope").status_code == 404
    job = submit(client, {"model": mini})
    run_queued()
    answer = client.get(f"/v1/jobs/{job['id']}/sensors/no-such-sensor")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"


def test_results_of_an_unfinished_job_are_409(client, mini):
    job = submit(client, {"model": mini})
    for path in ("results", f"sensors/{mini['sensors'][0]['name']}"):
        answer = client.get(f"/v1/jobs/{job['id']}/{path}")
        assert answer.status_code == 409
        assert answer.json()["error"]["code"] == "job_not_finished"


def test_cancel_a_queued_job(client, run_queued, mini):
    job = submit(client, {"model": mini})
    answer = client.delete(f"/v1/jobs/{job['id']}")
    assert answer.status_code == 200 and answer.json()["status"] == "canceled"
    assert run_queued() == ["skipped"]  # the worker's delivery finds it canceled
    assert client.get(f"/v1/jobs/{job['id']}/results").status_code == 409
    assert client.delete(f"/v1/jobs/{job['id']}").status_code == 409


def test_job_body_errors_are_422_with_paths(client, mini):
    cases = [({}, "$"), ({"model": mini, "modelId": "x"}, "$"), ({"model": mini, "colour": 1}, "colour"),
             ({"model": "text"}, "model")]
    for body, path in cases:
        answer = client.post("/v1/jobs", json=body)
        assert answer.status_code == 422, body
        assert path in [d["path"] for d in answer.json()["error"]["detail"]], answer.json()
    broken = copy.deepcopy(mini)
    del broken["objects"][1]["objectType"]
    answer = client.post("/v1/jobs", json={"model": broken})
    assert any(d["path"].startswith("model.objects[1]") for d in answer.json()["error"]["detail"])
    answer = client.post("/v1/jobs", json={"model": mini, "simulationSettings": {
        "timeIntegration": {"numberOfSteps": -1}}})
    assert answer.status_code == 422
    assert client.post("/v1/jobs", json={"modelId": "unknown"}).status_code == 404


def test_list_jobs_newest_first_with_status_filter_and_cursor(client, run_queued, mini):
    ids = [submit(client, {"model": mini})["id"] for _ in range(5)]
    run_queued()
    client.delete(f"/v1/jobs/{submit(client, {'model': mini})['id']}")
    page = client.get("/v1/jobs", params={"limit": 2, "status": "succeeded"}).json()
    assert [j["id"] for j in page["items"]] == ids[::-1][:2]
    seen = [j["id"] for j in page["items"]]
    while page["nextCursor"]:
        page = client.get("/v1/jobs", params={"limit": 2, "status": "succeeded", "cursor": page["nextCursor"]}).json()
        seen += [j["id"] for j in page["items"]]
    assert seen == ids[::-1]
    assert client.get("/v1/jobs", params={"status": "canceled"}).json()["items"][0]["status"] == "canceled"
    assert client.get("/v1/jobs", params={"status": "bogus"}).status_code == 422


def test_idempotency_key_returns_the_same_job(client, mini):
    first = submit(client, {"model": mini}, **{"Idempotency-Key": "abc"})
    again = submit(client, {"model": mini}, **{"Idempotency-Key": "abc"})
    assert again["id"] == first["id"]
    assert len(client.get("/v1/jobs").json()["items"]) == 1
    other = client.post("/v1/jobs", json={"model": example("spring_slider")}, headers={"Idempotency-Key": "abc"})
    assert other.status_code == 409 and other.json()["error"]["code"] == "idempotency_conflict"


def redundant_joints(mini) -> dict:
    """The mini example with its prismatic joint twice: dependent constraints, a failed solve."""
    doc = copy.deepcopy(mini)
    doc["objects"].append(dict(doc["objects"][2], name="object3"))
    return doc


def test_failed_job_reports_its_reason_and_results(client, run_queued, mini):
    import multibody
    doc = redundant_joints(mini)
    job = submit(client, {"model": doc})
    assert run_queued() == ["failed"]
    status = client.get(f"/v1/jobs/{job['id']}").json()
    assert status["status"] == "failed"
    assert status["error"]["code"] and "object3" in status["error"]["message"]
    served = client.get(f"/v1/jobs/{job['id']}/results")
    assert served.status_code == 200
    assert same_document(served.text, multibody.simulate(doc).to_document())


def test_results_and_csv_are_gzipped_when_the_client_accepts_it(client, run_queued, mini):
    """Above GZIP_MINIMUM_BYTES (a small job's results document is below: not compressed)."""
    import gzip

    from service.app import GZIP_MINIMUM_BYTES
    small = submit(client, {"model": mini})
    bigger = {"timeIntegration": {"numberOfSteps": 1000}, "solution": {"sensors": {"writePeriod": 1e-9}}}
    job = submit(client, {"model": mini, "simulationSettings": bigger})
    run_queued()
    small_path = f"/v1/jobs/{small['id']}/results"
    answer = client.get(small_path, headers={"Accept-Encoding": "gzip"})
    assert len(answer.content) < GZIP_MINIMUM_BYTES and "content-encoding" not in answer.headers
    name = next(iter(client.get(f"/v1/jobs/{job['id']}/results").json()["sensors"]))
    for path in (f"/v1/jobs/{job['id']}/results", f"/v1/jobs/{job['id']}/sensors/{name}?format=csv"):
        plain = client.get(path, headers={"Accept-Encoding": "identity"})
        assert "content-encoding" not in plain.headers
        packed = client.get(path, headers={"Accept-Encoding": "gzip"})
        assert packed.headers["content-encoding"] == "gzip"
        assert packed.content == plain.content  # httpx decodes it
        with client.stream("GET", path, headers={"Accept-Encoding": "gzip"}) as answer:
            wire = b"".join(answer.iter_raw())
        assert gzip.decompress(wire) == plain.content and len(wire) < len(plain.content) / 2


def _run_soon(run_queued, delay=0.3):
    import threading
    import time

    def later():
        time.sleep(delay)
        run_queued()
    thread = threading.Thread(target=later)
    thread.start()
    return thread


def test_long_poll_answers_when_the_worker_finishes_the_job(client, run_queued, mini, monkeypatch):
    import time

    from service.api.routes import jobs as routes
    reads, status_now = [], routes._status_now
    monkeypatch.setattr(routes, "_status_now", lambda *a: reads.append(a) or status_now(*a))
    job = submit(client, {"model": mini, "store": {"solution": True}})
    worker = _run_soon(run_queued)
    t0 = time.monotonic()
    status = client.get(f"/v1/jobs/{job['id']}", params={"wait": 30}).json()
    assert status["status"] == "succeeded" and time.monotonic() - t0 < 20  # woken, not timed out
    worker.join()
    # no read (this process created the job for this owner), then the document the finish's
    # notification carried: the same as a read
    assert len(reads) == 0 and status == client.get(f"/v1/jobs/{job['id']}").json()
    assert status["links"]["solution"] == f"/v1/jobs/{job['id']}/solution"


def test_long_poll_answers_from_a_finish_note_that_came_before_it(client, run_queued, mini, monkeypatch):
    import time

    from service.api.routes import jobs as routes
    reads, status_now = [], routes._status_now
    monkeypatch.setattr(routes, "_status_now", lambda *a: reads.append(a) or status_now(*a))
    job = submit(client, {"model": mini})
    assert run_queued() == ["succeeded"]
    waiters = client.app.state.waiters
    for _ in range(100):  # the notification reaches the listener's thread
        if waiters.unfinished_or_note(job["id"], "anonymous")[1] is not None:
            break
        time.sleep(0.02)
    t0 = time.monotonic()
    status = client.get(f"/v1/jobs/{job['id']}", params={"wait": 30}).json()
    assert status["status"] == "succeeded" and time.monotonic() - t0 < 1.0 and len(reads) == 0
    assert status == client.get(f"/v1/jobs/{job['id']}").json()


def test_results_read_ahead_after_a_long_poll_are_the_results_once(client, run_queued, mini, monkeypatch):
    from service.api.routes import jobs as routes
    reads, finished_result = [], routes.finished_result
    monkeypatch.setattr(routes, "finished_result", lambda *a: reads.append(a) or finished_result(*a))
    job = submit(client, {"model": mini})
    assert run_queued() == ["succeeded"]
    assert client.get(f"/v1/jobs/{job['id']}", params={"wait": 30}).json()["status"] == "succeeded"
    ahead = client.get(f"/v1/jobs/{job['id']}/results")  # the long poll's read, no other
    assert ahead.status_code == 200 and len(reads) == 1
    again = client.get(f"/v1/jobs/{job['id']}/results")  # read ahead once: now read as ever
    assert len(reads) == 2 and again.content == ahead.content and again.headers == ahead.headers
    client.get(f"/v1/jobs/{job['id']}")  # no wait: nothing read ahead
    assert client.get(f"/v1/jobs/{job['id']}/results", params={"data": False}).status_code == 200
    assert len(reads) == 3 and not client.app.state.read_ahead.items


def test_results_read_ahead_keeps_the_newest_and_not_big_ones(client, run_queued, mini, monkeypatch):
    from service.api.routes import jobs as routes
    monkeypatch.setattr(routes.ReadAhead, "KEPT", 2)
    ids = [submit(client, {"model": mini})["id"] for _ in range(3)]
    run_queued()
    for job_id in ids:
        client.get(f"/v1/jobs/{job_id}", params={"wait": 30})
    assert [key[0] for key in client.app.state.read_ahead.items] == ids[1:]
    monkeypatch.setattr(routes.ReadAhead, "BYTES", 100)  # the mini document's floats are more
    assert routes._read_ahead(client.app.state.settings, "anonymous", ids[0]) is None
    assert routes._read_ahead(client.app.state.settings, "anonymous", "0" * 32) is None  # errors: the GET's own


def test_results_read_ahead_only_when_no_other_job_is_waited_for(settings):
    import asyncio

    from service.api.routes.jobs import ReadAhead
    from service.events import JobWaiters
    waiters, ahead = JobWaiters(settings), ReadAhead()

    async def check():
        assert not waiters.others_waited_for("a")
        with waiters.watch("a"):
            assert not waiters.others_waited_for("a") and waiters.others_waited_for("b")
            ahead.start(settings, "anonymous", "b", waiters)  # another client's long poll waits for "a"
            assert not ahead.items
    asyncio.run(check())


def test_long_poll_gives_the_current_status_after_the_wait(client, mini):
    import time
    job = submit(client, {"model": mini})
    t0 = time.monotonic()
    assert client.get(f"/v1/jobs/{job['id']}", params={"wait": 0.5}).json()["status"] == "queued"
    assert time.monotonic() - t0 >= 0.5
    assert client.get(f"/v1/jobs/{job['id']}", params={"wait": 61}).status_code == 422
    assert client.get("/v1/jobs/nope", params={"wait": 1}).status_code == 404


def test_events_stream_progress_and_end_with_the_final_status(client, run_queued, mini):
    job = submit(client, {"model": mini})
    worker = _run_soon(run_queued)
    events = []
    with client.stream("GET", f"/v1/jobs/{job['id']}/events") as answer:
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in answer.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                events.append((name, json.loads(line[6:])))
    worker.join()
    assert events[0] == ("progress", events[0][1]) and events[0][1]["status"] == "queued"
    assert events[-1][0] == "end" and events[-1][1]["status"] == "succeeded"
    assert [e[0] for e in events[:-1]] == ["progress"] * (len(events) - 1)
    assert client.get("/v1/jobs/nope/events").status_code == 404


def test_big_downloads_are_formatted_in_the_pool_with_the_same_text_and_not_gzipped(client, run_queued, mini,
                                                                                     monkeypatch):
    """service.downloads: over BIG_BYTES, a download's rows are formatted in the process pool;
    every format gives the text of the request's thread, byte for byte, and none is gzipped
    (gzip would cap a big download far below disk speed)."""
    from service import downloads
    job = submit(client, {"model": mini, "store": {"solution": True}})
    run_queued()
    sensor = client.get(f"/v1/jobs/{job['id']}/results?data=false").json()["sensors"]
    paths = [f"/v1/jobs/{job['id']}/results", f"/v1/jobs/{job['id']}/solution",
             f"/v1/jobs/{job['id']}/solution?format=csv"]
    paths += [f"/v1/jobs/{job['id']}/sensors/{name}{query}" for name in sensor for query in ("", "?format=csv")]
    gzip = {"Accept-Encoding": "gzip"}
    in_thread = {path: client.get(path, headers=gzip) for path in paths}
    assert all(a.status_code == 200 for a in in_thread.values())
    monkeypatch.setattr(downloads, "BIG_BYTES", 0)
    pooled, real = [], downloads.pooled
    monkeypatch.setattr(downloads, "pooled", lambda *args: pooled.append(args) or real(*args))
    for path in paths:
        answer = client.get(path, headers=gzip)
        assert answer.headers["content-encoding"] == "identity", path
        assert answer.content == in_thread[path].content, path
    assert len(pooled) == len(paths)
    monkeypatch.setattr(downloads, "pool", lambda settings: None)  # MBSERVE_DOWNLOAD_PROCESSES=0
    answer = client.get(paths[0], headers=gzip)
    assert answer.headers["content-encoding"] == "identity" and answer.content == in_thread[paths[0]].content
    assert len(pooled) == len(paths)  # formatted in the request's thread


