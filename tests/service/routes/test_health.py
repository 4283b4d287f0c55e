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
