"""Issue 6 at the API: API keys and owner isolation, request and model limits, rate limit."""
import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.auth import create_key
from store.db import get_sessionmaker


@pytest.fixture
def secured(settings, queued):
    s = settings.model_copy(update={"require_api_key": True})
    with get_sessionmaker(s.database)() as session:
        keys = {owner: create_key(session, owner) for owner in ("alice", "bob")}
    with TestClient(create_app(s)) as c:
        yield c, keys


def auth(key):
    return {"Authorization": f"Bearer {key}"}


def test_key_required_when_configured(secured, mini):
    client, keys = secured
    for answer in (client.get("/v1/jobs"), client.post("/v1/models", json=mini),
                   client.get("/v1/jobs", headers=auth("mbs_0000_wrong"))):
        assert answer.status_code == 401 and answer.json()["error"]["code"] == "unauthorized"
    assert client.get("/v1/jobs", headers={"X-API-Key": keys["alice"]}).status_code == 200
    assert client.get("/healthz").status_code == 200  # probes stay open


def test_listening_beyond_loopback_requires_a_key(settings):
    assert settings.model_copy(update={"host": "0.0.0.0"}).api_key_required
    assert not settings.model_copy(update={"host": "127.0.0.1"}).api_key_required


def test_other_owners_get_404_for_models_jobs_and_results(secured, run_queued, mini):
    client, keys = secured
    model_id = client.post("/v1/models", json=mini, headers=auth(keys["alice"])).json()["id"]
    job = client.post("/v1/jobs", json={"modelId": model_id}, headers=auth(keys["alice"])).json()
    run_queued()
    bob = auth(keys["bob"])
    client.get(f"/v1/jobs/{job['id']}", params={"wait": 5}, headers=auth(keys["alice"]))  # alice's read ahead
    for path in (f"/v1/models/{model_id}", f"/v1/jobs/{job['id']}", f"/v1/jobs/{job['id']}/results"):
        assert client.get(path, headers=bob).status_code == 404
        assert client.get(path, headers=auth(keys["alice"])).status_code == 200
    assert client.delete(f"/v1/jobs/{job['id']}", headers=bob).status_code == 404
    assert client.post("/v1/jobs", json={"modelId": model_id}, headers=bob).status_code == 404
    assert client.get("/v1/jobs", headers=bob).json()["items"] == []


def test_revoked_key_is_refused(secured, settings):
    from service.auth import revoke_key
    client, keys = secured
    with get_sessionmaker(settings.database)() as session:
        revoke_key(session, keys["bob"].split("_")[1])
    assert client.get("/v1/jobs", headers=auth(keys["bob"])).status_code == 401


def make_client(settings, **limits):
    return TestClient(create_app(settings.model_copy(update=limits)))


def test_request_body_over_the_limit_is_413(settings, queued, mini):
    with make_client(settings, max_request_bytes=1000) as client:
        answer = client.post("/v1/models", json=mini)
        assert answer.status_code == 413
        assert "MBSERVE_MAX_REQUEST_BYTES" in answer.json()["error"]["message"]
        chunked = client.post("/v1/models", content=iter([b"{" + b" " * 600, b" " * 600 + b"}"]),
                              headers={"content-type": "application/json"})
        assert chunked.status_code == 413


def test_model_limits_are_422_naming_the_limit(settings, queued, mini):
    with make_client(settings, max_items=2, max_sensor_rows=100) as client:
        answer = client.post("/v1/jobs", json={"model": mini})
        assert answer.status_code == 422 and answer.json()["error"]["code"] == "limit_exceeded"
        detail = {d["path"]: d["message"] for d in answer.json()["error"]["detail"]}
        assert "MBSERVE_MAX_ITEMS" in detail["model.objects"]
        assert "MBSERVE_MAX_SENSOR_ROWS" in detail["model.simulationSettings"]
    with make_client(settings, max_expression_chars=20) as client:
        motion = {"motionType": "Custom", "joint": "object2", "level": "Position", "position": "0.1*t" + "+0*t" * 10}
        answer = client.post("/v1/models", json=dict(mini, motions=[motion]))
        assert answer.status_code == 422
        assert [d["path"] for d in answer.json()["error"]["detail"]] == ["motions[0].position"]
        assert client.post("/v1/models", json=dict(mini, motions=5)).status_code == 422


def test_rate_limit_on_post_is_429_with_retry_after(settings, queued, mini):
    with make_client(settings, rate_limit_per_minute=3) as client:
        codes = [client.post("/v1/models", json=mini).status_code for _ in range(4)]
        assert codes == [201, 201, 201, 429]
        answer = client.post("/v1/jobs", json={"model": mini})
        assert answer.status_code == 429 and int(answer.headers["retry-after"]) >= 1
        assert client.get("/v1/jobs").status_code == 200  # reads have a bucket of their own


