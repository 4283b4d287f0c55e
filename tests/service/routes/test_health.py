def test_healthz(client):
    assert client.get("/healthz").json() == {"status": "ok"}


def test_readyz_checks_database_and_broker(client):
    answer = client.get("/readyz")
    assert answer.status_code == 200, answer.text


def test_readyz_is_503_when_the_broker_is_unreachable(settings):
    from fastapi.testclient import TestClient

    from service.app import create_app
    broken = settings.model_copy(update={"broker_url": "redis://127.0.0.1:1/0"})
    with TestClient(create_app(broken)) as c:
        answer = c.get("/readyz")
    assert answer.status_code == 503
    assert [d["path"] for d in answer.json()["error"]["detail"]] == ["broker"]


def test_readyz_is_503_warming_up_and_a_queued_job_says_why_while_the_kernels_compile(client, monkeypatch, mini):
    from multibody import kernel_cache
    job = client.post("/v1/jobs", json={"model": mini}).json()
    monkeypatch.setattr(kernel_cache, "compiling", lambda: True)  # a worker of this host holds the compile lock
    answer = client.get("/readyz")
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "warming_up"
    status = client.get(f"/v1/jobs/{job['id']}").json()
    assert status["status"] == "queued" and "compiling the numerical kernels" in status["statusDetail"]
    monkeypatch.setattr(kernel_cache, "compiling", lambda: False)
    assert client.get("/readyz").status_code == 200
    assert client.get(f"/v1/jobs/{job['id']}").json()["statusDetail"] is None