def test_rate_limit_on_get_is_429_per_caller_and_apart_from_posts(settings, queued, mini):
    s = settings.model_copy(update={"require_api_key": True})
    with get_sessionmaker(s.database)() as session:
        keys = {owner: create_key(session, owner) for owner in ("alice", "bob")}
    with TestClient(create_app(s.model_copy(update={"read_rate_limit_per_minute": 4}))) as client:
        alice, bob = auth(keys["alice"]), auth(keys["bob"])
        model = client.post("/v1/models", json=mini, headers=alice).json()["id"]
        job = client.post("/v1/jobs", json={"modelId": model}, headers=alice).json()["id"]
        codes = [client.get(path, headers=alice).status_code
                 for path in ("/v1/jobs", f"/v1/jobs/{job}", f"/v1/models/{model}", f"/v1/jobs/{job}/results", "/v1/jobs")]
        assert codes[:3] == [200, 200, 200] and codes[4] == 429, codes  # [3]: 200 or 409, by the job's progress
        answer = client.get(f"/v1/models/{model}", headers=alice)
        assert answer.status_code == 429 and answer.json()["error"]["code"] == "rate_limited"
        assert "MBSERVE_READ_RATE_LIMIT_PER_MINUTE" in answer.json()["error"]["message"]
        assert int(answer.headers["retry-after"]) >= 1
        assert client.get("/v1/jobs", headers=bob).status_code == 200  # another caller's bucket
        assert client.post("/v1/models", json=mini, headers=alice).status_code == 201  # POSTs count apart
        assert client.get("/healthz").status_code == 200  # probes are not limited


def test_database_down_is_503(settings, queued):
    down = settings.model_copy(update={"database_url": "postgresql+psycopg://postgres@127.0.0.1:1/none"})
    with TestClient(create_app(down)) as client:
        answer = client.get("/v1/jobs")
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "database_unavailable"


def test_keys_are_stored_hashed(settings):
    import hashlib

    from store.models import ApiKey
    with get_sessionmaker(settings.database)() as session:
        key = create_key(session, "carol")
        row = session.get(ApiKey, key.split("_")[1])
        secret = key.split("_", 2)[2]
        assert secret not in (row.id, row.owner, row.secret_hash)
        assert row.secret_hash == hashlib.sha256(secret.encode()).hexdigest()


def test_serve_says_at_start_whether_it_runs_open(tmp_path, monkeypatch):
    import uvicorn
    from typer.testing import CliRunner

    from mbserve.cli import app
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)
    # the command puts these in os.environ for its worker process; set here, monkeypatch undoes them after
    monkeypatch.setenv("MBSERVE_HOST", "127.0.0.1")
    monkeypatch.setenv("MBSERVE_DATA_DIR", str(tmp_path / "d"))
    runner = CliRunner()
    data = ["--data-dir", str(tmp_path / "d")]
    loopback = runner.invoke(app, ["serve", "--no-worker", *data])
    assert loopback.exit_code == 0, loopback.output
    assert "open: no API key needed on loopback" in loopback.output
    beyond = runner.invoke(app, ["serve", "--no-worker", "--host", "0.0.0.0", *data])
    assert "API keys required" in beyond.output and "open" not in beyond.output


def test_expression_nested_too_deeply_is_422_with_its_path(client, mini):
    motion = {"motionType": "Custom", "joint": "object2", "level": "Position",
              "position": "sin(" * 40 + "t" + ")" * 40}
    answer = client.post("/v1/models", json=dict(mini, motions=[motion]))
    assert answer.status_code == 422, answer.text
    detail = answer.json()["error"]["detail"]
    assert [d["path"] for d in detail] == ["motions[0].position"], detail
    assert "nested too deeply" in detail[0]["message"]


def test_expression_budget_is_422_naming_the_limit_before_the_work_is_done(settings, queued):
    from tests.multibody.test_motion_laws import HEAVY, sliders
    heavy = sliders(15, HEAVY)  # ~11,000 cost units per motion
    with make_client(settings, max_expression_cost=30_000, max_motions=15) as client:
        for route in ("/v1/models", "/v1/validate"):  # the validation endpoint spends under the same budget
            answer = client.post(route, json=heavy)
            assert answer.status_code == 422 and answer.json()["error"]["code"] == "limit_exceeded", answer.text
            assert "MBSERVE_MAX_EXPRESSION_COST" in answer.json()["error"]["message"]
            [problem] = answer.json()["error"]["detail"]
            assert "MBSERVE_MAX_EXPRESSION_COST" in problem["message"] and problem["path"] in ("motions[2]", "motions[3]")
        answer = client.post("/v1/jobs", json={"model": sliders(16, HEAVY)})
        assert answer.status_code == 422 and answer.json()["error"]["code"] == "limit_exceeded"
        assert answer.json()["error"]["detail"] == [{"path": "model.motions", "item": None, "message":
                                                     "16 motions; the limit is 15 per document (MBSERVE_MAX_MOTIONS)"}]
        assert client.post("/v1/models", json=sliders(2, HEAVY)).status_code == 201
        bad = sliders(2, HEAVY)
        bad["motions"][1]["joint"] = "nowhere"  # a plain problem of the model is not a limit
        answer = client.post("/v1/models", json=bad)
        assert answer.status_code == 422 and answer.json()["error"]["code"] == "model_invalid", answer.text
        answer = client.post("/v1/validate", json=bad)
        assert answer.status_code == 200 and not answer.json()["ok"]
